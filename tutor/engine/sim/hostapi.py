"""What numba-cuda's host API accepts, and what it says when it refuses, on the simulator.

"The same file runs unchanged on both" holds for host code only if the simulator refuses what a GPU
refuses: `cuda.device_array(n, dtype=numba.float32)` must fail here as it fails on an H100, not
verify. Each check below follows numba-cuda 0.30 (api_util.prepare_shape_strides_dtype,
DeviceNDArrayBase.__init__, errors.normalize_kernel_dimensions, dispatcher.__getitem__) and
cuda.core's LaunchConfig and launch, raises the exception type they raise, and starts its message
with their words, then says what to write instead. tests/engine/host_api_catalogue.py lists every
case with the GPU's answer.
"""

from __future__ import annotations

import numbers

import numpy as np

MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK = (1024, 1024, 64)  # threads along each axis of a block (maxThreadsDim, every GPU since cc 2.0)
MAX_GRID = (2 ** 31 - 1, 65535, 65535)


MAX_DYNAMIC_SHARED = 48 * 1024  # bytes a launch may ask for without opting in to more


class CUDAError(RuntimeError):
    """What cuda.core raises when the driver refuses a launch (its CUDAError, by name)."""


class CudaAPIError(RuntimeError):
    """What numba-cuda raises when the driver refuses an allocation (its CudaAPIError, by name)."""


class Stream:
    """cuda.stream(), cuda.default_stream(): the simulator runs every launch at once, in order, so
    a stream only has to be accepted where numba-cuda accepts one."""

    def synchronize(self):
        pass

    def auto_synchronize(self):
        return _Synchronized()

    def __repr__(self):
        return "<simulated CUDA stream>"


class _Synchronized:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def numpy_dtype(dtype, where: str) -> np.dtype:
    """np.dtype(dtype), as numba-cuda's host API reads a dtype, with a learner's fix on refusal."""
    if isinstance(getattr(dtype, "np_dtype", None), np.dtype):  # fakecuda's ScalarType: numba.float32
        numpy_name = "bool_" if dtype.np_dtype.name == "bool" else dtype.np_dtype.name
        raise TypeError(
            f"Cannot interpret '{dtype.name}' as a data type: dtype=numba.{dtype.name} in {where} is a Numba type, "
            f"and numba-cuda's host API takes a NumPy dtype: write np.{numpy_name} (or '{dtype.np_dtype.name}'). "
            "Numba's types are for signatures and for cuda.shared.array / cuda.local.array inside a kernel.")
    try:
        return np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{e}: {where} takes a NumPy dtype, such as np.float32 or 'float32'") from None


def array_shape(shape, where: str, itemsize: int) -> tuple:
    """A device array's shape as numba-cuda reads it: an int, or a sequence of integers."""
    if isinstance(shape, (float, np.floating)) or (isinstance(shape, np.ndarray)
                                                    and np.issubdtype(shape.dtype, np.floating)):
        raise TypeError(f"shape must be an integer or tuple of integers: {where} was given {shape!r}, a float. "
                        "Sizes are whole numbers: divide with // (n // 2), or round up with (n + 1) // 2")
    if isinstance(shape, int):
        shape = (shape,)
    else:
        try:
            shape = tuple(shape)
        except TypeError:
            kind = type(shape)
            name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
            raise TypeError(f"'{name}' object is not iterable: {where} takes a Python int or a tuple of ints as "
                            f"its shape, and {shape!r} is neither; write int(...) around it") from None
    for s in shape:
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"shape elements must be integers, got {type(s).__name__}: {where} was given {shape!r}. "
                            "Divide sizes with //, not /")
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        advice = f"{where} was given the shape {shape}: a size cannot be negative. Check the arithmetic that sizes it"
        if _allocation_bytes(shape, itemsize) < 0:
            raise OverflowError(f"can't convert negative value to size_t: {advice}")
        raise CudaAPIError(f"Call to cuMemAlloc results in CUDA_ERROR_INVALID_VALUE: {advice}")
    return shape


def launch_config(config) -> tuple:
    """kernel[blocks, threads], kernel[blocks, threads, stream] or kernel[blocks, threads, stream,
    shared_bytes], checked as numba-cuda's dispatcher checks it when the kernel is subscripted:
    (blocks, threads, shared_bytes), blocks and threads as tuples of 1 to 3 integers."""
    usage = ("launch a kernel as kernel[blocks, threads](...), or kernel[blocks, threads, 0, shared_bytes](...) "
             "for dynamic shared memory")
    if not isinstance(config, tuple):
        raise TypeError(f"object of type '{type(config).__name__}' has no len(): kernel[{config!r}] gives one "
                        f"thing where a launch needs blocks and threads; {usage}")
    if len(config) not in (2, 3, 4):
        raise ValueError(f"must specify at least the griddim and blockdim, and at most a stream and the shared "
                         f"memory size besides: kernel[...] was given {len(config)} items; {usage}")
    blocks, threads = config[0], config[1]
    if isinstance(blocks, list) or isinstance(threads, list):  # seen on an H100: the dispatcher hashes them
        raise TypeError(f"unhashable type: 'list': kernel[{blocks!r}, {threads!r}] gives a list where numba-cuda "
                        "takes a number or a tuple; write kernel[(1,), (8,)] or kernel[1, 8]")
    if blocks is None or threads is None:
        raise ValueError(f"Kernel launch configuration was not specified: kernel[{blocks!r}, {threads!r}]; {usage}")
    blocks, threads = _dims(blocks, "griddim", "blocks"), _dims(threads, "blockdim", "threads")
    stream = config[2] if len(config) >= 3 else 0
    if stream and not isinstance(stream, Stream):
        raise TypeError(f"Expected a Stream object, ExperimentalStream, GraphBuilder, or 0, got "
                        f"{type(stream).__name__}: a launch's third item is a stream (cuda.stream()) or 0; the shared "
                        "memory size comes fourth: kernel[blocks, threads, 0, shared_bytes]")
    shared_bytes = config[3] if len(config) == 4 else 0
    return blocks, threads, shared_bytes


def check_launchable(blocks: tuple, threads: tuple, shared_bytes) -> None:
    """What cuda.core's LaunchConfig and the driver refuse when the configured kernel is called."""
    for dims, what, plural in ((blocks, "grid", "blocks"), (threads, "block", "threads")):
        if not all(type(d) is int or isinstance(d, bool) for d in dims):
            raise ValueError(f"LaunchConfig.{what} must be an int, or a tuple with up to 3 ints (got {dims}): numpy "
                             f"integers are refused too; write int(...) around the number of {plural}")
        if any(d < 1 for d in dims):
            raise ValueError(f"LaunchConfig.{what} values must be >= 1 (got {dims}): a launch needs at least one "
                             f"of each; check the arithmetic that counts the {plural}")
    b = tuple(threads) + (1,) * (3 - len(threads))
    if b[0] * b[1] * b[2] > MAX_THREADS_PER_BLOCK:
        raise CUDAError(f"CUDA_ERROR_INVALID_VALUE: a block of {b[0] * b[1] * b[2]} threads {tuple(threads)} cannot "
                        f"launch: a block holds at most {MAX_THREADS_PER_BLOCK} threads. Launch more blocks of fewer "
                        "threads, e.g. kernel[(n + 255) // 256, 256]")
    for n, most, axis in zip(b, MAX_BLOCK, "xyz"):
        if n > most:
            raise CUDAError(f"CUDA_ERROR_INVALID_VALUE: a block of {tuple(threads)} threads cannot launch: a block "
                            f"holds at most {most} threads along {axis} ({MAX_BLOCK[0]} along x and y, {MAX_BLOCK[2]} "
                            f"along z, {MAX_THREADS_PER_BLOCK} in all). Put the larger count on x")
    if isinstance(shared_bytes, numbers.Real) and not 0 <= shared_bytes <= MAX_DYNAMIC_SHARED:
        raise CUDAError(f"CUDA_ERROR_INVALID_VALUE: a launch asked for {shared_bytes} bytes of dynamic shared memory; "
                        f"it may ask for 0 to {MAX_DYNAMIC_SHARED} (48 KiB): the fourth item of "
                        "kernel[blocks, threads, 0, shared_bytes] is the bytes one block's cuda.shared.array(0, ...) "
                        "holds")
    g = tuple(blocks) + (1,) * (3 - len(blocks))
    for n, most, axis in zip(g, MAX_GRID, "xyz"):
        if n > most:
            raise CUDAError(f"CUDA_ERROR_INVALID_VALUE: {n} blocks along {axis} cannot launch: a grid holds at most "
                            f"{most} along {axis}. Give each block or thread more of the work")


def _allocation_bytes(shape: tuple, itemsize: int) -> int:
    """The bytes numba-cuda asks cuMemAlloc for (cext/mviewbuf.c's extents of C-order strides):
    negative for some negative shapes, which the binding refuses as an OverflowError, and zero for
    others, which the driver refuses."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.insert(0, step)
        step *= n
    start = end = 0
    for n, stride in zip(shape, strides):
        if n == 0:
            return 0
        if stride > 0:
            end += stride * (n - 1)
        elif stride < 0:
            start += stride * (n - 1)
    return end + itemsize - start


def _dims(dim, name: str, plural: str) -> tuple:
    dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    if len(dims) > 3:
        raise ValueError(f"{name} must be a sequence of 1, 2 or 3 integers, got {dims!r}: the {plural} of a launch "
                         "have at most three dimensions (x, y, z)")
    if not all(isinstance(v, numbers.Integral) for v in dims):
        raise TypeError(f"{name} must be a sequence of integers, got {dims!r}: the number of {plural} is a whole "
                        "number; divide with // and round up, e.g. (n + 255) // 256, not (n + 255) / 256")
    return tuple(dims)
