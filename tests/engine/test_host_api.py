"""The host API on our simulator answers as numba-cuda on a GPU does: host_api_catalogue.py's every entry
is accepted or refused alike, with the same exception type, on our simulator and (marked gpu) on a
GPU; Numba's own simulator is run too, and where it answers otherwise the catalogue says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from host_api_catalogue import CATALOGUE, COMPILE, OK, HostCall

FILENAME = "host_call.py"


def on_our_simulator(entry: HostCall) -> tuple[str, str]:
    """(outcome, message) as a learner meets it: launch() planned without running a kernel, every
    kernel it launched compiled by numba-cuda's compiler, then run on the simulator."""
    from tutor.engine.loading.compile import compile_launches
    from tutor.engine.loading.sim_loader import load_module_for_sim
    from tutor.engine.sim.devicearray import DeviceArray
    from tutor.engine.sim.launch import records

    module = load_module_for_sim(entry.source, FILENAME)
    launch, cuda = module.namespace["launch"], module.cuda
    try:
        with records(cuda, record_only=True) as planned:
            launch(DeviceArray(np.zeros(8, np.float32), "out"))
        failures = compile_launches(entry.source, FILENAME, list(dict.fromkeys(planned.launches)))
        if failures:
            return COMPILE, failures[0]["message"]
        with records(cuda) as done:
            launch(DeviceArray(np.zeros(8, np.float32), "out"))
    except Exception as e:  # noqa: BLE001 (the outcome under test)
        return type(e).__name__, str(e)
    faults = [f for _, failed in done.traces for f in failed]
    if faults:
        return "fault", str(faults[0])
    return OK, ""


# Run in a child: NUMBA_ENABLE_CUDASIM is read once, when numba.cuda is first imported.
NUMBA_SIM_CHILD = r"""
import json, sys
import numpy as np
from numba import cuda
answers = {}
for name, source in json.load(sys.stdin).items():
    namespace = {"__name__": "host_call"}
    try:
        exec(compile(source, "host_call.py", "exec"), namespace)
        namespace["launch"](cuda.to_device(np.zeros(8, np.float32)))
        answers[name] = ["ok", ""]
    except Exception as e:
        answers[name] = [type(e).__name__, str(e)[:300]]
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def numba_simulator() -> dict:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([sys.executable, "-c", NUMBA_SIM_CHILD], input=json.dumps({e.name: e.source for e in CATALOGUE}),
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("entry", CATALOGUE, ids=repr)
def test_our_simulator_accepts_and_refuses_as_a_gpu_does(entry):
    outcome, message = on_our_simulator(entry)
    if entry.tutor:  # a host copy: refused on purpose, saying why
        assert outcome == "TypeError" and "host copy" in message, (outcome, message)
        return
    assert outcome == entry.gpu, message
    if entry.gpu not in (OK, COMPILE):
        assert message.strip(), "a refusal says what is wrong"


@pytest.mark.parametrize("entry", CATALOGUE, ids=repr)
def test_numba_simulator_differs_from_a_gpu_only_where_the_catalogue_says(numba_simulator, entry):
    outcome, message = numba_simulator[entry.name]
    expected = entry.numba_sim or (OK if entry.gpu == COMPILE else entry.gpu)
    assert outcome == expected, f"Numba's simulator: {outcome}: {message}"


@pytest.mark.parametrize("entry", [e for e in CATALOGUE if "\ndef k(" in e.source], ids=repr)
def test_the_kernel_entries_gpu_answers_are_numba_cudas_compilers(entry):
    """A kernel's own arrays are judged by numba-cuda's compiler, which needs no GPU: what the
    catalogue says a GPU does with them is what that compiler does."""
    from tutor.engine.loading.compile import nvvm_missing

    if nvvm_missing():
        pytest.skip(nvvm_missing())
    outcome, message = _compiled(entry)
    assert outcome == (COMPILE if entry.gpu == COMPILE else OK), message
    assert entry.gist.lower() in message.lower()


def _compiled(entry: HostCall) -> tuple[str, str]:
    import numba
    from numba import cuda

    from tutor.engine.loading.compile import CC, no_device_needed

    namespace = {"__name__": "host_call"}
    exec(compile(entry.source, FILENAME, "exec"), namespace)
    args = (numba.float32[::1], numba.int64)[:namespace["k"].py_func.__code__.co_argcount]
    try:
        with no_device_needed():
            cuda.compile_ptx(namespace["k"].py_func, args, cc=CC)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return OK, ""


def test_the_learners_usual_slips_read_as_what_to_write_instead():
    """The refusals a learner meets most name the fix, not only numpy's or Numba's words."""
    by_name = {e.name: e for e in CATALOGUE}
    _, numba_type = on_our_simulator(by_name["dtype_numba_float32"])
    assert "Cannot interpret 'float32' as a data type" in numba_type and "np.float32" in numba_type
    _, division = on_our_simulator(by_name["launch_true_division_blocks"])
    assert "griddim must be a sequence of integers" in division and "//" in division
    _, shape = on_our_simulator(by_name["shape_true_division"])
    assert "//" in shape
    _, threads = on_our_simulator(by_name["launch_too_many_threads"])
    assert "1024" in threads


@pytest.mark.gpu
@pytest.mark.parametrize("entry", CATALOGUE, ids=repr)
def test_a_gpu_answers_as_the_catalogue_says(entry):
    """On the GPU machine (pytest -m gpu): the catalogue's answers are the GPU's."""
    from numba import cuda

    namespace = {"__name__": "host_call"}
    exec(compile(entry.source, FILENAME, "exec"), namespace)
    try:
        namespace["launch"](cuda.to_device(np.zeros(8, np.float32)))
        cuda.synchronize()
    except Exception as e:  # noqa: BLE001 (the outcome under test)
        names = [c.__name__ for c in type(e).__mro__]
        assert entry.gpu in names, f"{type(e).__name__}: {e}"
        assert entry.gist.lower() in str(e).lower(), str(e)
        return
    if entry.older_accept and entry.gpu != OK:
        pytest.skip(f"this install accepts it: {entry.older_accept}")
    assert entry.gpu == OK, "the GPU accepted it"


def test_a_kernel_writing_into_a_transposed_device_array_leaves_the_original_as_on_a_gpu():
    """numba-cuda's .T of a 2-D device array is a new array (seen on an H100): the original keeps its zeros."""
    from tutor.engine.loading.sim_loader import load_module_for_sim
    from tutor.engine.sim.devicearray import DeviceArray
    from tutor.engine.sim.launch import records

    entry = next(e for e in CATALOGUE if e.name == "transpose_2d_is_a_copy")
    module = load_module_for_sim(entry.source, FILENAME)
    out = np.zeros(8, np.float32)
    with records(module.cuda) as done:
        module.namespace["launch"](DeviceArray(out, "out"))
    assert len(done.traces) == 1 and not out.any()
