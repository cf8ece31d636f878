"""Small kernels that more than one test module runs."""

DOT_NO_BARRIER = """
    import numba
    from numba import cuda

    TPB = 8


    @cuda.jit
    def kernel(out, a, b, size):
        cache = cuda.shared.array(TPB, numba.float32)
        i = cuda.grid(1)
        local_i = cuda.threadIdx.x
        if i < size:
            cache[local_i] = a[i] * b[i]
        else:
            cache[local_i] = 0
        if local_i == 0:
            total = numba.float32(0)
            for k in range(TPB):
                total += cache[k]
            out[0] = total
    """
