"""Every verdict names arrays as the code does, whoever launched the kernel.

The puzzle checker hands the simulator the parameter names and the source; the optimiser's runs go
through a module's own launch() (kernel[blocks, threads](...)), which hands it neither. Both must say
`a` and `cache`, never `arg1` or `shared@9`."""

import textwrap

import numpy as np

from tutor.engine.analysis import detect
from tutor.engine.loading.sim_loader import load_module_for_sim
from tutor.engine.sim.launch import records

CANDIDATE = textwrap.dedent("""\
    from numba import cuda, float32

    TPB = 8


    @cuda.jit
    def partial_sums(out, a, n):
        cache = cuda.shared.array(TPB, float32)
        t = cuda.threadIdx.x
        cache[t] = a[t + 1]
        total = cache[(t + 1) % TPB]
        out[t] = total + n


    def launch(out, a):
        partial_sums[1, TPB](out, a, a.shape[0])
    """)


def _verdict_messages(source, filename="candidate.py"):
    """What the verifier's child reports of a candidate: each launch's failures and every detection
    on its trace, as kind and message."""
    module = load_module_for_sim(source, filename)
    out = np.zeros(8, dtype=np.float32)
    a = np.arange(8, dtype=np.float32)
    with records(module.cuda, trace_local=False) as done:
        module.namespace["launch"](out, a)
    found = []
    for trace, failures in done.traces:
        found += [(f["kind"], f["message"]) for f in failures]
        found += [(f.kind, f.message, f.array) for f in detect.find_all(trace, None)]
    return found, done.traces


def test_a_launch_through_the_modules_own_code_names_parameters_and_shared_arrays_as_written():
    found, traces = _verdict_messages(CANDIDATE)
    names = [info.name for info in traces[0][0].arrays]
    assert names[:3] == ["out", "a", "cache"], names
    kinds = {f[0] for f in found}
    assert {"out_of_bounds", "race"} <= kinds, found
    oob = [f for f in found if f[0] == "out_of_bounds"]
    race = [f for f in found if f[0] == "race"]
    assert all(f[2] == "a" and "a[8]" in f[1] for f in oob), oob
    assert all(f[2] == "cache" and "'cache'" in f[1] for f in race), race
    text = " ".join(f[1] for f in found)
    assert "arg" not in text and "shared@" not in text, text


def test_a_kernel_taking_varargs_names_the_rest_by_position():
    source = textwrap.dedent("""\
        from numba import cuda


        @cuda.jit
        def fill(out, *rest):
            out[cuda.threadIdx.x + 4] = 1.0


        def launch(out, a):
            fill[1, 8](out, a)
        """)
    found, traces = _verdict_messages(source)
    assert [info.name for info in traces[0][0].arrays] == ["out", "arg1"]
    assert any(f[0] == "out_of_bounds" and "out[8]" in f[1] for f in found), found


def test_local_arrays_are_named_too():
    source = textwrap.dedent("""\
        from numba import cuda, float32


        @cuda.jit
        def k(out, a):
            acc = cuda.local.array(2, float32)
            t = cuda.threadIdx.x
            acc[t % 3] = a[t]
            out[t] = acc[0]


        def launch(out, a):
            k[1, 8](out, a)
        """)
    found, _ = _verdict_messages(source)
    oob = [f for f in found if f[0] == "out_of_bounds"]
    assert oob and all("'acc'" in f[1] for f in oob), found


def test_a_constant_array_is_named_by_its_assignment():
    # before, every constant array was called `const`
    source = textwrap.dedent("""\
        import numpy as np
        from numba import cuda

        TABLE = np.arange(4, dtype=np.float32)


        @cuda.jit
        def k(out, a):
            table = cuda.const.array_like(TABLE)
            t = cuda.threadIdx.x
            out[t] = table[t] + a[0]


        def launch(out, a):
            k[1, 8](out, a)
        """)
    found, traces = _verdict_messages(source)
    assert "table" in [info.name for info in traces[0][0].arrays]
    oob = [f for f in found if f[0] == "out_of_bounds"]
    assert oob and all("'table'" in f[1] for f in oob), found
