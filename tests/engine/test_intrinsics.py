"""The cuda.* maths intrinsics on the simulator give what a GPU gives, for the types Numba gives
their arguments: integer bit counts in the argument's own width, fma rounded once, cbrt of a
negative number negative. Each expected value is worked out here independently, bit by bit or with
exact fractions; the gpu-marked tests at the end run the same kernels on a real GPU."""

import math
import textwrap
from fractions import Fraction

import numpy as np
import pytest

from tutor.engine.judge import simulate
from tutor.engine.loading.compile import compile_launches, nvvm_missing
from tutor.engine.loading.loader import load_module_for_numba

needs_compiler = pytest.mark.skipif(nvvm_missing() is not None, reason="the real compiler types the intrinsics")

BIT_KERNEL = textwrap.dedent("""\
    from numba import cuda


    @cuda.jit
    def kernel(out, rev, a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            out[i, 0] = cuda.popc(a[i])
            out[i, 1] = cuda.clz(a[i])
            out[i, 2] = cuda.ffs(a[i])
            rev[i] = cuda.brev(a[i])
    """)

FMA_KERNEL = textwrap.dedent("""\
    from numba import cuda


    @cuda.jit
    def kernel(out, a, b, c):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = cuda.fma(a[i], b[i], c[i])
    """)

CBRT_KERNEL = textwrap.dedent("""\
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = cuda.cbrt(a[i])
    """)

SELP_KERNEL = textwrap.dedent("""\
    from numba import cuda


    @cuda.jit
    def kernel(out, a, b):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = cuda.selp(a[i] > b[i], a[i], b[i])
    """)

# The width comes from the expression's type as Numba types it: threadIdx.x is an int32,
# cuda.grid(1) and integer arithmetic are int64, a cast is its type, ballot_sync gives an int32.
EXPRESSION_KERNEL = textwrap.dedent("""\
    import numba
    from numba import cuda


    @cuda.jit
    def kernel(out):
        t = cuda.threadIdx.x
        g = cuda.grid(1)
        out[t, 0] = cuda.clz(t)
        out[t, 1] = cuda.clz(g)
        out[t, 2] = cuda.clz(numba.uint8(t))
        out[t, 3] = cuda.popc(cuda.ballot_sync(0xFFFFFFFF, True))
        out[t, 4] = cuda.popc(numba.int32(-1) * 1)
        out[t, 5] = cuda.popc(numba.int16(-1))
        out[t, 6] = cuda.brev(g + 1)
        out[t, 7] = cuda.lanemask_lt()
    """)

INT_TYPES = [np.int32, np.uint32, np.int64, np.uint64]


def _edge_values(dtype):
    info = np.iinfo(dtype)
    values = [0, 1, 2, 6, 0x80, info.max, info.max - 1, 1 << (info.bits - 1), 0x12345678, 1 << 31]
    if info.min < 0:
        values += [-1, -2, info.min, info.min + 1, -(1 << 20)]
    return np.array([v for v in values if info.min <= v <= info.max], dtype=dtype)


def _bits_of(value, width):
    """Bit k of value in two's complement of `width`, for k = 0 .. width - 1."""
    u = int(value) % (1 << width)
    return [(u >> k) & 1 for k in range(width)]


def _expected_bits(a, dtype):
    width = np.iinfo(dtype).bits
    brev_width = 64 if dtype == np.uint64 else 32  # Numba's brev: uint64, or uint32 for every other int
    out, rev = [], []
    for v in a:
        bits = _bits_of(v, width)
        popc = sum(bits)
        clz = 0
        for b in reversed(bits):
            if b:
                break
            clz += 1
        ffs = next((k + 1 for k, b in enumerate(bits) if b), 0)
        out.append([popc, clz, ffs])
        low = _bits_of(v, brev_width)
        rev.append(sum(b << (brev_width - 1 - k) for k, b in enumerate(low)))
    return np.array(out, dtype=np.int64), np.array(rev, dtype=np.uint64)


def _simulate(source, n, *named):
    _, failures = simulate(source, 1, n, list(named))
    assert failures == [], failures


def _nearest_float32(exact: Fraction) -> np.float32:
    """The float32 nearest `exact`, ties to even, by comparing the neighbours with exact arithmetic."""
    guess = np.float32(float(exact))
    candidates = {guess, np.nextafter(guess, np.float32(np.inf)), np.nextafter(guess, np.float32(-np.inf))}
    best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact),
                                          int(np.array(c, dtype=np.float32).view(np.uint32)) & 1))
    return np.float32(best)


# -- integer intrinsics ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda d: d.__name__)
@needs_compiler
def test_bit_intrinsics_count_in_the_width_of_the_arguments_type(dtype):
    a = _edge_values(dtype)
    out = np.zeros((a.size, 3), dtype=np.int64)
    rev = np.zeros(a.size, dtype=np.uint64)
    _simulate(BIT_KERNEL, 32, ("out", out), ("rev", rev), ("a", a))
    want_out, want_rev = _expected_bits(a, dtype)
    for n, v in enumerate(a):
        assert out[n].tolist() == want_out[n].tolist(), (dtype.__name__, int(v))
        assert rev[n] == want_rev[n], (dtype.__name__, int(v), hex(int(rev[n])), hex(int(want_rev[n])))


@needs_compiler
def test_the_width_follows_the_type_numba_gives_each_expression():
    out = np.zeros((32, 8), dtype=np.int64)
    _simulate(EXPRESSION_KERNEL, 32, ("out", out))
    for t in range(32):
        assert out[t, 0] == 32 - t.bit_length()  # int32
        assert out[t, 1] == 64 - t.bit_length()  # int64
        assert out[t, 2] == 8 - t.bit_length()  # uint8
        assert out[t, 3] == 32  # all 32 lanes of an int32 ballot
        assert out[t, 4] == 64  # int32 * int64 literal: an int64
        assert out[t, 5] == 16
        assert out[t, 6] == sum(b << (31 - k) for k, b in enumerate(_bits_of(t + 1, 32)))  # int64 -> uint32
        assert out[t, 7] == (1 << t) - 1


def test_with_no_compiler_to_ask_an_int_is_an_int64_and_fma_follows_its_arguments(monkeypatch):
    asked = []
    monkeypatch.setattr("tutor.engine.loading.compile.intrinsic_types",
                        lambda *args, **kwargs: asked.append(args) or {})
    source = textwrap.dedent("""\
        from numba import cuda


        @cuda.jit
        def kernel(out, a, b, c):
            i = cuda.grid(1)
            out[i] = cuda.fma(a[i], b[i], c[i]) + cuda.clz(i + 1) + cuda.popc(-1) + cuda.ffs(-8)
        """)
    a, b, c = _tie_case()
    out = np.zeros(1, dtype=np.float64)
    _simulate(source, 1, ("out", out), ("a", a), ("b", b), ("c", c))
    assert asked  # the simulator asked, and no compiler answered
    assert out[0] == (1 + 2.0 ** -23) + 63 + 64 + 4


# -- fma ---------------------------------------------------------------------------------------------
def _tie_case():
    """a * b is exactly 1 + 2**-24, halfway between two float32s (2**24 + 1 = 24929 * 673), and c a
    tiny push upwards: the exact sum rounds up to 1 + 2**-23. Rounding the product first lands on
    the tie, which goes to even, 1.0; so does rounding the exact sum to a float64 and then to a
    float32 (the push is below a float64's half unit): an fma is one rounding, not two."""
    a = np.array([24929 * 2.0 ** -15], dtype=np.float32)
    b = np.array([673 * 2.0 ** -9], dtype=np.float32)
    c = np.array([2.0 ** -80], dtype=np.float32)
    return a, b, c


@needs_compiler
def test_a_float32_fma_rounds_once_where_multiply_then_add_rounds_twice():
    a, b, c = _tie_case()
    assert Fraction(float(a[0])) * Fraction(float(b[0])) == 1 + Fraction(1, 2 ** 24)
    assert np.float32(a[0] * b[0]) + c[0] == np.float32(1.0)  # float32 multiply, then add
    assert np.float32(float(a[0]) * float(b[0]) + float(c[0])) == np.float32(1.0)  # via a float64
    out = np.zeros(1, dtype=np.float32)
    _simulate(FMA_KERNEL, 1, ("out", out), ("a", a), ("b", b), ("c", c))
    assert out[0] == np.float32(1 + 2.0 ** -23)


@needs_compiler
def test_a_float64_fma_keeps_what_the_products_rounding_loses():
    a = np.array([1 + 2.0 ** -30, 0.1], dtype=np.float64)
    b = np.array([1 - 2.0 ** -30, 10.0], dtype=np.float64)
    c = np.array([-1.0, -1.0], dtype=np.float64)
    assert a[0] * b[0] + c[0] == 0.0  # the product rounds to 1
    out = np.zeros(2, dtype=np.float64)
    _simulate(FMA_KERNEL, 2, ("out", out), ("a", a), ("b", b), ("c", c))
    for n in range(2):
        exact = Fraction(float(a[n])) * Fraction(float(b[n])) + Fraction(float(c[n]))
        assert out[n] == float(exact)  # Fraction -> float is correctly rounded
    assert out[0] == -(2.0 ** -60)


@needs_compiler
def test_float32_fma_on_cancelling_inputs_is_the_exact_result_rounded_once():
    rng = np.random.default_rng(7)
    a = rng.uniform(-4, 4, 256).astype(np.float32)
    b = rng.uniform(-4, 4, 256).astype(np.float32)
    c = (-(a.astype(np.float64) * b) * (1 + rng.uniform(-1e-6, 1e-6, 256))).astype(np.float32)
    out = np.zeros(256, dtype=np.float32)
    _simulate(FMA_KERNEL, 256, ("out", out), ("a", a), ("b", b), ("c", c))
    for n in range(256):
        exact = Fraction(float(a[n])) * Fraction(float(b[n])) + Fraction(float(c[n]))
        assert out[n] == _nearest_float32(exact), n


@needs_compiler
def test_fma_signed_zeros_and_infinities():
    a = np.array([-0.0, 2.0, 1e30, np.inf, 0.0, 3.0], dtype=np.float32)
    b = np.array([1.0, 3.0, 1e30, 0.0, 5.0, 2.0], dtype=np.float32)
    c = np.array([-0.0, -6.0, -np.inf, 1.0, -0.0, np.nan], dtype=np.float32)
    out = np.zeros(6, dtype=np.float32)
    _simulate(FMA_KERNEL, 6, ("out", out), ("a", a), ("b", b), ("c", c))
    assert out[0] == 0 and math.copysign(1, out[0]) == -1  # -0 * 1 + -0
    assert out[1] == 0 and math.copysign(1, out[1]) == 1  # 6 - 6: +0
    assert out[2] == -np.inf  # a finite (if huge) product plus -inf; multiply-then-add gives NaN
    assert np.isnan(out[3]) and np.isnan(out[5])
    assert out[4] == 0 and math.copysign(1, out[4]) == 1


# -- cbrt and selp -----------------------------------------------------------------------------------
def _nearest_cbrt_float32(x: float) -> np.float32:
    """The float32 y whose rounding interval holds the real cube root of x (x > 0)."""
    y = np.float32(x ** (1 / 3))
    for _ in range(4):
        lo = (Fraction(float(y)) + Fraction(float(np.nextafter(y, np.float32(0))))) / 2
        hi = (Fraction(float(y)) + Fraction(float(np.nextafter(y, np.float32(np.inf))))) / 2
        if lo ** 3 <= Fraction(x) <= hi ** 3:
            return y
        y = np.nextafter(y, np.float32(np.inf) if hi ** 3 < Fraction(x) else np.float32(0))
    raise AssertionError(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@needs_compiler
def test_cbrt_of_negative_numbers_is_negative_and_exact_cubes_are_exact(dtype):
    a = np.array([-27.0, 8.0, 0.125, -0.0, 0.0, np.inf, -np.inf, np.nan, -1e-30, 1e30], dtype=dtype)
    out = np.zeros(a.size, dtype=dtype)
    _simulate(CBRT_KERNEL, a.size, ("out", out), ("a", a))
    assert out[:3].tolist() == [-3.0, 2.0, 0.5]
    assert out[3] == 0 and math.copysign(1, out[3]) == -1 and math.copysign(1, out[4]) == 1
    assert out[5] == np.inf and out[6] == -np.inf and np.isnan(out[7])
    np.testing.assert_allclose(out[8:], [-1e-10, 1e10], rtol=1e-6)


@needs_compiler
def test_float32_cbrt_is_the_root_rounded_to_float32():
    a = np.array([2.0, 3.0, 10.0, 1e-20, 123.456], dtype=np.float32)
    out = np.zeros(a.size, dtype=np.float32)
    _simulate(CBRT_KERNEL, a.size, ("out", out), ("a", a))
    for n, x in enumerate(a):
        assert out[n] == _nearest_cbrt_float32(float(x)), float(x)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint64], ids=lambda d: d.__name__)
@needs_compiler
def test_selp_picks_by_its_predicate(dtype):
    a = np.array([1, 5, 0, 7], dtype=dtype)
    b = np.array([2, 3, 0, 9], dtype=dtype)
    out = np.zeros(4, dtype=dtype)
    _simulate(SELP_KERNEL, 4, ("out", out), ("a", a), ("b", b))
    assert out.tolist() == [2, 5, 0, 9]


# -- the real compiler accepts all of them ------------------------------------------------------------


@pytest.mark.parametrize("source, types", [
    (BIT_KERNEL, [(("array", "int64", 2), ("array", "uint64", 1), ("array", d.__name__, 1)) for d in INT_TYPES]),
    (FMA_KERNEL, [(("array", d, 1),) * 4 for d in ("float32", "float64")]),
    (CBRT_KERNEL, [(("array", d, 1),) * 2 for d in ("float32", "float64")]),
    (SELP_KERNEL, [(("array", d, 1),) * 3 for d in ("float32", "int32", "uint64")]),
    (EXPRESSION_KERNEL, [(("array", "int64", 2),)]),
], ids=["bits", "fma", "cbrt", "selp", "expressions"])
@needs_compiler
def test_the_real_compiler_accepts_kernels_using_them(source, types):
    assert compile_launches(source, "k.py", [("kernel", t) for t in types]) == []


# -- on a real GPU: the simulator gives what the device gives ------------------------------------------
def _on_gpu(source, n, *arrays):
    from tutor.engine.gpu import import_cuda

    cuda = import_cuda()
    kernel = load_module_for_numba(source, "k.py")["kernel"]
    device = [cuda.to_device(a) for a in arrays]
    kernel[1, n](*device)
    cuda.synchronize()
    return [d.copy_to_host() for d in device]


def _on_sim(source, n, names, *arrays):
    copies = [a.copy() for a in arrays]
    _simulate(source, n, *zip(names, copies))
    return copies


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda d: d.__name__)
def test_bit_intrinsics_match_the_gpu(dtype):
    a = _edge_values(dtype)
    out, rev = np.zeros((a.size, 3), dtype=np.int64), np.zeros(a.size, dtype=np.uint64)
    gpu = _on_gpu(BIT_KERNEL, 32, out, rev, a)
    sim = _on_sim(BIT_KERNEL, 32, ("out", "rev", "a"), out, rev, a)
    np.testing.assert_array_equal(sim[0], gpu[0])
    np.testing.assert_array_equal(sim[1], gpu[1])
    np.testing.assert_array_equal(gpu[0], _expected_bits(a, dtype)[0])


@pytest.mark.gpu
def test_expression_widths_match_the_gpu():
    out = np.zeros((32, 8), dtype=np.int64)
    np.testing.assert_array_equal(_on_sim(EXPRESSION_KERNEL, 32, ("out",), out)[0],
                                  _on_gpu(EXPRESSION_KERNEL, 32, out)[0])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_fma_matches_the_gpu_bit_for_bit(dtype):
    rng = np.random.default_rng(3)
    a = rng.uniform(-4, 4, 256).astype(dtype)
    b = rng.uniform(-4, 4, 256).astype(dtype)
    c = (-(a.astype(np.float64) * b) * (1 + rng.uniform(-1e-6, 1e-6, 256))).astype(dtype)
    if dtype == np.float32:
        a[:1], b[:1], c[:1] = _tie_case()
    out = np.zeros(256, dtype=dtype)
    gpu = _on_gpu(FMA_KERNEL, 256, out, a, b, c)[0]
    sim = _on_sim(FMA_KERNEL, 256, ("out", "a", "b", "c"), out, a, b, c)[0]
    np.testing.assert_array_equal(sim, gpu)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_cbrt_matches_the_gpu_within_an_ulp(dtype):
    a = np.concatenate([[-27.0, 8.0, 0.125, -0.0, 0.0, np.inf, -np.inf],
                        np.random.default_rng(5).uniform(-1000, 1000, 249)]).astype(dtype)
    out = np.zeros(a.size, dtype=dtype)
    gpu = _on_gpu(CBRT_KERNEL, a.size, out, a)[0]
    sim = _on_sim(CBRT_KERNEL, a.size, ("out", "a"), out, a)[0]
    np.testing.assert_array_equal(sim[:7], gpu[:7])
    np.testing.assert_array_max_ulp(sim[7:], gpu[7:], maxulp=1)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint64], ids=lambda d: d.__name__)
def test_selp_matches_the_gpu(dtype):
    a = np.array([1, 5, 0, 7], dtype=dtype)
    b = np.array([2, 3, 0, 9], dtype=dtype)
    out = np.zeros(4, dtype=dtype)
    np.testing.assert_array_equal(_on_sim(SELP_KERNEL, 4, ("out", "a", "b"), out, a, b)[0],
                                  _on_gpu(SELP_KERNEL, 4, out, a, b)[0])
