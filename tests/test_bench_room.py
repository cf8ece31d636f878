"""bench/room.py, the room-on-one-GPU load test, in small: two simulator learners for four seconds
(the table prints, every check has its verdict, the wrong kernel is caught), its edits of every
classic reference, and (e2e) the GPU queue's path with Numba's simulator and an endless kernel."""

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOM = ROOT / "bench" / "room.py"


def _room_module():
    spec = importlib.util.spec_from_file_location("bench_room", ROOM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(tmp_path, *args, timeout=120):
    out = tmp_path / "room.json"
    proc = subprocess.run([sys.executable, str(ROOM), *args, "--json", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    return proc, json.loads(out.read_text()) if out.exists() else None


def test_edits_of_every_classic_reference_are_fresh_python(catalog):
    room = _room_module()
    for puzzle in [p for p in catalog.ordered() if p.track == "classic"]:
        sources = {kind: room.edit(puzzle.reference, 4242, kind) for kind in ("good", "wrong", "endless")}
        for kind, source in sources.items():
            ast.parse(source)
            assert "_room_edit = 4242" in source, (puzzle.id, kind)
        assert room.edit(puzzle.reference, 4243) != sources["good"]  # a new number is new code to compile
        assert ") + 1" in sources["wrong"] and "while _room_spin >= 0:" in sources["endless"], puzzle.id


def test_a_small_room_on_the_simulator(tmp_path):
    proc, data = _run(tmp_path, "--backend", "sim", "--n", "2", "--duration", "4", "--period", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| N | checks" in proc.stdout and "\n| 2 | " in proc.stdout
    assert "goal N=2:" in proc.stdout
    (run,) = data["runs"]
    assert [x["done"] for x in run["learners"]] == [True, True]
    assert all(x["heavy"] == [] for x in run["learners"])  # no textual, no litellm: the GPU server has neither
    checks = [r for r in run["records"] if not r["warmup"]]
    assert len(checks) >= 4
    assert all(not r["lost"] and r["passed"] is not None and r["right"] for r in checks)
    assert {r["puzzle"] for r in checks} >= {"map", "zip"}
    wrong = [r for r in checks if r["kind"] == "wrong"]
    assert wrong and all(r["learner"] == 1 and not r["passed"] and "wrong_output" in r["kinds"] for r in wrong)
    s = run["summary"]
    assert s["lost"] == 0 and s["wrong"] == 0 and s["detected"]["wrong"] == len(wrong)
    assert s["checks"] == len(checks) and s["wait"] is None  # the simulator never queues


@pytest.mark.e2e
def test_the_queue_and_an_endless_kernel_with_numbas_simulator(tmp_path):
    proc, data = _run(tmp_path, "--backend", "numba-sim", "--queue", "--n", "4", "--duration", "8",
                      "--period", "1", timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    s = data["runs"][0]["summary"]
    assert s["lost"] == 0 and s["wrong"] == 0 and s["wait"] is not None
    (endless,) = s["endless"]
    assert endless["right"] and endless["learner"] == 3
    assert s["endless_limit_s"] <= endless["held_s"] <= s["endless_limit_s"] + 1
    assert "turn held max" in proc.stdout
