"""The static screen rejects the known harness cheats and accepts honest kernels."""

import textwrap

import pytest

from tutor.coach.screen import RULES, ScreenFinding, screen


def rules(source: str) -> set[str]:
    return {f.rule for f in screen(textwrap.dedent(source))}


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
    findings = screen(source)
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
    "dynamic-shared-4th": (candidate(launch=LAUNCH.replace("kern[blocks, TPB]", "kern[blocks, TPB, 0, 1024]")), "stream"),
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
    findings = screen(source)
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
    [finding] = screen(source)
    line_no = source.splitlines().index("    host = out.copy_to_host()") + 1
    assert isinstance(finding, ScreenFinding)
    assert finding.rule == "host-copy"
    assert finding.line == line_no
    assert f"line {line_no}" in finding.message
    assert "copy_to_host" in finding.message
    text = str(finding)
    assert text.startswith(f"candidate.py:{line_no}:")
    assert "Fix:" in text and "device" in finding.fix


def test_monkeypatch_message_points_at_patched_name():
    source = candidate(extra="np.allclose = lambda *a, **k: True\n")
    [patch] = [f for f in screen(source) if f.rule == "attr-assign"]
    assert "np.allclose" in patch.message
    assert patch.line == source.splitlines().index("np.allclose = lambda *a, **k: True") + 1


def test_syntax_error_is_a_finding():
    [f] = screen("def launch(out:\n")
    assert f.rule == "syntax" and f.kind == "static"


def test_filename_is_carried():
    [f] = screen(candidate(extra="import os\n"), filename="coach_7.py")
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
    assert screen(source) == []
