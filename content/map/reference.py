from numba import cuda


@cuda.jit
def kernel(out, a):
    # Every thread runs this same code.
    # threadIdx.x tells it which element is its own.
    local_i = cuda.threadIdx.x
    # One read, one write: this thread's element
    # of `a`, plus ten, into the same slot of `out`.
    out[local_i] = a[local_i] + 10
