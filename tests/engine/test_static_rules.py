"""The static screen rejects the known harness cheats and accepts honest kernels."""

import textwrap
from pathlib import Path

import pytest

from tutor.engine.loading.static_rules import (MAX_DEPTH, MAX_SOURCE_CHARS, RULES, RuleFinding, check_puzzle_module,
                                      check_task_module)


def rules(source: str) -> set[str]:
    return {f.rule for f in check_task_module(textwrap.dedent(source))}


HEADER = """\
import math
import numba
import numpy as np
from numba import cuda

TPB = 256
"""

KERNEL = """
@cuda.jit
def kern(out, x, n):
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(out, 0, x[i])
"""

LAUNCH = """
def launch(out, x):
    n = x.shape[0]
    blocks = (n + TPB - 1) // TPB
    kern[blocks, TPB](out, x, n)
"""


def candidate(*, header: str = HEADER, kernel: str = KERNEL, launch: str = LAUNCH, extra: str = "") -> str:
    return header + extra + kernel + launch


# ---------------------------------------------------------------------------
# Honest candidates


NAIVE_REDUCE_SUM = candidate()

TREE_REDUCTION = '''\
"""Two-pass shared-memory tree reduction."""
import numba
from numba import cuda, float32

TPB = 256


@cuda.jit
def partial_sums(partial, x, n):
    cache = cuda.shared.array((TPB,), numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = float32(0.0)
    while i < n:
        acc += x[i]
        i += stride
    cache[tid] = acc
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if tid < s:
            cache[tid] += cache[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = cache[0]


@cuda.jit
def finish(out, partial, m):
    cache = cuda.shared.array((TPB,), numba.float32)
    tid = cuda.threadIdx.x
    acc = float32(0.0)
    for j in range(tid, m, TPB):
        acc += partial[j]
    cache[tid] = acc
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if tid < s:
            cache[tid] += cache[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[0] = cache[0]


def launch(out, x):
    """Reduce x into out[0]."""
    n = x.shape[0]
    blocks = min((n + TPB - 1) // TPB, 1024)
    partial = cuda.device_array(blocks, dtype=numba.float32)
    partial_sums[blocks, TPB](partial, x, n)
    finish[1, TPB](out, partial, blocks)
'''

ROW_SOFTMAX = '''\
import math
import numba
import numpy as np
from numba import cuda

WARP = 32
FULL_MASK = 0xFFFFFFFF
NEG_INF = -math.inf
F32 = np.float32


@cuda.jit(device=True, inline=True)
def warp_max(v):
    off = WARP // 2
    while off > 0:
        v = max(v, cuda.shfl_down_sync(FULL_MASK, v, off))
        off //= 2
    return cuda.shfl_sync(FULL_MASK, v, 0)


@cuda.jit(device=True)
def warp_sum(v):
    off = WARP // 2
    while off > 0:
        v += cuda.shfl_xor_sync(FULL_MASK, v, off)
        off //= 2
    return v


@cuda.jit(fastmath=True)
def softmax_rows(out, x, rows, cols):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    if row >= rows:
        return
    m = numba.float32(NEG_INF)
    for j in range(lane, cols, WARP):
        m = max(m, x[row, j])
    m = warp_max(m)
    s = numba.float32(0.0)
    for j in range(lane, cols, WARP):
        e = math.exp(x[row, j] - m)
        out[row, j] = e
        s += e
    s = warp_sum(s)
    inv = np.float32(1.0) / s
    for j in range(lane, cols, WARP):
        out[row, j] *= inv


def launch(out, *inputs):
    x = inputs[0]
    rows, cols = x.shape
    if rows == 0:
        return
    softmax_rows[rows, WARP](out, x, rows, cols)
    return None
'''

TILED_MATMUL = '''\
import math
from numba import cuda, float32

TILE = 16


@cuda.jit("void(float32[:, :], float32[:, :], float32[:, :])")
def matmul(c, a, b):
    sa = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    sb = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = a.shape[1]
    acc = float32(0.0)
    tmp = cuda.local.array(2, float32)
    tmp[0] = 0
    for t in range(int(math.ceil(n / TILE))):
        sa[ty, tx] = 0
        sb[ty, tx] = 0
        if y < a.shape[0] and t * TILE + tx < n:
            sa[ty, tx] = a[y, t * TILE + tx]
        if x < b.shape[1] and t * TILE + ty < n:
            sb[ty, tx] = b[t * TILE + ty, x]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if y < c.shape[0] and x < c.shape[1]:
        c[y, x] = acc


def launch(c, a, b):
    m, n = c.shape
    grid = (math.ceil(n / TILE), math.ceil(m / TILE))
    block = (TILE, TILE)
    matmul[grid, block](c, a, b)
'''

MULTI_PASS = '''\
from numba import cuda
import numba

TPB = 128


@cuda.jit
def step(buf, n, stride):
    i = cuda.grid(1)
    if i + stride < n and i % (2 * stride) == 0:
        buf[i] += buf[i + stride]


@cuda.jit
def copy_in(buf, x, n):
    i = cuda.grid(1)
    if i < n:
        buf[i] = x[i]


@cuda.jit
def copy_out(out, buf):
    if cuda.grid(1) == 0:
        out[0] = buf[0]


def launch(out, x):
    n = len(x)
    buf = cuda.device_array_like(x)
    blocks = max(1, (n + TPB - 1) // TPB)
    copy_in[blocks, TPB](buf, x, n)
    passes = int(math.ceil(math.log2(max(n, 2)))) if n > 1 else 0
    for p in range(passes):
        step[blocks, TPB](buf, n, 1 << p)
    copy_out[1, 1](out, buf)
'''.replace("import numba\n", "import numba\nimport math\n")


@pytest.mark.parametrize(
    "source",
    [NAIVE_REDUCE_SUM, TREE_REDUCTION, ROW_SOFTMAX, TILED_MATMUL, MULTI_PASS],
    ids=["naive-atomic-sum", "tree-reduction", "row-softmax-shuffles", "tiled-matmul", "multi-pass"],
)
def test_honest_candidates_pass(source):
    findings = check_task_module(source)
    assert findings == [], "\n".join(map(str, findings))


def test_honest_candidates_compile_as_python():
    for src in (NAIVE_REDUCE_SUM, TREE_REDUCTION, ROW_SOFTMAX, TILED_MATMUL, MULTI_PASS):
        compile(src, "candidate.py", "exec")


# ---------------------------------------------------------------------------
# Cheats

CHEATS = {
    "import-os": (candidate(extra="import os\n"), "import"),
    "import-time": (candidate(extra="import time\n"), "import"),
    "from-threading": (candidate(extra="from threading import Thread\n"), "import"),
    "import-ctypes-as": (candidate(extra="import ctypes as C\n"), "import"),
    "import-in-launch": (candidate(launch=LAUNCH.replace("    n = ", "    import subprocess\n    n = ")), "import"),
    "try-fallback": (candidate(launch="""
def launch(out, x):
    n = x.shape[0]
    try:
        kern[(n + TPB - 1) // TPB, TPB](out, x, n)
    except Exception:
        out[0] = 0
"""), "try"),
    "patch-allclose": (candidate(extra="np.allclose = lambda *a, **k: True\n"), "attr-assign"),
    "patch-cuda-event": (candidate(extra="numba.cuda.event = None\n"), "attr-assign"),
    "patch-in-launch": (candidate(launch=LAUNCH.replace("    n = ", "    np.testing = 0\n    n = ")), "attr-assign"),
    "module-cache-list": (candidate(extra="_CACHE = {}\n", launch="""
def launch(out, x):
    key = x.device_ctypes_pointer.value
    n = x.shape[0]
    kern[(n + TPB - 1) // TPB, TPB](out, x, n)
"""), "module-state"),
    "module-cache-list-2": (candidate(extra="_SEEN = []\n"), "module-state"),
    "module-array": (candidate(extra="BUF = np.zeros(1024, dtype=np.float32)\n"), "module-state"),
    "copy-to-host": (candidate(launch=LAUNCH + "    host = out.copy_to_host()\n"), "host-copy"),
    "to-device": (candidate(launch="""
def launch(out, x):
    n = x.shape[0]
    tmp = cuda.to_device(np.zeros(1, dtype=np.float32))
    kern[(n + TPB - 1) // TPB, TPB](tmp, x, n)
"""), "host-copy"),
    "numpy-sum": (candidate(launch="""
def launch(out, x):
    total = np.sum(x)
"""), "host-numpy"),
    "second-stream-call": (candidate(launch="""
def launch(out, x):
    n = x.shape[0]
    s = cuda.stream()
    kern[(n + TPB - 1) // TPB, TPB](out, x, n)
"""), "stream"),
    "launch-on-stream": (candidate(launch="""
def launch(out, x, stream):
    n = x.shape[0]
    kern[(n + TPB - 1) // TPB, TPB, stream](out, x, n)
"""), "stream"),
    "dynamic-shared-on-a-stream": (candidate(launch=LAUNCH.replace("kern[blocks, TPB]", "kern[blocks, TPB, 1, 1024]")),
                                   "stream"),
    "synchronize": (candidate(launch=LAUNCH + "    cuda.synchronize()\n"), "sync"),
    "event": (candidate(launch=LAUNCH + "    e = cuda.event()\n"), "event"),
    "print-in-launch": (candidate(launch=LAUNCH + "    print(n)\n"), "print"),
    "float16-kernel": (candidate(kernel="""
@cuda.jit
def kern(out, x, n):
    i = cuda.grid(1)
    if i < n:
        v = numba.float16(x[i])
        cuda.atomic.add(out, 0, numba.float32(v))
"""), "float16"),
    "fp16-intrinsics": (candidate(kernel="""
@cuda.jit
def kern(out, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = cuda.fp16.hmul(x[i], x[i])
"""), "float16"),
    "float16-scratch": (candidate(launch=LAUNCH + "    tmp = cuda.device_array(n, dtype=np.float16)\n"), "float16"),
    "float16-signature": (candidate(kernel=KERNEL.replace("@cuda.jit\n", "@cuda.jit('void(float16[:], float16[:], int32)')\n")), "float16"),
    "exec": (candidate(extra="exec('import os')\n"), "builtin"),
    "eval-in-launch": (candidate(launch=LAUNCH + "    eval('1')\n"), "builtin"),
    "dunder-import": (candidate(extra="T = __import__('time')\n"), "builtin"),
    "getattr": (candidate(launch=LAUNCH + "    getattr(np, 'allclose')\n"), "builtin"),
    "setattr": (candidate(launch=LAUNCH + "    setattr(np, 'allclose', kern)\n"), "builtin"),
    "dunder-dict": (candidate(launch=LAUNCH + "    d = np.__dict__\n"), "dunder"),
    "class": (candidate(extra="class Cache:\n    pass\n"), "class"),
    "host-write": (candidate(launch=LAUNCH + "    out[0] = 42.0\n"), "host-write"),
    "host-read": (candidate(launch=LAUNCH + "    v = x[0]\n"), "host-read"),
    "global-state": (candidate(extra="CALLS = 0\n", launch=LAUNCH + "    global CALLS\n    CALLS += 1\n"), "global"),
    "with": (candidate(launch="def launch(out, x):\n    with cuda.defer_cleanup():\n        pass\n"), "with"),
    "return-value": (candidate(launch=LAUNCH + "    return out\n"), "launch-return"),
    "second-host-function": (candidate(extra="def helper(x):\n    return x\n"), "host-function"),
    "no-launch": (candidate(launch=""), "launch-missing"),
    "two-launches": (candidate(launch=LAUNCH + LAUNCH), "launch-duplicate"),
    "decorated-launch": (candidate(launch="\n@cuda.jit\n" + LAUNCH.lstrip()), "launch-decorated"),
    "launch-no-params": (candidate(launch="def launch():\n    pass\n"), "launch-signature"),
    "mutable-default": (candidate(launch=LAUNCH.replace("def launch(out, x):", "def launch(out, x, _memo=[]):")), "default-arg"),
    "numpy-in-kernel": (candidate(kernel=KERNEL.replace("x[i])", "np.sum(x))")), "kernel-numpy"),
    "host-api-in-kernel": (candidate(kernel=KERNEL.replace("        cuda.atomic", "        t = cuda.to_device(x)\n        cuda.atomic")), "kernel-host-api"),
    "print-in-kernel": (candidate(kernel=KERNEL.replace("        cuda.atomic", "        print(i)\n        cuda.atomic")), "print"),
    "module-level-code": (candidate(extra="if True:\n    TPB = 128\n"), "module-code"),
    "non-cuda-decorator": (candidate(kernel=KERNEL.replace("@cuda.jit", "@numba.njit")), "decorator"),
    "jit-link": (candidate(kernel=KERNEL.replace("@cuda.jit", "@cuda.jit(link=['cheat.cu'])")), "decorator"),
    "driver-internals": (candidate(extra="from numba.cuda.cudadrv import driver\n"), "internals"),
    "unknown-call": (candidate(launch=LAUNCH + "    x.reshape(n)\n"), "launch-call"),
    "kernel-arg-not-kernel": (candidate(launch=LAUNCH.replace("kern[blocks", "np.add[blocks")), "launch-call"),
    "lambda-patch-var": (candidate(extra="ALL = lambda *a: True\n"), "lambda"),
    "generator-launch": (candidate(launch=LAUNCH + "    yield\n"), "yield"),
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheat_rejected_with_rule(name):
    source, rule = CHEATS[name]
    findings = check_task_module(source)
    got = {f.rule for f in findings}
    assert rule in got, f"{name}: expected {rule}, got {got}\n" + "\n".join(map(str, findings))
    for f in findings:
        assert f.kind == "static"
        assert f.rule in RULES
        assert f.message.startswith(f"line {f.line}:")
        assert f.fix, f
        assert 1 <= f.line <= source.count("\n") + 1


def test_messages_name_the_line_and_say_what_to_do():
    source = candidate(launch=LAUNCH + "    host = out.copy_to_host()\n")
    [finding] = check_task_module(source)
    line_no = source.splitlines().index("    host = out.copy_to_host()") + 1
    assert isinstance(finding, RuleFinding)
    assert finding.rule == "host-copy"
    assert finding.line == line_no
    assert f"line {line_no}" in finding.message
    assert "copy_to_host" in finding.message
    text = str(finding)
    assert text.startswith(f"candidate.py:{line_no}:")
    assert "Fix:" in text and "device" in finding.fix


def test_monkeypatch_message_points_at_patched_name():
    source = candidate(extra="np.allclose = lambda *a, **k: True\n")
    [patch] = [f for f in check_task_module(source) if f.rule == "attr-assign"]
    assert "np.allclose" in patch.message
    assert patch.line == source.splitlines().index("np.allclose = lambda *a, **k: True") + 1


def test_syntax_error_is_a_finding():
    [f] = check_task_module("def launch(out:\n")
    assert f.rule == "syntax" and f.kind == "static"


def test_filename_is_carried():
    [f] = check_task_module(candidate(extra="import os\n"), filename="coach_7.py")
    assert str(f).startswith("coach_7.py:")


def test_screen_never_executes_source(tmp_path):
    marker = tmp_path / "ran"
    source = candidate(extra=f"open({str(marker)!r}, 'w').write('x')\n")
    assert "builtin" in rules(source)
    assert not marker.exists()


def test_allowed_kernel_idioms_are_not_flagged():
    source = HEADER + '''
@cuda.jit(device=True)
def sq(v):
    return v * v


@cuda.jit
def kern(out, x, n):
    sh = cuda.shared.array((TPB,), numba.float32)
    loc = cuda.local.array(4, dtype=numba.float32)
    i, j = cuda.grid(2)
    lane = cuda.laneid
    loc[0] = math.sqrt(abs(x[i])) + sq(np.float32(2.0)) + numba.int32(lane)
    sh[cuda.threadIdx.x] = loc[0]
    cuda.syncthreads()
    v = cuda.shfl_down_sync(0xFFFFFFFF, sh[0], 1)
    old = cuda.atomic.max(out, 0, v)
    cuda.atomic.cas(out, 1, old, v)
    out[2] = math.pi * np.pi


def launch(out, x):
    n = x.size
    kern[(n + TPB - 1) // TPB, TPB](out, x, n)
'''
    assert check_task_module(source) == []


# ---------------------------------------------------------------------------
# Attacks that escaped the deny-list screen of 42f2d21. Each ran (or crashed the screen) through
# `gpu-tutor verify softmax FILE --backend sim` on that commit; now each is rejected statically
# and nothing of it runs.

KERNELS_DIR = Path(__file__).resolve().parents[2] / "kernels"
SOFTMAX_NAIVE = KERNELS_DIR / "softmax" / "naive.py"


def softmax_with(marker, *, header="", extra="", kernel_line="", signature=None, annotation=None):
    """The naive softmax candidate with an attack spliced in; `marker` is what the attack touches."""
    src = SOFTMAX_NAIVE.read_text().replace("from numba import cuda\n", "import numpy as np\nfrom numba import cuda, float32\n" + header, 1)
    boom = f'np.ctypeslib.ctypes.CDLL(None).system(b"touch {marker}")'
    src = src.replace("TPB = 128\n", "TPB = 128\n" + extra.format(boom=boom), 1)
    if kernel_line:
        src = src.replace("    r = cuda.grid(1)\n", kernel_line.format(boom=boom) + "    r = cuda.grid(1)\n", 1)
    if signature:
        src = src.replace("@cuda.jit\n", f"@cuda.jit({signature.format(boom=boom)})\n", 1)
    if annotation:
        src = src.replace("def softmax_rows(out,", f"def softmax_rows(out: {annotation.format(boom=boom)},", 1)
    return src


def verify_static(source):
    """Through the real verifier: rejected before any child starts, with only static failures."""
    from tutor.coach.verify import verify

    verdict = verify("softmax", source, "sim", timeout=60)
    assert not verdict.passed
    assert {f.kind for f in verdict.failures} == {"static"}, verdict.failures
    return {f.rule for f in verdict.failures}


def test_a_module_level_type_subscript_with_a_call_in_its_slice_is_rejected_and_never_runs(tmp_path):
    # 42f2d21 read `float32[<anything>:]` as a type: the marker was created, then "CORRECT"
    marker = tmp_path / "ran"
    source = softmax_with(marker, extra="X = float32[{boom}:]\n")
    assert verify_static(source) == {"module-state"}
    assert not marker.exists()


def test_a_decorator_signature_with_a_call_in_its_slice_is_rejected_and_never_runs(tmp_path):
    marker = tmp_path / "ran"
    source = softmax_with(marker, signature="float32[{boom}:]")
    assert verify_static(source) == {"decorator"}
    assert not marker.exists()


def test_a_parameter_annotation_that_calls_something_is_rejected(tmp_path):
    # accepted by 42f2d21's screen (it ran no code only because the loader happens to compile with
    # postponed annotations); annotations are evaluated at import, so the grammar allows types only
    marker = tmp_path / "ran"
    source = softmax_with(marker, annotation="float32[{boom}:]")
    assert verify_static(source) == {"annotation"}
    assert not marker.exists()


def test_a_module_bound_to_a_kernel_local_is_rejected_and_never_runs(tmp_path):
    # `c = np.ctypeslib.ctypes; c.CDLL(None).system(...)` in a kernel: 42f2d21 checked calls by their
    # import path only, so the alias hid it; on the simulator the kernel ran and created the marker
    marker = tmp_path / "ran"
    source = softmax_with(marker, kernel_line=f"    c = np.ctypeslib.ctypes\n    c.CDLL(None).system(b'touch {marker}')\n")
    assert {"module-ref", "kernel-call"} <= verify_static(source)
    assert not marker.exists()


def test_attribute_stores_on_kernel_locals_are_rejected():
    # `q = cuda; q.jit = 1` inside a kernel patched the harness's cuda object and 42f2d21 said CORRECT
    source = softmax_with("unused", kernel_line="    q = cuda\n    q.jit = 1\n")
    assert {"module-ref", "attr-assign"} <= verify_static(source)
    assert "attr-assign" in rules(candidate(kernel=KERNEL.replace("        cuda.atomic", "        x.flags = 0\n        cuda.atomic")))


def test_a_kernel_reaching_the_host_through_attributes_of_its_values_is_rejected():
    # the verdict forger (see tests/coach/test_verify.py) got `os` from a generator's frame
    kernel = KERNEL.replace("        cuda.atomic", "        g = (k for k in range(1))\n"
                            "        o = g.gi_frame.f_builtins\n        cuda.atomic")
    assert "kernel-attr" in rules(candidate(kernel=kernel))
    assert "private" in rules(candidate(kernel=KERNEL.replace("x[i])", "x._data[i])")))


def test_a_module_passed_from_launch_to_a_kernel_is_rejected():
    source = candidate(launch=LAUNCH.replace("(out, x, n)", "(out, np, n)"))
    assert "launch-expr" in rules(source)


@pytest.mark.parametrize("where", ["kernel", "launch", "module"])
def test_a_1200_term_sum_is_screened_without_recursion(where):
    # 42f2d21 raised RecursionError (a traceback from `verify`, the optimiser died) on this
    terms = "+".join(["x[i]"] * 1200) if where == "kernel" else "+".join(["n"] * 1200)
    if where == "kernel":
        source = candidate(kernel=KERNEL.replace("x[i])", f"{terms})"))
    elif where == "launch":
        source = candidate(launch=LAUNCH.replace("    kern[", f"    total = {terms}\n    kern["))
    else:
        source = candidate(extra="N_TERMS = " + "+".join(["1"] * 1200) + "\n")
    assert check_task_module(source) == []  # a long sum is legitimate


# Any input at all: a finding with a reason, never an exception.
KERNEL_HEAD = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
PATHOLOGICAL = {
    "sum-of-20000": KERNEL_HEAD + "    out[i] = " + "+".join(["a[i]"] * 20000) + "\n",
    "unary-chain": KERNEL_HEAD + "    out[i] = " + "-" * 5000 + "1\n",
    "not-chain": KERNEL_HEAD + "    out[i] = " + "not " * 3000 + "a[i]\n",
    "attribute-chain": KERNEL_HEAD + "    out[i] = a" + ".b" * 3000 + "\n",
    "call-chain": KERNEL_HEAD + "    out[i] = a" + "()" * 3000 + "\n",
    "subscript-chain": KERNEL_HEAD + "    out[i] = a" + "[0]" * 3000 + "\n",
    "nested-lists": KERNEL_HEAD + "    out[i] = " + "[" * 150 + "]" * 150 + "\n",
    "nested-lambdas": KERNEL_HEAD + "    f = " + "lambda: " * 500 + "1\n",
    "nested-ifexp": KERNEL_HEAD + "    out[i] = " + " if a[i] else ".join(["1"] * 500) + "\n",
    "too-many-chars": "TPB = 1\n" * 30000,
    "too-many-nodes": "X = (" + ",".join(["1"] * 60000) + ")\n",
    "nul-byte": "TPB = 1\x00\n",
    "lone-surrogate": "S = '\ud800'\n",
    "bytes": b"TPB = 1\n",
    "none": None,
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
@pytest.mark.parametrize("entry", [check_task_module, check_puzzle_module], ids=["task", "puzzle"])
def test_pathological_input_is_a_finding_with_a_reason_never_an_exception(name, entry):
    findings = entry(PATHOLOGICAL[name])
    assert findings and all(isinstance(f, RuleFinding) and f.rule in RULES for f in findings)
    assert all(f.message.startswith(f"line {f.line}:") and f.fix for f in findings)


def test_depth_and_size_limits_reject_before_walking():
    deep = KERNEL_HEAD + "    out[i] = " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    [f] = check_puzzle_module(deep)
    assert f.rule == "too-deep" and f.line == 7 and str(MAX_DEPTH) in f.message
    [f] = check_task_module("x" * (MAX_SOURCE_CHARS + 1))
    assert f.rule == "too-large" and f"{MAX_SOURCE_CHARS:,}" in f.message


def test_a_screen_that_trips_over_a_candidate_rejects_it_instead_of_raising(monkeypatch):
    import tutor.engine.loading.static_rules as static_rules

    def broken(self):
        raise KeyError("surprise")

    monkeypatch.setattr(static_rules._Screen, "run", broken)
    [f] = check_task_module(NAIVE_REDUCE_SUM)
    assert f.rule == "unreadable" and "the screen could not read this candidate: KeyError" in f.message


# ---------------------------------------------------------------------------
# The module-level grammar (an allow-list)

MODULE_LEVEL_REJECTED = {
    "call": ("print('hi')\n", "module-code"),
    "os-system": ("np.ctypeslib.ctypes.CDLL(None).system(b'true')\n", "module-code"),
    "comprehension": ("[k for k in range(3)]\n", "module-code"),
    "walrus": ("(W := 3)\n", "module-code"),
    "delete": ("del TPB\n", "module-code"),
    "for-loop": ("for k in range(3):\n    pass\n", "module-code"),
    "assert": ("assert TPB\n", "module-code"),
    "subscript-with-call": ("X = numba.float32[len('abc'):]\n", "module-state"),
    "subscript-with-start": ("X = numba.float32[1:]\n", "module-state"),
    "index-not-slice": ("X = numba.float32[TPB]\n", "module-state"),
    "signature-with-call": ("SIG = numba.void(numba.float32[print():])\n", "module-state"),
    "cast-of-a-call": ("X = np.float32(len('abc'))\n", "module-state"),
    "fstring": ("X = f'{TPB}'\n", "module-state"),
    "tower-of-powers": ("X = 10 ** 10 ** 10\n", "module-state"),
    "huge-string": ("X = 'a' * 10 ** 9\n", "module-state"),
    "huge-shift": ("X = 1 << 100000000\n", "module-state"),
    "unknown-name": ("X = SOMETHING\n", "module-state"),
    "rebinds-import": ("np = 3\n", "module-state"),
    "starred-target": ("*X, = (1, 2)\n", "module-state"),
    "annotation-call": ("X: print() = 1\n", "annotation"),
    "decorator-option-call": ("", "decorator"),
}


@pytest.mark.parametrize("name", sorted(MODULE_LEVEL_REJECTED))
def test_module_level_code_outside_the_grammar_is_rejected_naming_the_line(name):
    extra, rule = MODULE_LEVEL_REJECTED[name]
    kernel = KERNEL.replace("@cuda.jit\n", "@cuda.jit(fastmath=bool(1))\n") if name == "decorator-option-call" else KERNEL
    source = candidate(extra=extra, kernel=kernel)
    findings = [f for f in check_task_module(source) if f.rule == rule]
    assert findings, f"{name}: {[str(f) for f in check_task_module(source)]}"
    line = HEADER.count("\n") + 1 if extra else source.splitlines().index("@cuda.jit(fastmath=bool(1))") + 1
    assert findings[0].line == line and findings[0].message.startswith(f"line {line}:")
    if rule == "module-code":
        assert "imports of numba/math/numpy" in findings[0].fix and "launch()" in findings[0].fix


MODULE_LEVEL_ALLOWED = '''\
"""Constants and types of every allowed shape."""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, int32, void

TPB = 256
HALF = TPB // 2
EPS = 1e-5
NEG_INF = -math.inf
BIG = -3e38
PAIR = (1, 2)
ROWS, COLS = 4, 8
CELLS = ROWS * COLS + (1 << 4) - 2 ** 3
NAME = "softmax"
ON = True
NOTHING = None
F32 = np.float32
ONE = np.float32(1.0)
ROW = float32[:, ::1]
SIG = void(float32[:], float32[::1], int32)
TYPED: int = 3


@cuda.jit(device=True, inline=True)
def twice(v: float32) -> float32:
    return v * 2


@cuda.jit(SIG)
def kern(out, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = twice(x[i]) + F32(ONE) + CELLS


@cuda.jit("void(float32[:], float32[:], int32)", fastmath=True)
def kern2(out, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i]


@cuda.jit(void(float32[:], float32[:], int32))
def kern3(out, x, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i]


def launch(out, x):
    n = x.shape[0]
    kern[(n + TPB - 1) // TPB, TPB](out, x, n)
'''


def test_the_module_grammar_accepts_constants_dtypes_and_type_expressions():
    findings = check_task_module(MODULE_LEVEL_ALLOWED)
    assert findings == [], "\n".join(map(str, findings))
    compile(MODULE_LEVEL_ALLOWED, "candidate.py", "exec")


# ---------------------------------------------------------------------------
# Inside kernels: an allow-list of calls, module references and attributes

KERNEL_REJECTED = {
    "alias-of-numpy": ("        c = np\n", "module-ref"),
    "alias-of-cuda": ("        c = cuda.atomic\n", "module-ref"),
    "alias-of-a-function": ("        f = math.exp\n", "module-ref"),
    "module-as-argument": ("        sq(np)\n", "module-ref"),
    "module-in-a-tuple": ("        for m in (np, math):\n            pass\n", "module-ref"),
    "walrus-alias": ("        (c := np.ctypeslib)\n", "module-ref"),
    "shadows-an-import": ("        math = 3\n", "module-ref"),
    "numba-internal-call": ("        numba.core.serialize.dumps(x)\n", "kernel-call"),
    "cuda-host-object": ("        cuda.current_context()\n", "kernel-call"),
    "cuda-harness-state": ("        t = cuda.launch\n", "module-ref"),
    "local-call": ("        f = sq\n        f(x[i])\n", "kernel-call"),
    "string-method": ("        '{0}'.format(x)\n", "kernel-call"),
    "array-internals": ("        s = x.st\n", "kernel-attr"),
    "unknown-global": ("        v = ctypes\n", "kernel-name"),
    "dunder-name": ("        v = __build_class__\n", "dunder"),
}


@pytest.mark.parametrize("name", sorted(KERNEL_REJECTED))
def test_kernel_code_outside_the_kernel_api_is_rejected(name):
    line, rule = KERNEL_REJECTED[name]
    kernel = "\n@cuda.jit(device=True)\ndef sq(v):\n    return v * v\n" + KERNEL.replace("        cuda.atomic", line + "        cuda.atomic")
    got = rules(candidate(kernel=kernel))
    assert rule in got, f"{name}: {got}"


# ---------------------------------------------------------------------------
# Puzzle modules: no launch, a @cuda.jit `kernel`

PUZZLE_OK = "from numba import cuda\n\nTPB = 8\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n"


def test_a_puzzle_module_needs_a_jit_kernel_and_no_launch():
    assert check_puzzle_module(PUZZLE_OK) == []
    assert {f.rule for f in check_puzzle_module(PUZZLE_OK.replace("def kernel", "def kern"))} == {"kernel-missing"}
    assert "kernel-missing" in {f.rule for f in check_puzzle_module(PUZZLE_OK.replace("@cuda.jit\n", "@cuda.jit(device=True)\n"))}
    with_launch = PUZZLE_OK + "\n\ndef launch(out, a):\n    kernel[1, 8](out, a)\n"
    assert {f.rule for f in check_puzzle_module(with_launch)} == {"launch-forbidden"}
    assert "host-function" in {f.rule for f in check_puzzle_module(PUZZLE_OK + "\n\ndef helper():\n    pass\n")}


@pytest.mark.parametrize("extra, rule", [("import os\n", "import"), ("os.system('true')\n", "module-code"),
                                         ("print(TPB)\n", "module-code")])
def test_puzzle_module_level_code_is_rejected(extra, rule):
    source = PUZZLE_OK.replace("TPB = 8\n", "TPB = 8\n" + extra)
    assert rule in {f.rule for f in check_puzzle_module(source)}


def test_every_puzzle_reference_and_starter_passes_the_puzzle_screen(catalog):
    puzzles = catalog.ordered()
    assert len(puzzles) >= 20
    for puzzle in puzzles:
        for kind in ("reference", "starter"):
            findings = check_puzzle_module(getattr(puzzle, kind), f"{puzzle.id}/{kind}.py")
            assert findings == [], "\n".join(map(str, findings))


@pytest.mark.parametrize("path", sorted(KERNELS_DIR.glob("*/naive.py")) + sorted(KERNELS_DIR.glob("*/expert.py")),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_task_baseline_and_expert_passes_the_screen(path):
    findings = check_task_module(path.read_text(), path.name)
    assert findings == [], "\n".join(map(str, findings))


# ---------------------------------------------------------------------------
# Wired into the optimiser: a puzzle candidate is screened before anything runs


def test_a_puzzle_candidate_outside_the_grammar_is_rejected_before_any_run(catalog, tmp_path):
    # on 42f2d21 PuzzleTarget.judge ran this (marker created) and judged it correct
    from tutor.coach.optimise import PuzzleTarget

    puzzle = catalog.get("map")
    marker = tmp_path / "ran"
    target = PuzzleTarget(puzzle, puzzle.reference, "sim")
    try:
        judgement = target.judge(f"import os\nos.system('touch {marker}')\n" + puzzle.reference)
        assert not judgement.correct and not judgement.compiled
        assert {f["kind"] for f in judgement.failures} == {"static"}
        assert {f["rule"] for f in judgement.failures} == {"import", "module-code"}
        assert all(f["message"].startswith(f"line {f['line']}:") for f in judgement.failures)
        assert target._runner is None and not marker.exists()  # no child was even started
        assert target.judge(puzzle.reference).correct  # an honest candidate still runs and passes
    finally:
        target.close()


# ---------------------------------------------------------------------------
# Dynamic shared memory: kern[grid, block, 0, nbytes] on the default stream


DYNAMIC_SHARED_SUM = candidate(kernel='''
@cuda.jit
def kern(out, x, n):
    cache = cuda.shared.array(0, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    cache[t] = x[i] if i < n else 0.0
    cuda.syncthreads()
    if t == 0:
        acc = 0.0
        for k in range(cuda.blockDim.x):
            acc += cache[k]
        cuda.atomic.add(out, 0, acc)
''', launch="""
def launch(out, x):
    n = x.shape[0]
    blocks = (n + TPB - 1) // TPB
    kern[blocks, TPB, 0, TPB * 4](out, x, n)
""")


def test_a_launch_with_dynamic_shared_memory_on_stream_0_passes_the_screen():
    assert check_task_module(DYNAMIC_SHARED_SUM) == []
    assert check_task_module(DYNAMIC_SHARED_SUM.replace("kern[blocks, TPB, 0, TPB * 4]", "kern[blocks, TPB, 0]")) == []


@pytest.mark.parametrize("config", ["blocks, TPB, 1, TPB * 4", "blocks, TPB, True, 64", "blocks, TPB, s, 64",
                                    "blocks, TPB, cuda.default_stream(), 64"])
def test_a_launch_on_any_stream_but_the_literal_0_is_refused(config):
    source = DYNAMIC_SHARED_SUM.replace("blocks, TPB, 0, TPB * 4", config).replace("    n = ", "    s = 0\n    n = ")
    found = [f for f in check_task_module(source) if f.rule == "stream"]
    assert found and "default stream" in found[0].fix
    assert "timing" in RULES["stream"]


def test_the_dynamic_shared_size_is_screened_as_size_arithmetic():
    source = DYNAMIC_SHARED_SUM.replace("TPB * 4](", "x[0]](")
    assert "host-read" in rules(source)


def test_a_fifth_launch_config_element_is_refused():
    source = DYNAMIC_SHARED_SUM.replace("TPB * 4](", "TPB * 4, 1](")
    assert "launch-config" in rules(source)


# ---------------------------------------------------------------------------
# The spellings numba-cuda's own examples use for types and signatures

SPELLED_PUZZLE_MODULES = {
    "from numba.cuda import float32": "from numba import cuda\nfrom numba.cuda import float32\n\n\n@cuda.jit\n",
    "cuda.float32": "from numba import cuda\n\nfloat32 = cuda.float32\n\n\n@cuda.jit\n",
    "from numba.core import types": ("from numba import cuda\nfrom numba.core import types\n\nfloat32 = types.float32\n\n\n"
                                     "@cuda.jit((types.float32[:], types.float32[:]))\n"),
    "from numba.cuda import types": ("from numba import cuda\nfrom numba.cuda import types\n\nfloat32 = types.float32\n\n\n"
                                     "@cuda.jit\n"),
    "string signature": "from numba import cuda\nfrom numba.cuda import float32\n\n\n@cuda.jit('void(float32[:], float32[::1])')\n",
    "list of signatures": ("from numba import cuda, float32, float64, void\n\n\n"
                           "@cuda.jit([void(float64[:], float64[:]), 'void(float32[:], float32[:])'])\n"),
}


@pytest.mark.parametrize("name", SPELLED_PUZZLE_MODULES)
def test_numba_cuda_type_spellings_pass_the_puzzle_screen(name):
    # before: `float32` from numba.cuda was "not part of the cuda kernel API" (kernel-call) and
    # `from numba.core import types` an import of `numba.core` (import)
    source = SPELLED_PUZZLE_MODULES[name] + ("def kernel(out, a):\n    i = cuda.threadIdx.x\n"
                                             "    out[i] = a[i] + float32(10)\n")
    findings = check_puzzle_module(source)
    assert findings == [], "\n".join(map(str, findings))


def test_only_types_may_be_imported_from_numba_core():
    assert "import" in {f.rule for f in check_puzzle_module(
        "from numba import cuda\nfrom numba.core import types, serialize\n\n\n@cuda.jit\ndef kernel(out):\n    out[0] = 1\n")}


@pytest.mark.parametrize("sig", ["'__import__(\"os\").getcwd() or (float32[:],)'", "'float32[len(\"ab\"):], int32'",
                                 "'void(float32[:], int32, x=1)'", "'os.system(1)(float32[:])'"])
def test_a_signature_string_is_read_as_types_only(sig):
    source = f"from numba import cuda\n\n\n@cuda.jit({sig})\ndef kernel(out, a):\n    out[0] = a[0]\n"
    assert "decorator" in {f.rule for f in check_puzzle_module(source)}


def test_a_signature_string_that_is_code_is_rejected_and_never_runs(tmp_path):
    # Numba evaluates a signature string as Python while it loads the module: before this test the
    # screen passed any string and Numba ran it in the verifier's child (`os.getpid()` there came back
    # as "evaluates to 'int' instead of tuple or Signature"); only the sandbox stood in the way
    marker = tmp_path / "ran"
    source = softmax_with(marker, signature=f"'__import__(\"os\").system(\"touch {marker}\") or (float32[:, :], float32[:, :])'")
    assert verify_static(source) == {"decorator"}
    assert not marker.exists()
