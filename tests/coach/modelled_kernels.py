"""A small task of our own, and honest candidates for it that the modelled time must tell apart:
the same bytes in one round or in many, coalesced or not, and more bytes through a scratch
buffer. Plain strings, no pytest: bench/modelled_time.py times the same candidates on the H200."""

import textwrap

TASK = "scale_scored"
TASK_TOML = """
title = "Scale, scored at one shape"
tolerance = { rtol = 1e-5, atol = 1e-5 }
sim_shapes = [[1], [7], [33], [64]]
gpu_shapes = [[1], [1000003]]
sim_scored = [4099]
"""
REFERENCE = "def reference(x):\n    return 2.0 * x\n"
INPUTS = ("import numpy as np\n\n\ndef make_inputs(rng, shape):\n"
          "    return (rng.standard_normal(shape).astype(np.float32),)\n\n\n"
          "def output_shape(shape):\n    return tuple(shape)\n")

HEAD = "from numba import cuda\n\nTPB = 32\n\n\n"

# One thread per element: every warp's one load is one round, and coalesced.
PER_ELEMENT = HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = 2.0 * x[i]


    def launch(out, x):
        n = x.shape[0]
        scale[(n + TPB - 1) // TPB, TPB](out, x, n)
    """)

# The same bytes from one warp: each lane walks the array 32 elements at a time. Every load is
# coalesced, but the warp waits for about n / 128 rounds one after another.
ONE_WARP_STRIDED = HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        t = cuda.threadIdx.x
        for i in range(t, n, TPB):
            out[i] = 2.0 * x[i]


    def launch(out, x):
        scale[1, TPB](out, x, x.shape[0])
    """)

# The same bytes, the same warp and the same trips, but each lane takes a contiguous chunk: the
# lanes of one load are a chunk apart, so each request touches 32 lines instead of one. But each
# lane reads on in the sector it has, so fewer of its rounds wait on DRAM than the strided walk's.
ONE_WARP_CHUNKED = HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        t = cuda.threadIdx.x
        chunk = (n + TPB - 1) // TPB
        for i in range(t * chunk, min(n, (t + 1) * chunk)):
            out[i] = 2.0 * x[i]


    def launch(out, x):
        scale[1, TPB](out, x, x.shape[0])
    """)

# One element per thread in blocks of 1024 threads, each block a tile of 1024 elements: a warp's
# lanes read 32 neighbours, one line.
COALESCED_TILES = HEAD + textwrap.dedent("""
    @cuda.jit
    def scale(out, x, n):
        j = cuda.threadIdx.x
        e = cuda.blockIdx.x * 1024 + j
        if e < n:
            out[e] = 2.0 * x[e]


    def launch(out, x):
        n = x.shape[0]
        scale[(n + 1023) // 1024, 1024](out, x, n)
    """)

# The same tiles, threads and bytes, each element still read once, but a tile is walked as a
# 32 x 32 square down its columns: a warp's lanes read 32 elements 32 apart, 32 lines.
TRANSPOSED_TILES = COALESCED_TILES.replace("e = cuda.blockIdx.x * 1024 + j",
                                           "e = cuda.blockIdx.x * 1024 + (j % 32) * 32 + j // 32")

# One element per thread again, through a scratch copy: twice the bytes and a second launch.
THROUGH_SCRATCH = HEAD + textwrap.dedent("""
    @cuda.jit
    def copy(dst, x, n):
        i = cuda.grid(1)
        if i < n:
            dst[i] = x[i]


    @cuda.jit
    def scale(out, x, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = 2.0 * x[i]


    def launch(out, x):
        n = x.shape[0]
        tmp = cuda.device_array_like(x)
        copy[(n + TPB - 1) // TPB, TPB](tmp, x, n)
        scale[(n + TPB - 1) // TPB, TPB](out, tmp, n)
    """)

CANDIDATES = {"per_element": PER_ELEMENT, "coalesced_tiles": COALESCED_TILES, "transposed_tiles": TRANSPOSED_TILES,
              "one_warp_strided": ONE_WARP_STRIDED, "one_warp_chunked": ONE_WARP_CHUNKED,
              "through_scratch": THROUGH_SCRATCH}


def write_task(root, naive: str = ONE_WARP_STRIDED) -> str:
    """The task's folder under `root`, with `naive` as its baseline; returns the task's name."""
    from pathlib import Path

    folder = Path(root) / TASK
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.toml").write_text(TASK_TOML)
    (folder / "reference.py").write_text(REFERENCE)
    (folder / "inputs.py").write_text(INPUTS)
    (folder / "naive.py").write_text(naive)
    return TASK
