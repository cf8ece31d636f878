"""What host code holds on the simulator: a device array it can size and pass, never compute with.

On a GPU, `launch(out, *inputs)` receives `DeviceNDArray`s: host code can read their shape, dtype
and size, take views (slices, reshape, ravel, transpose) and pass them to kernels, and nothing more;
`x + 1`, `np.sum(x)` or `x[0]` are host maths or host copies that either fail or copy. On the
simulator the memory really is a numpy array, so a `launch` that did the maths on the host and had
a kernel copy the answer passed (a 257x "faster" reduction was saved as best that way). A DeviceArray
is the numpy array behind a handle that allows exactly the GPU's host API, so a module behaves the
same on both, and fails here with a message that says why.
"""

from __future__ import annotations

import numpy as np

_HOST_MATHS = ("{op} on a device array in launch(): on a GPU, device arrays have no host arithmetic. "
               "Do the maths in a kernel; launch() only sizes, allocates scratch and launches.")
_HOST_COPY = ("{what} reads or writes a device array's contents on the host (a host copy): do it in a kernel; "
              "launch() only sizes, allocates scratch and launches.")


class DeviceArray:
    """A handle on simulated device memory. `role` says where it came from ("out", an input's
    name, "scratch") so a verdict can name what a kernel wrote."""

    __slots__ = ("_DeviceArray__memory", "role")
    __array_ufunc__ = None  # numpy's ufuncs and operators refuse it instead of treating it as an object

    def __init__(self, memory: np.ndarray, role: str = "scratch"):
        self.__memory = memory
        self.role = role

    # -- what DeviceNDArray allows in host code -----------------------------------------------
    @property
    def shape(self) -> tuple:
        return self.__memory.shape

    @property
    def dtype(self):
        return self.__memory.dtype

    @property
    def size(self) -> int:
        return self.__memory.size

    @property
    def ndim(self) -> int:
        return self.__memory.ndim

    @property
    def strides(self) -> tuple:
        return self.__memory.strides

    @property
    def nbytes(self) -> int:
        return self.__memory.nbytes

    def __len__(self) -> int:
        return len(self.__memory)

    def __getitem__(self, key):
        view = self.__memory[key]
        if not isinstance(view, np.ndarray) or view.ndim == 0:
            raise TypeError(_HOST_COPY.format(what="indexing one element"))
        return DeviceArray(view, self.role)

    def reshape(self, *shape, order="C"):
        """A view with another shape, as numba-cuda's: one that needs a copy is refused."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        try:
            view = self.__memory.reshape(shape, order=order)
        except ValueError as e:
            raise ValueError(f"reshape changes the size of the array: {e}; a view keeps all {self.size} "
                             "elements") from None
        m = self.__memory
        fix = "reshape a contiguous array, or have the kernel index the strided one"
        if view.size and not np.may_share_memory(view, m):
            raise NotImplementedError(f"reshape would require copy: a device array of shape {self.shape} and strides "
                                      f"{self.strides} cannot be viewed as {tuple(view.shape)}; {fix}")
        if view.shape != m.shape and not (m.flags.c_contiguous or m.flags.f_contiguous):
            raise NotImplementedError(f"operation requires copying: numba-cuda reshapes only a contiguous device "
                                      f"array, and this one has strides {self.strides}; {fix}")
        return DeviceArray(view, self.role)

    def ravel(self, order="C"):
        m = self.__memory
        if not ((order in "CA" and m.flags.c_contiguous) or (order in "FA" and m.flags.f_contiguous)):
            raise NotImplementedError("ravel on non-contiguous array: a GPU flattens only a contiguous device array; "
                                      "pass the strided one to the kernel and index it there")
        return DeviceArray(m.ravel(order=order), self.role)

    def transpose(self, axes=None):
        """numba-cuda transposes a 2-D device array into a new one (a copy, made by a kernel), so
        a kernel that writes into `a.T` does not write into `a`; here too."""
        if axes and tuple(axes) == tuple(range(self.ndim)):
            return self
        if self.ndim != 2:
            raise NotImplementedError(f"transposing a non-2D DeviceNDArray isn't supported: this one has "
                                      f"{self.ndim} dimension(s); index it in the kernel the way you need")
        if axes is not None and set(axes) != {0, 1}:
            raise ValueError(f"invalid axes list {axes!r}")
        return DeviceArray(np.ascontiguousarray(self.__memory.T), "scratch")

    @property
    def T(self):
        return self.transpose()

    def squeeze(self, axis=None, stream=0):
        return DeviceArray(self.__memory.squeeze(axis), self.role)

    def view(self, dtype):
        """The same memory read as another dtype (a NumPy one, as on a GPU)."""
        from .hostapi import numpy_dtype

        return DeviceArray(self.__memory.view(numpy_dtype(dtype, "a device array's view()")), self.role)

    @property
    def flags(self) -> dict:
        m = self.__memory
        return {"C_CONTIGUOUS": bool(m.flags.c_contiguous), "F_CONTIGUOUS": bool(m.flags.f_contiguous)}

    def is_c_contiguous(self) -> bool:
        return bool(self.__memory.flags.c_contiguous)

    def is_f_contiguous(self) -> bool:
        return bool(self.__memory.flags.f_contiguous)

    def __repr__(self) -> str:
        return f"<device array {self.role} shape={self.shape} dtype={self.dtype}>"

    # -- what it refuses, with the reason ------------------------------------------------------
    def __setitem__(self, key, value):
        raise TypeError(_HOST_COPY.format(what="assigning into a device array"))

    def __iter__(self):
        raise TypeError(_HOST_COPY.format(what="iterating over a device array"))

    def __array__(self, *args, **kwargs):
        raise TypeError(_HOST_COPY.format(what="turning a device array into a numpy array"))

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(_HOST_MATHS.format(op=f"numpy.{getattr(func, '__name__', 'function')}"))

    def __bool__(self):
        raise TypeError(_HOST_COPY.format(what="the truth value of a device array"))

    def __float__(self):
        raise TypeError(_HOST_COPY.format(what="float() of a device array"))

    def __int__(self):
        raise TypeError(_HOST_COPY.format(what="int() of a device array"))

    def __index__(self):
        raise TypeError(_HOST_COPY.format(what="using a device array as an index"))

    def copy_to_host(self, ary=None, stream=0):
        if ary is not None:
            _compatible(self, ary)  # what a GPU refuses first
        raise TypeError(_HOST_COPY.format(what="copy_to_host()"))

    def copy_to_device(self, ary, stream=0):
        if getattr(ary, "size", 1) == 0:
            return None  # nothing to copy, as on a GPU
        _compatible(self, ary if isinstance(ary, DeviceArray) else np.asarray(ary))
        raise TypeError(_HOST_COPY.format(what="copy_to_device()"))

    def __getattr__(self, name):
        raise AttributeError(f"a device array in launch() has no `{name}` on the simulator (a GPU's device "
                             "arrays allow only shape, dtype, size, ndim, strides, nbytes, flags, views (slices, "
                             "reshape, ravel, squeeze, view) and passing to kernels in host code)")

    def __reduce__(self):
        raise TypeError("a device array cannot leave the process")


def _compatible(device, other) -> None:
    """numba-cuda's check_array_compatibility: a copy between arrays of other dtypes or shapes fails."""
    if device.dtype != other.dtype:
        raise TypeError(f"incompatible dtype: {device.dtype} vs. {other.dtype}: a copy to or from a device array "
                        "needs the same dtype on both sides")
    if _squeezed(device.shape) != _squeezed(other.shape):
        raise ValueError(f"incompatible shape: {device.shape} vs. {other.shape}: a copy to or from a device array "
                         "needs the same shape on both sides")


def _squeezed(shape) -> tuple:
    return tuple(d for d in shape if d != 1)


def _refuse(op):
    def method(self, *args, **kwargs):
        raise TypeError(_HOST_MATHS.format(op=op))
    method.__name__ = f"__{op}__"
    return method


for _op in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv", "mod",
            "rmod", "pow", "rpow", "matmul", "rmatmul", "neg", "pos", "abs", "lt", "le", "gt", "ge", "and", "rand",
            "or", "ror", "xor", "rxor", "lshift", "rlshift", "rshift", "rrshift", "invert", "iadd", "isub", "imul",
            "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "iand", "ior", "ixor", "ilshift", "irshift"):
    setattr(DeviceArray, f"__{_op}__", _refuse(_op))


def memory_of(value):
    """The numpy array behind a handle (for the launcher, never for host code); anything else as is."""
    if isinstance(value, DeviceArray):
        return value._DeviceArray__memory
    return value
