"""Model one attack against its task's naive kernel, and optionally verify it.

    PYTHONPATH=$PWD python tests/coach/model_attacks/score.py TASK FILE [--verify] [--detail]
"""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from modelled_time import Case, modelled  # noqa: E402


def main():
    task, path = sys.argv[1], Path(sys.argv[2])
    src = path.read_text()
    naive = (ROOT / "kernels" / task / "naive.py").read_text()
    t0 = time.time()
    m = modelled(Case(task, path.stem, src))
    n = modelled(Case(task, "naive", naive))
    print(f"{task}/{path.stem}: modelled {m['modelled_us']:.3f} us (bound {m['bound']}, sim_ok {m['sim_ok']}); "
          f"naive {n['modelled_us']:.3f} us; ratio naive/candidate {n['modelled_us'] / m['modelled_us']:.2f} "
          f"[{time.time() - t0:.0f}s]", flush=True)
    if "--verify" in sys.argv:
        from tutor.coach.verify import verify
        t0 = time.time()
        r = verify(task, src, "sim")
        print("verify passed:", r.passed, f"[{time.time() - t0:.0f}s]")
        if not r.passed:
            print(r)


if __name__ == "__main__":
    main()
