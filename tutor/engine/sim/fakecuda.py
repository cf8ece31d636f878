"""What `from numba import cuda` means inside our simulator.

A learner's file is executed with an import hook that hands it these objects instead of Numba's, so
the same file runs unchanged here and on a GPU. Thread-dependent attributes (threadIdx, laneid, ...)
are plain instance attributes that the scheduler rewrites at each switch between simulated threads,
which makes `cuda.threadIdx.x` as cheap as any attribute read. Anything a kernel touches that we do
not simulate raises Unsupported naming it, rather than misbehaving quietly.
"""

from __future__ import annotations

import ast
import math
import re
import struct
import sys

import numpy as np

_getframe = sys._getframe


class Unsupported(Exception):
    """The kernel used a part of numba.cuda that the simulator does not model. `near`: a name the
    simulator does model that it may be a slip for: certainly so when only the case differs
    (`cuda.threadIdx` for `cuda.threadidx`: numba-cuda has no two names so alike), perhaps when the
    spelling is close (`cuda.syncthread`; but numba-cuda's `cuda.uint8x4` is near `cuda.uint8` too)."""

    def __init__(self, what: str, near: str | None = None):
        super().__init__(what)
        self.what = what
        self.near = near


def _missing(prefix: str, name: str, known) -> Unsupported:
    """`prefix.name` is not modelled: with the modelled name it is a slip for, when there is one
    (the same letters in another case, or a near spelling)."""
    import difflib

    names = [n for n in known if not n.startswith("_")]
    same = [n for n in names if n.lower() == name.lower()]
    near = same or difflib.get_close_matches(name, names, n=1, cutoff=0.8)
    return Unsupported(f"{prefix}.{name}", f"{prefix}.{near[0]}" if near else None)


class BadSignature(Exception):
    """A @cuda.jit signature that Numba would refuse: the message says what to write instead."""


class Dim3:
    __slots__ = ("x", "y", "z")

    def __init__(self, x=1, y=1, z=1):
        self.x, self.y, self.z = x, y, z

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self):
        return f"Dim3({self.x}, {self.y}, {self.z})"


# -- numba scalar types: usable as casts, and as dtypes of shared/local arrays ---------------------
class ScalarType:
    def __init__(self, name: str, np_dtype, cast):
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self._cast = cast
        self.is_int = self.np_dtype.kind in "iub"

    def __call__(self, value=0, *more):
        if more or isinstance(value, _TYPE_CLASSES):  # float32(float32, int32): a signature, not a cast
            return Signature(self, (value, *more))
        return self._cast(value)

    def __repr__(self):
        return self.name

    def __getitem__(self, dims):  # float32[:], float32[:, ::1]: an array type, for signatures
        return ArrayType(self, dims)


class VoidType:
    """`void`, the return type of a kernel: void(float32[:], int32) is a signature."""

    name = "void"

    def __call__(self, *args):
        return Signature(self, args)

    def __repr__(self):
        return "void"


class ArrayType:
    """float32[:], float32[:, ::1]: an array parameter's type. The simulator runs a kernel with the
    launch's own arrays, so this only has to be spelled the way Numba spells it."""

    def __init__(self, dtype, dims):
        dims = dims if isinstance(dims, tuple) else (dims,)
        if not dims or not all(isinstance(d, slice) and d.start is None and d.stop is None and d.step in (None, 1)
                               for d in dims):
            raise BadSignature(f"`{dtype}[...]` is not an array type: write one `:` per dimension, and `::1` for a "
                               f"contiguous one, e.g. `{dtype}[:]`, `{dtype}[:, :]` or `{dtype}[:, ::1]`")
        self.dtype = dtype
        self.ndim = len(dims)
        self._dims = ", ".join("::1" if d.step == 1 else ":" for d in dims)

    def __repr__(self):
        return f"{self.dtype}[{self._dims}]"


class Signature:
    """void(float32[:], float32[:]), or just the parameter types (float32[:], int32)."""

    def __init__(self, return_type, args):
        for a in args:
            if not isinstance(a, _TYPE_CLASSES):
                raise BadSignature(f"`{a!r}` in a signature is not a type: list the parameters' types, e.g. "
                                   "`void(float32[:], float32[:], int32)`")
        self.return_type = return_type
        self.args = tuple(args)

    def __repr__(self):
        params = ", ".join(map(repr, self.args))
        return f"{self.return_type!r}({params})" if self.return_type is not None else f"({params})"

    def check(self, fn, device: bool) -> None:
        """Numba refuses, as it decorates, a signature that does not fit the function."""
        check_signature_fits(repr(self), len(self.args), fn, device)
        if not device and not isinstance(self.return_type, (VoidType, type(None))):
            raise BadSignature(kernel_returns_nothing(repr(self), fn))


_TYPE_CLASSES = (ScalarType, ArrayType)


def check_signature_fits(shown: str, n_types: int, fn, device: bool = False) -> None:
    """The same words on the simulator and in the real-compiler check."""
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    if n_types != len(params):
        example = (f"float32({', '.join(['float32'] * len(params))})" if device
                   else f"void({', '.join(['float32[:]'] * len(params))})")
        raise BadSignature(
            f"the signature `{shown}` gives {n_types} parameter type(s), but `{fn.__name__}` takes {len(params)} "
            f"({', '.join(params)}): give one type per parameter, in order, e.g. `{example}`")


def kernel_returns_nothing(shown: str, fn) -> str:
    return (f"the signature `{shown}` gives `{fn.__name__}` a return type, but a kernel returns nothing: "
            "start its signature with `void`, e.g. `void(float32[:], float32[:])` (only "
            "@cuda.jit(..., device=True) functions return values)")


SEVERAL_SIGNATURES = ("a tuple is read as one signature's parameter types; to give several signatures, list "
                      "them: `@cuda.jit([void(float32[:], float32[:]), void(float64[:], float64[:])])`")


def declared_signatures(func_or_sig) -> list[Signature]:
    """What @cuda.jit(...) was given, as Numba reads it: one signature (a string, void(...), or a
    tuple of parameter types) or a list of them."""
    if func_or_sig is None:
        return []
    if isinstance(func_or_sig, list):
        if not func_or_sig:
            raise BadSignature("`@cuda.jit([])` lists no signature: give at least one, or none at all (`@cuda.jit`)")
        return [_one_signature(s) for s in func_or_sig]
    return [_one_signature(func_or_sig)]


def _one_signature(sig) -> Signature:
    if isinstance(sig, Signature):
        return sig
    if isinstance(sig, str):
        return parse_signature(sig)
    if isinstance(sig, tuple):
        if any(isinstance(s, (Signature, str)) for s in sig):
            raise BadSignature(SEVERAL_SIGNATURES)
        return Signature(None, sig)
    raise BadSignature(f"`@cuda.jit({sig!r})`: a signature is a string such as 'void(float32[:], int32)', "
                       "void(float32[:], int32) with the types imported from numba, or a tuple of parameter types")


def parse_signature(text: str) -> Signature:
    """'void(float32[:], int32)' read as Numba reads it, without evaluating anything."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        tree = None
    if isinstance(tree, ast.Call) and not tree.keywords:
        return Signature(_string_type(tree.func, text, returns=True), [_string_type(a, text) for a in tree.args])
    if isinstance(tree, ast.Tuple):
        return Signature(None, [_string_type(a, text) for a in tree.elts])
    raise BadSignature(f"the signature {text!r} is not one Numba reads: write the return type and the "
                       "parameters' types, e.g. 'void(float32[:], float32[:], int32)'")


def _string_type(node, text: str, returns: bool = False):
    if isinstance(node, ast.Name) and node.id in TYPES:
        t = TYPES[node.id]
        if isinstance(t, VoidType) and not returns:
            raise BadSignature(f"in the signature {text!r}, `void` is a return type, not a parameter's")
        return t
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in SCALARS:
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if all(isinstance(d, ast.Slice) and d.lower is None and d.upper is None
               and (d.step is None or (isinstance(d.step, ast.Constant) and d.step.value == 1)) for d in dims):
            return _string_type(node.value, text)[tuple(slice(None, None, 1 if d.step else None) for d in dims)]
    names = ", ".join(n for n in ("float32", "float64", "int32", "int64", "uint32", "boolean") if n in TYPES)
    raise BadSignature(f"in the signature {text!r}, `{ast.unparse(node)}` is not a type the simulator knows: use "
                       f"{names} (and the others numba names), arrays as `float32[:]` or `float32[:, ::1]`, "
                       "and `void` as a kernel's return type")


def _float32(x):
    """Round to the nearest float32, as Numba's float32() cast does, but keep a Python float."""
    x = float(x)
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _wrap_int(bits, signed):
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)

    def cast(x):
        v = int(x) & mask
        if signed and v >= half:
            v -= 1 << bits
        return v

    return cast


SCALARS = {
    "float32": ScalarType("float32", np.float32, _float32),
    "float64": ScalarType("float64", np.float64, float),
    "float16": None,  # not simulated: half precision changes results in ways we do not model
    "int8": ScalarType("int8", np.int8, _wrap_int(8, True)),
    "int16": ScalarType("int16", np.int16, _wrap_int(16, True)),
    "int32": ScalarType("int32", np.int32, _wrap_int(32, True)),
    "int64": ScalarType("int64", np.int64, _wrap_int(64, True)),
    "uint8": ScalarType("uint8", np.uint8, _wrap_int(8, False)),
    "uint16": ScalarType("uint16", np.uint16, _wrap_int(16, False)),
    "uint32": ScalarType("uint32", np.uint32, _wrap_int(32, False)),
    "uint64": ScalarType("uint64", np.uint64, _wrap_int(64, False)),
    "boolean": ScalarType("boolean", np.bool_, bool),
}
SCALARS["float_"] = SCALARS["float64"]
SCALARS["double"] = SCALARS["float64"]
SCALARS["intp"] = SCALARS["int64"]
SCALARS["int_"] = SCALARS["int64"]
SCALARS["uint"] = SCALARS["uint64"]
SCALARS["b1"] = SCALARS["boolean"]
SCALARS["f4"] = SCALARS["float32"]
SCALARS["f8"] = SCALARS["float64"]
SCALARS["i4"] = SCALARS["int32"]
SCALARS["i8"] = SCALARS["int64"]
VOID = VoidType()
# Everything `numba.types` (and `from numba import ...`, `from numba.cuda import ...`) offers here.
TYPES = {name: st for name, st in SCALARS.items() if st is not None} | {"void": VOID, "none": VOID}


def check_alignment(alignment, where: str) -> None:
    """Numba's rules for an array's `alignment` (a constant power of two, a multiple of a pointer's
    8 bytes). The simulator keeps values, not addresses, so a valid one changes nothing here; on a
    GPU it lets the compiler merge neighbouring loads into one vector load (ld.shared.v4.f32)."""
    if alignment is None:
        return
    if isinstance(alignment, bool) or not isinstance(alignment, (int, np.integer)):
        raise ValueError(f"{where}'s alignment must be a constant integer such as 16, not {alignment!r}")
    a = int(alignment)
    if a <= 0 or a & (a - 1) or a % 8:
        raise ValueError(f"{where}'s alignment must be a power of 2 and a multiple of 8 (such as 16), "
                         f"not {a}")


def dtype_of(dtype) -> ScalarType:
    """Accept numba types, numpy dtypes and type objects, as Numba's shared.array does."""
    if isinstance(dtype, ScalarType):
        return dtype
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise Unsupported(f"array dtype {dtype!r}") from None
    st = SCALARS.get(name)
    if st is None:
        raise Unsupported(f"array dtype {name}")
    return st


class _Namespace:
    """A small attribute bag that names what is missing, e.g. cuda.shared.foo."""

    def __init__(self, prefix, **members):
        self._prefix = prefix
        self.__dict__.update(members)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _missing(self._prefix, name, self.__dict__)


# numba.types, numba.core.types and numba.cuda.types: three modules in the real Numba (`is` tells them
# apart), so three here, with the same types in each
TYPES_NAMESPACE = _Namespace("numba.types", **TYPES)
CORE_TYPES_NAMESPACE = _Namespace("numba.core.types", **TYPES)
CUDA_TYPES_NAMESPACE = _Namespace("numba.cuda.types", **TYPES)


class FakeCuda:
    """The simulated `numba.cuda` module. One instance per loaded learner module.

    Handed in by the simulator's loader (sim_loader), so that this module imports nothing of the
    engine that builds on it: `kernel_class`, what `@cuda.jit` wraps a kernel in, called as
    kernel_class(fn, cuda) (the simulator's SimKernel); and `intrinsic_types`, Numba's own typing of
    the intrinsics' calls (compile.intrinsic_types), with the same arguments."""

    def __init__(self, source: str = "", filename: str = "", *, kernel_class, intrinsic_types):
        self.launch = None  # the running Launch, set by the scheduler
        self._kernel_class = kernel_class
        self._intrinsic_types = intrinsic_types
        # The module's own text, kept here because a kernel launched by the module's host code
        # (kernel[blocks, threads](...)) has no caller to pass it: from it the simulator names
        # arrays as the code does (`cache`, not `shared@9`) and types the intrinsics' calls.
        self._source = source
        self._source_lines = source.splitlines()
        self._filename = filename
        self._call_types: dict = {}  # (line, intrinsic) -> Numba's argument type there, per launch
        # What the host side launched, read by the verifier through sim.records(): kept under private
        # names (and checked for plausibility by the verifier), since a candidate's launch() runs
        # in this process. In record-only mode a launch is noted and nothing runs, so the real
        # compiler can accept every kernel before any of its code does.
        self._traces = []  # (trace, failures) of every launch through kernel[...]
        self._launches = []  # (kernel name, argument types) of each launch
        self._plans = []  # (kernel name, grid, block, shared bytes, arguments) of each launch (sim.records)
        self._record_only = False
        self._trace_local = True  # see sim.records
        self._sample = None       # see sim.records: the blocks a launch runs, None for all
        self._ran_blocks = []     # see sim.records
        self.threadIdx = Dim3(0, 0, 0)
        self.blockIdx = Dim3(0, 0, 0)
        self.blockDim = Dim3()
        self.gridDim = Dim3()
        self.laneid = 0
        self.warpsize = 32
        self.shared = _Namespace("cuda.shared", array=self._shared_array)
        self.local = _Namespace("cuda.local", array=self._local_array)
        self.const = _Namespace("cuda.const", array_like=self._const_array_like)
        self.atomic = _Namespace(
            "cuda.atomic",
            **{name: self._atomic_op(update) for name, update in ATOMIC_UPDATES.items()},
            cas=self._atomic_cas,
            compare_and_swap=lambda ary, old, val: self._atomic_cas(ary, 0, old, val, depth=3),
        )
        setattr(self.atomic, "and", self.atomic.and_)
        setattr(self.atomic, "or", self.atomic.or_)
        self.__dict__.update(TYPES)  # from numba.cuda import float32, void
        self.types = CUDA_TYPES_NAMESPACE

    # -- kernels and device functions -----------------------------------------------------------
    def jit(self, func_or_sig=None, device=False, **options):
        """@cuda.jit, @cuda.jit(device=True), and with signatures: those are checked against the
        function as Numba checks them, then set aside (the launch's arguments type the run)."""

        def wrap(fn):
            for sig in signatures:
                sig.check(fn, device)
            if device:
                return fn  # a device function is a plain call in the calling thread
            return self._kernel_class(fn, self)

        if callable(func_or_sig) and not isinstance(func_or_sig, (ScalarType, VoidType)):
            signatures = []
            return wrap(func_or_sig)
        signatures = declared_signatures(func_or_sig)
        return wrap

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _missing("cuda", name, dir(self))

    # -- host side: what launch() may call, accepted and refused as numba-cuda does (hostapi.py) ---
    def device_array(self, shape, dtype=np.float64, strides=None, order="C", stream=0):
        """Scratch memory as a GPU gives it: garbage, here NaN (floats) or a large int, so a
        kernel that reads scratch it never wrote goes wrong visibly. Like numba-cuda's, the dtype
        is NumPy's (np.float32, 'float32'; float64 when none is given), never a Numba type."""
        from .devicearray import DeviceArray
        from .hostapi import array_shape, numpy_dtype

        dtype = numpy_dtype(dtype, "cuda.device_array")
        shape = array_shape(shape, "cuda.device_array", dtype.itemsize)
        if strides is not None:
            raise Unsupported("cuda.device_array(..., strides=...)")
        return DeviceArray(np.full(shape, _garbage(dtype), dtype=dtype, order=order), "scratch")

    def device_array_like(self, ary, stream=0):
        return self.device_array(ary.shape, ary.dtype, order="F" if _f_only(ary) else "C")

    def to_device(self, obj, stream=0, copy=True, to=None):
        """A host array's copy in device memory (a device array is returned as it is, as numba-cuda
        does). `to=` copies into an existing one, which is a host copy into it (devicearray.py)."""
        from .devicearray import DeviceArray

        if to is not None:
            if copy:
                to.copy_to_device(obj, stream=stream)
            return to
        if isinstance(obj, DeviceArray):
            return obj
        return DeviceArray(np.array(obj, copy=True), "scratch")

    def stream(self):
        from .hostapi import Stream

        return Stream()

    default_stream = legacy_default_stream = per_thread_default_stream = stream

    def synchronize(self):
        """Every simulated launch has finished when it returns: nothing to wait for."""

    # -- thread geometry ------------------------------------------------------------------------
    def grid(self, ndim):
        t, b, d = self.threadIdx, self.blockIdx, self.blockDim
        if ndim == 1:
            return b.x * d.x + t.x
        if ndim == 2:
            return (b.x * d.x + t.x, b.y * d.y + t.y)
        if ndim == 3:
            return (b.x * d.x + t.x, b.y * d.y + t.y, b.z * d.z + t.z)
        raise ValueError("cuda.grid takes 1, 2 or 3")

    def gridsize(self, ndim):
        g, d = self.gridDim, self.blockDim
        if ndim == 1:
            return g.x * d.x
        if ndim == 2:
            return (g.x * d.x, g.y * d.y)
        if ndim == 3:
            return (g.x * d.x, g.y * d.y, g.z * d.z)
        raise ValueError("cuda.gridsize takes 1, 2 or 3")

    # -- memory ---------------------------------------------------------------------------------
    def _shared_array(self, shape, dtype, alignment=None):
        check_alignment(alignment, "cuda.shared.array")
        return self.launch.shared_array(shape, dtype_of(dtype), _getframe(1))

    def _local_array(self, shape, dtype, alignment=None):
        check_alignment(alignment, "cuda.local.array")
        return self.launch.local_array(shape, dtype_of(dtype), _getframe(1))

    def _const_array_like(self, ary):
        return self.launch.const_array(ary, _getframe(1))

    def _atomic_op(self, fn):
        def op(ary, idx, val):
            return ary.atomic(idx, lambda old: fn(old, val), depth=2)

        return op

    def _atomic_cas(self, ary, idx, old, val, depth=2):
        return ary.atomic(idx, lambda cur: val if cur == old else cur, depth=depth)

    # -- barriers and warps ---------------------------------------------------------------------
    def syncthreads(self):
        self.launch.barrier("syncthreads", 0, _getframe(1))

    def syncthreads_count(self, pred):
        return self.launch.barrier("syncthreads_count", pred, _getframe(1))

    def syncthreads_and(self, pred):
        return self.launch.barrier("syncthreads_and", pred, _getframe(1))

    def syncthreads_or(self, pred):
        return self.launch.barrier("syncthreads_or", pred, _getframe(1))

    def syncwarp(self, mask=0xFFFFFFFF):
        self.launch.warp_op("syncwarp", mask, None, None, _getframe(1).f_lineno)

    def shfl_sync(self, mask, value, src_lane):
        return self.launch.warp_op("shfl", mask, value, src_lane, _getframe(1).f_lineno)

    def shfl_up_sync(self, mask, value, delta):
        return self.launch.warp_op("shfl_up", mask, value, delta, _getframe(1).f_lineno)

    def shfl_down_sync(self, mask, value, delta):
        return self.launch.warp_op("shfl_down", mask, value, delta, _getframe(1).f_lineno)

    def shfl_xor_sync(self, mask, value, lane_mask):
        return self.launch.warp_op("shfl_xor", mask, value, lane_mask, _getframe(1).f_lineno)

    def all_sync(self, mask, pred):
        return self.launch.warp_op("all", mask, pred, None, _getframe(1).f_lineno)

    def any_sync(self, mask, pred):
        return self.launch.warp_op("any", mask, pred, None, _getframe(1).f_lineno)

    def ballot_sync(self, mask, pred):
        return self.launch.warp_op("ballot", mask, pred, None, _getframe(1).f_lineno)

    def activemask(self):
        return self.launch.active_mask()

    # -- maths intrinsics ------------------------------------------------------------------------
    # Each answers as the GPU does for the type Numba gives its argument at that call (see
    # typed_calls); the simulator's Python ints and floats do not carry one.
    def popc(self, x):
        return _popc(x, _int_bits(self._call_types.get((_getframe(1).f_lineno, "popc")), 64))

    def clz(self, x):
        return _clz(x, _int_bits(self._call_types.get((_getframe(1).f_lineno, "clz")), 64))

    def ffs(self, x):
        return _ffs(x, _int_bits(self._call_types.get((_getframe(1).f_lineno, "ffs")), 64))

    def brev(self, x):
        # Numba has brev for uint32 and uint64 only, and gives every other integer the uint32 one
        return _brev(x, _int_bits(self._call_types.get((_getframe(1).f_lineno, "brev")), 32))

    def fma(self, a, b, c):
        return _fma(a, b, c, _is_single(self._call_types.get((_getframe(1).f_lineno, "fma"), ""), (a, b, c)))

    def cbrt(self, x):
        return _cbrt(x, _is_single(self._call_types.get((_getframe(1).f_lineno, "cbrt"), ""), (x,)))

    def selp(self, pred, a, b):
        return a if pred else b

    def lanemask_lt(self):
        return (1 << self.laneid) - 1

    def nanosleep(self, ns):
        pass

    def typed_calls(self, kernel_name: str, arg_types: tuple) -> dict:
        """What the launch of `kernel_name` with these argument types needs known of its intrinsics'
        types: asked of Numba's type inference only when the module calls one whose answer depends on
        a type, so that every other launch costs nothing."""
        if not self._source or not _TYPED_CALL.search(self._source):
            return {}
        return self._intrinsic_types(self._source, self._filename, kernel_name, arg_types)

    def threadfence(self):
        pass

    def threadfence_block(self):
        pass

    def threadfence_system(self):
        pass


_TYPED_CALL = re.compile(r"\b(popc|clz|ffs|brev|fma|cbrt)\b")
_INT_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32, "int64": 64,
             "uint64": 64, "bool": 8}


def _int_bits(numba_type, default: int) -> int:
    """The width of the integer type Numba gave an argument. With none known (no compiler here), a
    Python int stands for an int64: Numba types integer literals, arithmetic and cuda.grid() so."""
    return _INT_BITS.get(numba_type, default)


def _popc(x, bits: int) -> int:
    """Set bits of x in its type's width: -1 has 32 in an int32 and 64 in an int64."""
    return (int(x) & ((1 << bits) - 1)).bit_count()


def _clz(x, bits: int) -> int:
    return bits - (int(x) & ((1 << bits) - 1)).bit_length()


def _ffs(x, bits: int) -> int:
    """1-based position of the lowest set bit, 0 for 0 (bits past the width are not the value's)."""
    v = int(x) & ((1 << bits) - 1)
    return (v & -v).bit_length()


def _brev(x, bits: int) -> int:
    v = int(x) & ((1 << bits) - 1)
    return int(format(v, f"0{bits}b")[::-1], 2)


def _is_single(numba_type: str, args) -> bool:
    """Whether Numba picked the float32 version. With the type unknown, it did when every argument
    is a float32 value (a float64 kernel whose values all happen to be float32's then gets a result
    rounded to float32: an error far inside any tolerance, where the other guess would round a
    float32 kernel's fma twice)."""
    if numba_type:
        return numba_type == "float32"
    try:
        return all(_float32(v) == float(v) for v in args)
    except (TypeError, ValueError):
        return False


def _fma(a, b, c, single: bool) -> float:
    """a * b + c rounded once, to float32 for the float32 version: what the GPU's fma gives and
    a * b + c computed in either precision does not (the product's own rounding is skipped)."""
    if single:  # Numba converted the arguments to float32
        a, b, c = _float32(a), _float32(b), _float32(c)
    else:
        a, b, c = float(a), float(b), float(c)
    if not (math.isfinite(a) and math.isfinite(b)):
        r = a * b + c  # inf or NaN operands: the same with one rounding or two
        return _float32(r) if single else r
    if not math.isfinite(c):
        return c  # a finite product, however large, does not change an infinite or NaN addend
    if single:
        # Two float32s multiply exactly in a float64 (24 + 24 significant bits of 53, no overflow or
        # underflow possible); their sum with c, rounded to a float64 and then to a float32, could
        # be rounded twice the wrong way, unless the first rounding is to odd (it keeps a sticky bit).
        p = a * b
        s = p + c
        bb = s - p
        err = (p - (s - bb)) + (c - bb)  # exact: s + err == p + c
        if err and not _odd(s):
            s = math.nextafter(s, math.inf if err > 0 else -math.inf)
        return _float32(s)
    na, da = a.as_integer_ratio()
    nb, db = b.as_integer_ratio()
    nc, dc = c.as_integer_ratio()
    num = na * nb * dc + nc * da * db
    if num == 0:  # an exact zero: IEEE's sign, -0.0 only from zero operands
        return a * b + c if (a == 0 or b == 0) else 0.0
    try:
        return num / (da * db * dc)  # int / int is correctly rounded
    except OverflowError:
        return math.copysign(math.inf, num)


def _odd(x: float) -> bool:
    return struct.unpack("<q", struct.pack("<d", x))[0] & 1 == 1


def _cbrt(x, single: bool) -> float:
    """The real cube root rounded to nearest, negative for a negative x (a ** (1 / 3) would be
    complex). libdevice's cbrt and cbrtf promise one within a unit in the last place, and so does
    the C library's behind math.cbrt (which gives 3.0000000000000004 for 27): its answer is moved
    to the neighbour whose rounding interval holds the root, checked in exact arithmetic, so that
    exact cubes come out exact as they do on a GPU."""
    x = _float32(x) if single else float(x)
    if x == 0 or not math.isfinite(x):
        return x  # +-0, +-inf and NaN are their own cube roots
    ax = abs(x)
    y = _float32(math.cbrt(ax)) if single else math.cbrt(ax)
    step = _next_float32 if single else _next_float64
    tn, td = ax.as_integer_ratio()
    for _ in range(4):
        up, down = step(y, True), step(y, False)
        if _cube_compare(tn, td, y, up) > 0:
            y = up
        elif _cube_compare(tn, td, y, down) < 0:
            y = down
        else:
            break
    return math.copysign(y, x)


def _cube_compare(tn: int, td: int, a: float, b: float) -> int:
    """The sign of tn / td - ((a + b) / 2) ** 3, exactly (integers: denominators are powers of 2)."""
    an, ad = a.as_integer_ratio()
    bn, bd = b.as_integer_ratio()
    d = max(ad, bd)
    mn, md = an * (d // ad) + bn * (d // bd), 2 * d
    diff = tn * md ** 3 - mn ** 3 * td
    return (diff > 0) - (diff < 0)


def _next_float64(y: float, up: bool) -> float:
    return math.nextafter(y, math.inf if up else 0.0)


def _next_float32(y: float, up: bool) -> float:
    """The float32 beside a positive float32 y (math.nextafter steps in float64s)."""
    bits = struct.unpack("<I", struct.pack("<f", y))[0]
    return struct.unpack("<f", struct.pack("<I", bits + (1 if up else -1)))[0]


def _nan_max(old, v):
    if old != old:
        return v
    if v != v:
        return old
    return old if old >= v else v


def _nan_min(old, v):
    if old != old:
        return v
    if v != v:
        return old
    return old if old <= v else v


# What each cuda.atomic operation stores, from the old value and the thread's: one table for the
# thread-by-thread simulator (FakeCuda.atomic) and the lanes (lanes.py)
ATOMIC_UPDATES = {
    "add": lambda old, v: old + v, "sub": lambda old, v: old - v, "max": _nan_max, "min": _nan_min,
    "nanmax": _nan_max, "nanmin": _nan_min, "exch": lambda old, v: v,
    "inc": lambda old, v: 0 if old >= v else old + 1, "dec": lambda old, v: v if (old == 0 or old > v) else old - 1,
    "and_": lambda old, v: old & v, "or_": lambda old, v: old | v, "xor": lambda old, v: old ^ v,
}


def _garbage(dtype: np.dtype):
    """What unwritten scratch holds here: NaN for floats, a large number for integers, True for bools."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).max // 3
    if dtype.kind == "b":
        return True
    return 0


def _f_only(ary) -> bool:
    """Whether device_array_like keeps Fortran order, as numba-cuda does for an F-only array."""
    flags = getattr(ary, "flags", None)
    try:
        return bool(flags["F_CONTIGUOUS"]) and not bool(flags["C_CONTIGUOUS"])
    except (TypeError, KeyError):
        return False


class FakeNumba:
    """The simulated top-level `numba` module: scalar types and `numba.cuda`."""

    def __init__(self, cuda: FakeCuda):
        self.cuda = cuda
        self.__dict__.update(TYPES)  # from numba import float32, void
        self.types = TYPES_NAMESPACE  # import numba.types; from numba import types
        self.core = _Namespace("numba.core", types=CORE_TYPES_NAMESPACE)  # from numba.core import types

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _missing("numba", name, dir(self))
