"""What a kernel file's Numba-CUDA can and cannot ask the hardware for: the evidence behind the
issue's "name the instruction or feature" ("Expert kernels that beat the libraries").

    python bench/numba_limits.py

No GPU needed: each small kernel below is compiled to sm_90 PTX by Numba's own compiler
(`cuda.compile_ptx`) and its memory instructions are counted. The library kernels we are measured
against (cuBLAS's fp32 GEMM, FlexAttention's Triton kernels, torch's reductions) read global memory
128 bits per instruction and copy tiles to shared memory with `cp.async` behind the arithmetic; the
rows below show which of these a learner's kernel file can reach:

- four neighbouring float32 reads from a global array stay four `ld.global.f32`: the array argument
  carries no alignment NVVM could use, and no keyword of Numba's kernel API adds one, so the
  128-bit `ld.global.v4.f32` is out of reach (also through a complex64 view of the same bytes);
- from a shared array declared with `alignment=16`, the same four reads become one
  `ld.shared.v4.f32` when the index is visibly a non-negative multiple of 4 (the experts' layout and
  their `& POS` masks): without the mask, the wraparound Numba adds for negative indices keeps them
  four loads, and without the alignment so does NVVM;
- `numba.cuda` exposes no asynchronous copy, pipeline or barrier-arrive API (no `cp.async`,
  `cp.async.bulk`/TMA, `mbarrier`), so a tile's global-to-shared copy cannot overlap the maths except
  by staging it through registers, which the experts do.

Numba's extension API (`numba.cuda.extending.intrinsic` with an inline-PTX call, the way
numba-cuda's own cache-hint loads are built) could emit any of them; a kernel file cannot use it,
since the same file must run on the simulator, and the loader admits imports of numba's kernel-facing
modules (`numba.cuda`, its types, libdevice and random), math and numpy only
(`tutor/engine/loading/module_builder.py`, IMPORTABLE), never `numba.cuda.extending`.
"""

from __future__ import annotations

import re
from collections import Counter

PATTERN = re.compile(r"\b((?:ld|st)\.(?:global|shared)(?:\.\w+)*|cp\.async[\.\w]*|mbarrier[\.\w]*)")


def kernels():
    from numba import cuda, float32

    def four_global(out, a):
        i = cuda.grid(1)
        base = (4 * i) & 0x3FFFFFFF  # visibly >= 0 and a multiple of 4
        out[i] = a[base] + a[base + 1] + a[base + 2] + a[base + 3]

    def four_global_complex64(out, a):
        # the same bytes as complex64 pairs: still one 32-bit load a float
        i = cuda.grid(1)
        x = a[(2 * i) & 0x3FFFFFFF]
        y = a[(2 * i + 1) & 0x3FFFFFFF]
        out[i] = x.real + x.imag + y.real + y.imag

    def shared_kernel(aligned: bool, masked: bool):
        align = 16 if aligned else None

        def kernel(out, a):
            s = cuda.shared.array(1024, float32, alignment=align)
            t = cuda.threadIdx.x
            for r in range(4):
                s[4 * t + r] = a[4 * t + r]
            cuda.syncthreads()
            base = 4 * ((t * 5) % 256)
            if masked:
                base = base & 1023  # folds away Numba's negative-index wraparound
            out[t] = s[base] + s[base + 1] + s[base + 2] + s[base + 3]
        return kernel

    return [
        ("4 global float32 neighbours", four_global, "float32[::1]"),
        ("the same bytes as 2 complex64", four_global_complex64, "complex64[::1]"),
        ("4 shared, alignment=16, index masked", shared_kernel(True, True), "float32[::1]"),
        ("4 shared, alignment=16, signed index", shared_kernel(True, False), "float32[::1]"),
        ("4 shared, no alignment, index masked", shared_kernel(False, True), "float32[::1]"),
    ]


def main() -> None:
    from numba import cuda

    print("numba.cuda names for asynchronous copies, pipelines or barriers:",
          [n for n in dir(cuda) if re.search(r"async|pipeline|memcpy|mbarrier|tma", n, re.I)] or "none")
    print(f"{'kernel':<38} memory instructions in its sm_90 PTX")
    for label, fn, arg in kernels():
        ptx, _ = cuda.compile_ptx(fn, f"void(float32[::1], {arg})", cc=(9, 0))
        counts = Counter(PATTERN.findall(ptx))
        print(f"{label:<38} " + ", ".join(f"{n} x{c}" for n, c in sorted(counts.items())))


if __name__ == "__main__":
    main()
