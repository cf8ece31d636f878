"""How good is a model as the coach? The optimiser run over every coaching task, scored as
KernelBench and NVIDIA's DeepSeek-R1 study score it.

    python bench/coach.py --model MODEL [--api-base URL] [--backend sim|gpu] [--rounds 10]
                          [--minutes 15] [--tasks reduce_sum,softmax] [--json out.json]
    python bench/coach.py --scripted [--tasks reduce_sum,softmax]

`--scripted` puts a scripted model behind the real loop instead (a loopback OpenAI-compatible
server, litellm's real HTTP path): per task it replays good, wrong and cheating candidates made from
the task's own kernels, and checks that every verdict is the one the candidate deserves. It prints a
table of candidate, expected, verdict and score, and exits 1 if any verdict is wrong.

Per task: the loop (tutor.coach.optimise) from the task's naive kernel, within the budget. Reported:
compile rate and correct rate over all attempts; fast_p (share of tasks whose best verified kernel
beats the baseline by more than p) for p = 0, 0.5, 1, 1.5, 2 against the naive baseline and, on a GPU
with torch, against the library; geometric-mean speedup of the best correct kernels; rounds and
minutes to the first correct kernel; tokens and cost; and success against budget (a correct kernel,
and a faster one, within 1, 2, 5, 10 and 15 minutes). On the simulator the "speedup" is the verified
ratio of global memory moved (naive / candidate), labelled as such; there is no library column.
No terminal plot library is a dependency, so success against budget is a table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.ai.config import AISettings  # noqa: E402
from tutor.coach.optimise import Budget, TaskTarget, optimise  # noqa: E402

TASKS = ("reduce_sum", "softmax", "layernorm", "matmul", "attention", "attention_causal", "attention_document",
         "attention_alibi")
PS = (0.0, 0.5, 1.0, 1.5, 2.0)
MINUTES = (1, 2, 5, 10, 15)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None)
    parser.add_argument("--scripted", action="store_true", help="a scripted model replays known candidates")
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--backend", choices=("sim", "gpu"), default="sim")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=4000, help="per reply")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per model call")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--json", default=None)
    parser.add_argument("--logs", default=None, help="folder for each task's JSONL log")
    args = parser.parse_args()
    if args.scripted:
        sys.exit(scripted(args.tasks.split(",")))
    if not args.model:
        parser.error("--model is required (or --scripted)")
    settings = AISettings(model=args.model, api_base=args.api_base, timeout=args.timeout, max_tokens=args.max_tokens)
    library_ms = _library_times(args.tasks.split(",")) if args.backend == "gpu" else {}
    rows = []
    for name in args.tasks.split(","):
        target = TaskTarget(name, args.backend)
        log = Path(args.logs) / f"{name}.jsonl" if args.logs else None
        t0 = time.monotonic()
        result = optimise(target, target.baseline_source(), settings,
                          Budget(rounds=args.rounds, wall_s=args.minutes * 60, samples=args.samples), log_path=log)
        row = _row(name, result, library_ms.get(name))
        row["wall_s"] = time.monotonic() - t0
        rows.append(row)
        print(f"{name}: {len(result.attempts)} attempt(s), stop {result.stop_reason}, best "
              f"{row['best_speedup'] if row['best_speedup'] is not None else '-'}", file=sys.stderr, flush=True)
    summary = _summary(rows)
    _print(args, rows, summary)
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "backend": args.backend, "rounds": args.rounds,
                                               "minutes": args.minutes, "rows": rows, "summary": summary},
                                              indent=1))


# -- the scripted model: candidates with known verdicts, made from each task's own kernels --------
def _candidates(name: str) -> list[tuple[str, str, str]]:
    """(label, expected, source): expected "correct" or the failure kinds the verdict must have, exactly."""
    from tutor.coach.tasks import load_task

    task = load_task(name)
    naive, expert = task.source("naive"), task.source("expert")
    head, launch = naive.split("\ndef launch(", 1)
    params = launch.split(")", 1)[0].split(", ")
    first = params[1]
    assert "\ndef " not in launch and "\n@" not in launch, f"{name}: launch must be the naive module's last function"

    def with_kernel(kernel: str, prologue: str = "", epilogue: str = "") -> str:
        signature, body = launch.split("\n", 1)
        return (head + "\n" + kernel + "\n\ndef launch(" + signature + "\n" + prologue + body.rstrip("\n") + "\n"
                + epilogue)

    import numpy as np

    shape = task.scored_shape() or task.largest_shape("sim")
    made = task.module("inputs").make_inputs(np.random.default_rng(0), shape)
    corner = {"x": "[" + ", ".join("0" * made[0].ndim) + "]",
              "out": "[" + ", ".join("0" * len(task.module("inputs").output_shape(shape))) + "]"}

    def bump(array):  # one thread adds 1 to the array's first cell
        return f"@cuda.jit\ndef bump(a):\n    if cuda.grid(1) == 0:\n        a{corner[array]} = a{corner[array]} + 1.0\n"

    touch = f"@cuda.jit\ndef touch(a):\n    a{corner['out']} = a{corner['out']} * 1.0\n"
    return [
        ("host maths on a device array", "runtime_error", with_kernel("", f"    hold = {first} * 1.0\n")),
        ("writes into its input", "input_mutated", with_kernel(bump("x"), epilogue=f"    bump[1, 1]({first})\n")),
        ("skips work past 1,000 elements", "not_finite,runtime_error",
         with_kernel("", f"    if {first}.size > 1000:\n        return\n")),
        ("off by one in out's first cell", "wrong_output", with_kernel(bump("out"), epilogue="    bump[1, 1](out)\n")),
        ("64 threads rewrite out's first", "race", with_kernel(touch, epilogue="    touch[1, 64](out)\n")),
        ("the naive kernel", "correct", naive),
        ("the expert kernel", "correct", expert),
    ]


def scripted(tasks) -> int:
    sys.path.insert(0, str(ROOT / "tests"))
    from loopback_llm import ChatServer

    print(f"{'task':<19} {'candidate':<31} {'expected':<25} {'verdict':<25} {'score':>7} {'right':>5}")
    right = total = 0
    t0 = time.monotonic()
    for name in tasks:
        script = _candidates(name)
        replies = [f"```python\n{src}```\n\n## Why it is faster\n{label}." for label, _, src in script]
        with ChatServer(replies) as server:
            settings = AISettings(model="openai/scripted", api_base=server.url, timeout=60)
            target = TaskTarget(name, "sim")
            result = optimise(target, target.baseline_source(), settings, Budget(rounds=len(script), wall_s=3600))
        for (label, expected, _), attempt in zip(script, result.attempts):
            kinds = sorted({f["kind"] for f in attempt.failures})
            verdict = "correct" if attempt.correct else ",".join(kinds)
            ok = attempt.correct if expected == "correct" else (not attempt.correct and kinds == expected.split(","))
            right, total = right + ok, total + 1
            score = f"{attempt.score:.2f}x" if attempt.score is not None else "-"
            print(f"{name:<19} {label:<31} {expected:<25} {verdict:<25} {score:>7} {'yes' if ok else 'NO':>5}",
                  flush=True)
        missing = len(script) - len(result.attempts)
        total += missing
        if missing:
            print(f"{name:<19} {missing} candidate(s) never judged: the loop stopped ({result.stop_reason})")
    print(f"{right} of {total} verdicts right, {time.monotonic() - t0:.0f} s")
    return 0 if right == total else 1


def _row(name, result, library_ms) -> dict:
    attempts = result.attempts
    with_code = [a for a in attempts if a.code is not None]
    correct = [a for a in attempts if a.correct]
    best = result.best
    first = min(correct, key=lambda a: (a.round, a.at_s or 0)) if correct else None
    faster = [a for a in correct if (a.score or 0) > 1.0]
    row = {"task": name, "attempts": len(attempts), "with_code": len(with_code),
           "compiled": sum(a.compiled for a in with_code), "correct": len(correct),
           "best_speedup": round(best.score, 3) if best and best.score is not None else None,
           "score_kind": best.score_kind if best else None, "best_flagged": bool(best and best.flags),
           "rounds_to_first_correct": first.round if first else None,
           "minutes_to_first_correct": round((first.at_s or 0) / 60, 2) if first else None,
           "minutes_to_first_faster": round(min(a.at_s or 0 for a in faster) / 60, 2) if faster else None,
           "tokens": sum((a.prompt_tokens or 0) + (a.completion_tokens or 0) for a in attempts),
           "cost_usd": sum(a.cost_usd or 0 for a in attempts), "stop_reason": result.stop_reason}
    if library_ms and best and best.timing:
        row["best_over_library"] = round(library_ms / best.timing["ms"], 3)
    return row


def _summary(rows) -> dict:
    n = len(rows)
    attempts = sum(r["with_code"] for r in rows)
    speedups = [r["best_speedup"] for r in rows if r["best_speedup"]]
    out = {"tasks": n,
           "compile_rate": sum(r["compiled"] for r in rows) / attempts if attempts else 0.0,
           "correct_rate": sum(r["correct"] for r in rows) / attempts if attempts else 0.0,
           "tasks_solved": sum(r["correct"] > 0 for r in rows) / n if n else 0.0,
           "fast_p_naive": {str(p): sum((r["best_speedup"] or 0) > p and r["correct"] > 0 for r in rows) / n
                            for p in PS} if n else {},
           "geomean_speedup": math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else None,
           "tokens": sum(r["tokens"] for r in rows), "cost_usd": sum(r["cost_usd"] for r in rows),
           "success_by_minutes": {str(m): {
               "correct": sum(r["minutes_to_first_correct"] is not None and r["minutes_to_first_correct"] <= m
                              for r in rows) / n,
               "faster": sum(r["minutes_to_first_faster"] is not None and r["minutes_to_first_faster"] <= m
                             for r in rows) / n} for m in MINUTES} if n else {}}
    if any("best_over_library" in r for r in rows):
        out["fast_p_library"] = {str(p): sum(r.get("best_over_library", 0) > p for r in rows) / n for p in PS}
    return out


def _print(args, rows, s) -> None:
    kind = "speedup (GPU)" if args.backend == "gpu" else "modelled speedup (sim)"
    print(f"model {args.model} on {args.backend}; budget {args.rounds} rounds / {args.minutes:g} min per task")
    print(f"{'task':<19} {'attempts':>8} {'compiled':>8} {'correct':>7} {'best ' + kind:>22} {'rounds→ok':>9} "
          f"{'min→ok':>7} {'tokens':>8} {'cost $':>8} {'stop':>10}")
    for r in rows:
        best = f"{r['best_speedup']:.2f}x" if r["best_speedup"] is not None else "-"
        print(f"{r['task']:<19} {r['attempts']:>8} {r['compiled']:>8} {r['correct']:>7} {best:>22} "
              f"{r['rounds_to_first_correct'] or '-':>9} {r['minutes_to_first_correct'] or '-':>7} "
              f"{r['tokens']:>8} {r['cost_usd']:>8.4f} {r['stop_reason']:>10}")
    print(f"compile rate {s['compile_rate']:.0%}, correct rate {s['correct_rate']:.0%} (of attempts with code); "
          f"tasks with a correct kernel {s['tasks_solved']:.0%}; geomean best "
          f"{'%.2fx' % s['geomean_speedup'] if s['geomean_speedup'] else '-'}; "
          f"{s['tokens']} tokens, ${s['cost_usd']:.4f}")
    print("fast_p vs naive: " + ", ".join(f"fast_{p} {v:.0%}" for p, v in s["fast_p_naive"].items()))
    if "fast_p_library" in s:
        print("fast_p vs library: " + ", ".join(f"fast_{p} {v:.0%}" for p, v in s["fast_p_library"].items()))
    print("success against budget (share of tasks):")
    print(f"{'minutes':>8} {'correct':>8} {'faster':>8}")
    for m, v in s["success_by_minutes"].items():
        print(f"{m:>8} {v['correct']:>8.0%} {v['faster']:>8.0%}")


def _library_times(tasks) -> dict:
    """torch's time per task at the largest shape (GPU only), timed as bench/kernels.py times it."""
    try:
        import numpy as np
        import torch

        from bench.kernels import _library
        from tutor.engine.process.gpu_timing import Timer
        from tutor.coach.tasks import load_task
        from tutor.engine.gpu import import_cuda
    except ImportError:
        return {}
    cuda = import_cuda()
    timer = Timer(cuda)
    torch.backends.cuda.matmul.allow_tf32 = False
    out = {}
    for name in tasks:
        task = load_task(name)
        inputs = task.module("inputs").make_inputs(np.random.default_rng(0), task.largest_shape("gpu"))
        t_in = [torch.from_numpy(np.ascontiguousarray(x)).cuda() for x in inputs]
        out[name] = timer.time(_library(torch, name, t_in), 20)["ms"]
    return out


if __name__ == "__main__":
    main()
