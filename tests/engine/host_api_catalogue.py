"""What numba-cuda on a GPU does with each host call a learner's file may make, as data.

Each entry is a small module whose `launch(out)` (out: a float32 device array of 8 zeros) makes one
host call, and what numba-cuda 0.30 with cuda.core 1.2 does with it on a real GPU: accepts it ("ok")
or refuses it with an exception of that type, whose message holds `gist`. The GPU's answers were
found by reading numba-cuda's source (api.py, api_util.py, cudadrv/devicearray.py and
dummyarray.py, errors.normalize_kernel_dimensions, dispatcher.py) and cuda.core's LaunchConfig; a
kernel's own code (shared, local and const arrays) is judged by numba-cuda's compiler, which runs
here without a GPU. `unsure` says where the answer is a reading that no GPU has confirmed yet.
The answers the reading was least sure of (the driver's refusals, negative shapes, transpose's copy,
reshape of a strided view) were run once on an H100 (numba-cuda 0.30.4, cuda.core 1.2.0): that run
corrected reshape_strided, and showed launch_numpy_int_blocks to depend on cuda.core's release.

test_host_api.py runs every entry on our simulator (which must answer as the GPU does), on Numba's
own simulator (where it answers otherwise, `numba_sim` records what it does instead: a known
difference, not a failure) and, marked gpu, on a real GPU.

`tutor` marks what the tutor refuses on purpose though a GPU accepts it: host copies in launch()
(copy_to_host, writing into or reading one element of a device array). launch() only sizes,
allocates and launches; a launch() that copied the inputs to the host and did the maths there was
once scored a 257x "faster" reduction. The coaching screen refuses these on both backends
(static_rules: host-copy, host-read, host-write), and our simulator's device arrays refuse them too.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

OK = "ok"
COMPILE = "TypingError"  # numba-cuda's compiler refuses the kernel (numba.core.errors.TypingError)

HEADER = '''\
import math

import numba
import numpy as np
from numba import cuda

N = 8
TABLE = np.arange(8, dtype=np.float32)


@cuda.jit
def fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = 1.0


@cuda.jit
def fill2(a):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] = 1.0
'''


@dataclass(frozen=True)
class HostCall:
    name: str
    source: str
    gpu: str  # OK, or the exception's type name on a GPU
    gist: str = ""  # words of the GPU's message
    unsure: str = ""  # why the GPU's answer is a reading that no GPU has confirmed
    numba_sim: str | None = None  # what Numba's simulator does where it differs from the GPU
    tutor: str = ""  # why the tutor refuses what a GPU accepts
    older_accept: str = ""  # which releases of numba-cuda's stack accept what the newest refuses

    def __repr__(self) -> str:  # pytest ids
        return self.name


def host(name: str, body: str, gpu: str = OK, gist: str = "", **more) -> HostCall:
    """An entry whose launch(out) is `body`."""
    return HostCall(name, HEADER + "\n\ndef launch(out):\n" + textwrap.indent(textwrap.dedent(body), "    "),
                    gpu, gist, **more)


def kernel(name: str, body: str, gpu: str = OK, gist: str = "", launch: str = "k[1, 8](out)",
           params: str = "a", **more) -> HostCall:
    """An entry whose kernel `k` is `body` (a is out), launched by `launch`."""
    source = (HEADER + f"\n\n@cuda.jit\ndef k({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
              + "\n\ndef launch(out):\n    " + launch + "\n")
    return HostCall(name, source, gpu, gist, **more)


HOST_COPY = "a host copy: the tutor's launch() only sizes, allocates and launches"

CATALOGUE: list[HostCall] = [
    # -- cuda.device_array's dtype: numba-cuda calls np.dtype(dtype) (api_util.prepare_shape_strides_dtype)
    host("dtype_np_float32", "a = cuda.device_array(8, dtype=np.float32)\nfill[1, 8](a)"),
    host("dtype_string", "a = cuda.device_array(8, dtype='float32')\nfill[1, 8](a)"),
    host("dtype_np_dtype", "a = cuda.device_array(8, dtype=np.dtype('float32'))\nfill[1, 8](a)"),
    host("dtype_short_string", "a = cuda.device_array(8, 'f4')\nfill[1, 8](a)"),
    host("dtype_numba_float32", "a = cuda.device_array(8, dtype=numba.float32)", "TypeError",
         "Cannot interpret 'float32' as a data type"),
    host("dtype_numba_types_float32", "a = cuda.device_array(8, dtype=numba.types.float32)", "TypeError",
         "Cannot interpret 'float32' as a data type"),
    host("dtype_numba_int32", "a = cuda.device_array(8, numba.int32)", "TypeError",
         "Cannot interpret 'int32' as a data type"),
    host("dtype_python_float", "a = cuda.device_array(8, dtype=float)\nassert a.dtype == np.float64\nfill[1, 8](a)"),
    host("dtype_python_int", "a = cuda.device_array(8, dtype=int)\nassert a.dtype == np.int64\nfill[1, 8](a)"),
    host("dtype_bool", "a = cuda.device_array(8, dtype=np.bool_)\nassert a.dtype == np.bool_"),
    host("dtype_default_is_float64", "a = cuda.device_array(8)\nassert a.dtype == np.float64\nfill[1, 8](a)"),
    host("dtype_bad_string", "a = cuda.device_array(8, dtype='floot32')", "TypeError",
         "data type 'floot32' not understood"),
    # -- its shape: an int, or a sequence of integers (api_util, DeviceNDArrayBase.__init__)
    host("shape_int", "a = cuda.device_array(8, np.float32)\nassert a.shape == (8,)\nfill[1, 8](a)"),
    host("shape_tuple", "a = cuda.device_array((2, 4), np.float32)\nassert a.shape == (2, 4)\nfill2[1, (2, 4)](a)"),
    host("shape_list", "a = cuda.device_array([2, 4], np.float32)\nassert a.shape == (2, 4)\nfill2[1, (2, 4)](a)"),
    host("shape_from_out", "a = cuda.device_array(out.shape, out.dtype)\nfill[1, 8](a)"),
    host("shape_zero", "a = cuda.device_array(0, np.float32)\nassert a.size == 0"),
    host("shape_zero_in_tuple", "a = cuda.device_array((0, 4), np.float32)\nassert a.shape == (0, 4)"),
    host("shape_negative", "a = cuda.device_array(-4, np.float32)", "OverflowError",
         "can't convert negative value to size_t", numba_sim="ValueError"),
    host("shape_negative_in_tuple", "a = cuda.device_array((2, -4), np.float32)", "CudaAPIError",
         "CUDA_ERROR_INVALID_VALUE", numba_sim="ValueError"),
    host("shape_float", "a = cuda.device_array(4.0, np.float32)", "TypeError",
         "shape must be an integer or tuple of integers"),
    host("shape_true_division", "a = cuda.device_array(out.size / 2, np.float32)", "TypeError",
         "shape must be an integer or tuple of integers"),
    host("shape_float_in_tuple", "a = cuda.device_array((2, 4.0), np.float32)", "TypeError",
         "shape elements must be integers, got float"),
    host("shape_numpy_int", "a = cuda.device_array(np.int64(8), np.float32)", "TypeError",
         "'numpy.int64' object is not iterable", numba_sim="ok"),
    host("shape_numpy_int_in_tuple", "a = cuda.device_array((np.int64(2), 4), np.float32)\nfill2[1, (2, 4)](a)"),
    # -- device_array_like
    host("device_array_like_device", "a = cuda.device_array_like(out)\nassert a.dtype == np.float32\nfill[1, 8](a)"),
    host("device_array_like_host", "a = cuda.device_array_like(np.zeros((2, 4), np.float64))\n"
                                   "assert a.shape == (2, 4) and a.dtype == np.float64"),
    # -- copies between host and device (devicearray.py: auto_device, copy_to_device, copy_to_host)
    host("to_device_array", "a = cuda.to_device(np.arange(8, dtype=np.float32))\nfill[1, 8](a)"),
    host("to_device_list", "a = cuda.to_device([1.0, 2.0])\nassert a.shape == (2,) and a.dtype == np.float64"),
    host("to_device_const_table", "a = cuda.to_device(TABLE)\nassert a.dtype == np.float32\nfill[1, 8](a)"),
    host("copy_to_host", "fill[1, 8](out)\nh = out.copy_to_host()", tutor=HOST_COPY),
    host("copy_to_host_into", "h = np.empty(8, np.float32)\nout.copy_to_host(h)", tutor=HOST_COPY),
    host("copy_to_host_into_wrong_shape", "out.copy_to_host(np.empty(4, np.float32))", "ValueError",
         "incompatible shape"),
    host("copy_to_device", "out.copy_to_device(np.ones(8, np.float32))", tutor=HOST_COPY),
    host("copy_to_device_wrong_shape", "out.copy_to_device(np.ones(4, np.float32))", "ValueError",
         "incompatible shape"),
    host("copy_to_device_wrong_dtype", "out.copy_to_device(np.ones(8, np.float64))", "TypeError",
         "incompatible dtype"),
    # -- launch configurations (dispatcher.__getitem__, errors.normalize_kernel_dimensions,
    #    cuda.core.LaunchConfig, then the driver at launch)
    host("launch_ints", "fill[1, 8](out)"),
    host("launch_tuples", "fill[(1,), (8,)](out)"),
    host("launch_lists", "fill[[1], [8]](out)", "TypeError", "unhashable type: 'list'", numba_sim="ok"),  # seen on an H100
    host("launch_2d", "fill2[(1, 1), (2, 4)](out.reshape(2, 4))"),
    host("launch_size_arithmetic", "fill[(out.size + 3) // 4, 4](out)"),
    host("launch_math_ceil", "fill[math.ceil(out.size / 4), 4](out)"),
    host("launch_stream_zero", "fill[1, 8, 0](out)"),
    host("launch_stream_none", "fill[1, 8, None](out)"),
    host("launch_dynamic_shared", "fill[1, 8, 0, 64](out)"),
    host("launch_new_stream", "s = cuda.stream()\nfill[1, 8, s](out)\ns.synchronize()"),
    host("launch_default_stream", "fill[1, 8, cuda.default_stream()](out)"),
    host("launch_stream_int", "fill[1, 8, 1](out)", "TypeError", "Expected a Stream object", numba_sim="ok"),
    host("launch_float_blocks", "fill[2.0, 4](out)", "TypeError", "griddim must be a sequence of integers"),
    host("launch_true_division_blocks", "fill[(out.size + 3) / 4, 4](out)", "TypeError",
         "griddim must be a sequence of integers"),
    host("launch_float_threads", "fill[1, 8.0](out)", "TypeError", "blockdim must be a sequence of integers"),
    host("launch_zero_blocks", "fill[0, 8](out)", "ValueError", "LaunchConfig.grid values must be >= 1",
         numba_sim="ok"),
    host("launch_negative_blocks", "fill[-1, 8](out)", "ValueError", "LaunchConfig.grid values must be >= 1"),
    host("launch_zero_threads", "fill[1, 0](out)", "ValueError", "LaunchConfig.block values must be >= 1",
         numba_sim="ok"),
    host("launch_numpy_int_blocks", "fill[np.int64(1), 8](out)", "ValueError",
         "LaunchConfig.grid must be an int, or a tuple with up to 3 ints", numba_sim="ok",
         older_accept="cuda.core 1.2.0 (seen on an H100) accepts numpy integers; 1.2.2 refuses them"),
    host("launch_bool_blocks", "fill[True, 8](out)"),
    host("launch_four_dims", "fill[(1, 1, 1, 1), 8](out)", "ValueError",
         "griddim must be a sequence of 1, 2 or 3 integers"),
    host("launch_too_many_threads", "fill[1, 1025](out)", "CUDAError", "CUDA_ERROR_INVALID_VALUE", numba_sim="ok"),
    host("launch_too_many_threads_3d", "fill[1, (32, 32, 2)](out)", "CUDAError", "CUDA_ERROR_INVALID_VALUE",
         numba_sim="ok"),
    host("launch_block_z_64", "fill[1, (1, 1, 64)](out)"),
    host("launch_block_z_65", "fill[1, (1, 1, 65)](out)", "CUDAError", "CUDA_ERROR_INVALID_VALUE", numba_sim="ok",
         unsure="the driver's maxThreadsDim (1024, 1024, 64), read in the CUDA programming guide; no GPU ran it"),
    host("launch_block_y_1024", "fill[1, (1, 1024)](out)"),
    host("launch_48k_shared", "fill[1, 8, 0, 48 * 1024](out)"),
    host("launch_too_much_shared", "fill[1, 8, 0, 64 * 1024](out)", "CUDAError", "CUDA_ERROR_INVALID_VALUE",
         numba_sim="ok"),
    host("launch_negative_shared", "fill[1, 8, 0, -1](out)", "CUDAError", "CUDA_ERROR_INVALID_VALUE",
         numba_sim="ValueError"),
    host("launch_float_shared", "fill[1, 8, 0, 1.5](out)", numba_sim="TypeError"),
    host("launch_one_item", "fill[1](out)", "TypeError", "has no len()"),
    host("launch_five_items", "fill[1, 8, 0, 0, 0](out)", "ValueError", "must specify at least the griddim",
         numba_sim="ok"),
    host("launch_called_directly", "fill(out)", "ValueError", "Kernel launch configuration was not specified"),
    # -- streams and synchronisation
    host("synchronize", "fill[1, 8](out)\ncuda.synchronize()"),
    host("default_stream_synchronize", "cuda.default_stream().synchronize()"),
    # -- views of a device array (DeviceNDArray: _do_getitem, reshape, ravel, transpose, view)
    host("facts", "assert out.shape == (8,) and out.size == 8 and out.ndim == 1 and len(out) == 8\n"
                  "assert out.dtype == np.float32 and out.nbytes == 32 and out.strides == (4,)"),
    host("slice", "fill[1, 4](out[2:6])"),
    host("slice_step", "fill[1, 4](out[::2])"),
    host("reshape_args", "fill2[1, (2, 4)](out.reshape(2, 4))"),
    host("reshape_tuple", "fill2[1, (2, 4)](out.reshape((2, 4)))"),
    host("reshape_minus_one", "a = out.reshape(-1, 4)\nassert a.shape == (2, 4)"),
    host("reshape_wrong_size", "out.reshape(3, 3)", "ValueError", "size"),
    host("reshape_strided", "out[::2].reshape(2, 2)", "NotImplementedError", "operation requires copying",
         numba_sim="ok"),
    host("reshape_needs_copy", "out.reshape(2, 4)[:, :2].reshape(4)", "NotImplementedError",
         "reshape would require copy", numba_sim="ok"),
    host("ravel", "fill[1, 8](out.reshape(2, 4).ravel())"),
    host("ravel_strided", "out[::2].ravel()", "NotImplementedError", "ravel on non-contiguous array",
         numba_sim="ok"),
    host("transpose_1d", "out.T", "NotImplementedError", "transposing a non-2D DeviceNDArray isn't supported",
         numba_sim="ok"),
    host("transpose_2d_is_a_copy", "t = out.reshape(2, 4).T\nassert t.shape == (4, 2)\nfill2[1, (4, 2)](t)"),
    host("view_dtype", "a = out.view(np.int32)\nassert a.dtype == np.int32 and a.shape == (8,)"),
    host("flags", "assert out.flags['C_CONTIGUOUS']\nassert out.is_c_contiguous()"),
    host("index_one_element", "x = out[0]", tutor=HOST_COPY),
    host("assign_into", "out[2:6] = 0", tutor=HOST_COPY),
    # -- arrays inside kernels: numba-cuda's compiler (cudadecl, typing/npydecl.parse_dtype)
    kernel("shared_numba_dtype", "s = cuda.shared.array(8, numba.float32)\ni = cuda.threadIdx.x\ns[i] = i\n"
                                 "cuda.syncthreads()\na[i] = s[7 - i]"),
    kernel("shared_string_dtype", "s = cuda.shared.array(8, 'float32')\ni = cuda.threadIdx.x\ns[i] = i\na[i] = s[i]"),
    kernel("shared_numpy_dtype", "s = cuda.shared.array(8, np.float32)\ni = cuda.threadIdx.x\ns[i] = i\na[i] = s[i]"),
    kernel("shared_tuple_shape", "s = cuda.shared.array((2, 4), numba.float32)\ni = cuda.threadIdx.x\n"
                                 "s[i // 4, i % 4] = i\na[i] = s[i // 4, i % 4]"),
    kernel("shared_constant_shape", "s = cuda.shared.array(N, numba.float32)\ni = cuda.threadIdx.x\ns[i] = i\na[i] = s[i]"),
    kernel("shared_keywords", "s = cuda.shared.array(shape=N, dtype=numba.float32)\ni = cuda.threadIdx.x\n"
                              "s[i] = i\na[i] = s[i]"),
    kernel("shared_runtime_shape", "s = cuda.shared.array(a.size, numba.float32)\ni = cuda.threadIdx.x\n"
                                   "s[i] = i\na[i] = s[i]", COMPILE, "shared.array", numba_sim="ok"),
    kernel("shared_argument_shape", "s = cuda.shared.array(n, numba.float32)\ni = cuda.threadIdx.x\n"
                                    "s[i] = i\na[i] = s[i]", COMPILE, "shared.array", launch="k[1, 8](out, 8)",
           params="a, n", numba_sim="ok"),
    kernel("shared_bad_dtype", "s = cuda.shared.array(8, 'floot32')\ni = cuda.threadIdx.x\ns[i] = i\na[i] = s[i]",
           COMPILE, "floot32", numba_sim="TypeError"),
    kernel("shared_dynamic", "s = cuda.shared.array(0, numba.float32)\ni = cuda.threadIdx.x\ns[i] = i\n"
                             "cuda.syncthreads()\na[i] = s[7 - i]", launch="k[1, 8, 0, 32](out)"),
    kernel("local_numba_dtype", "t = cuda.local.array(4, numba.float32)\nt[0] = 1.0\na[cuda.threadIdx.x] = t[0]"),
    kernel("local_string_dtype", "t = cuda.local.array(4, 'float32')\nt[0] = 1.0\na[cuda.threadIdx.x] = t[0]"),
    kernel("local_numpy_dtype", "t = cuda.local.array(4, np.float32)\nt[0] = 1.0\na[cuda.threadIdx.x] = t[0]"),
    kernel("local_tuple_shape", "t = cuda.local.array((2, 2), numba.float32)\nt[1, 1] = 1.0\n"
                                "a[cuda.threadIdx.x] = t[1, 1]"),
    kernel("local_runtime_shape", "t = cuda.local.array(a.size, numba.float32)\nt[0] = 1.0\n"
                                  "a[cuda.threadIdx.x] = t[0]", COMPILE, "local.array", numba_sim="ok"),
    kernel("const_array_like", "c = cuda.const.array_like(TABLE)\ni = cuda.threadIdx.x\na[i] = c[i]"),
]
