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
        return DeviceArray(self.__memory.reshape(*shape, order=order), self.role)

    def ravel(self, order="C"):
        if not self.__memory.flags.c_contiguous:
            raise NotImplementedError("ravel() of a non-contiguous device array is not supported on a GPU")
        return DeviceArray(self.__memory.ravel(order=order), self.role)

    def transpose(self, axes=None):
        return DeviceArray(self.__memory.transpose(axes), self.role)

    @property
    def T(self):
        return self.transpose()

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

    def copy_to_host(self, *args, **kwargs):
        raise TypeError(_HOST_COPY.format(what="copy_to_host()"))

    def copy_to_device(self, *args, **kwargs):
        raise TypeError(_HOST_COPY.format(what="copy_to_device()"))

    def __getattr__(self, name):
        raise AttributeError(f"a device array in launch() has no `{name}` on the simulator (a GPU's device "
                             "arrays allow only shape, dtype, size, ndim, strides, nbytes, views and passing to "
                             "kernels in host code)")

    def __reduce__(self):
        raise TypeError("a device array cannot leave the process")


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
