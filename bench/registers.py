"""Registers, spills and blocks per SM of every walkthrough step's kernels, as ptxas builds them for
an H100/H200 (sm_90), with no GPU: the PTX numba-cuda builds for a launch on an H100 (cc 9.0, link-time optimised, the
decorator's own options: compile.launched_ptx, which the simulator's launch check counts too) goes
through nvJitLink, whose ptxas reports each kernel's registers, stack frame (bytes a thread keeps
in local memory: local arrays it could not keep in registers, and spilled registers) and shared
memory. The launch is planned at the task's largest GPU shape (launch() recorded, no kernel run),
which gives each kernel's block size; the blocks an SM holds follow from Hopper's limits.

    python bench/registers.py [--tasks matmul,attention]

Why: the modelled time counts threads and shared memory for occupancy, not registers, and a tiled
kernel that asks ptxas for 160 registers a thread fits one 256-thread block per SM. This shows it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tutor.coach.tasks import coaching_tasks  # noqa: E402
from tutor.coach.walkthrough import load_walkthrough  # noqa: E402
from tutor.engine.loading.compile import compile_launches, launched_ptx, max_registers  # noqa: E402
from tutor.engine.loading.resources import REGISTERS_PER_SM, ptxas_report, warp_registers  # noqa: E402
from tutor.engine.loading.sim_loader import load_module_for_sim  # noqa: E402
from tutor.engine.sim.devicearray import DeviceArray  # noqa: E402
from tutor.engine.sim.launch import records  # noqa: E402

# Hopper (sm_90) per SM: threads, blocks, shared memory (bytes: 228 KiB, of which each block also
# gives the driver 1 KiB); registers per SM and per warp as resources.py counts them for a launch.
THREADS, BLOCKS, SMEM = 2048, 32, 233472


def blocks_per_sm(threads: int, registers: int, shared: int) -> tuple[int, str]:
    """How many blocks of this kernel an SM holds, and which limit sets it."""
    warps = -(-threads // 32)
    per_warp = warp_registers(registers)
    limits = {"threads": THREADS // (warps * 32), "blocks": BLOCKS,
              "registers": REGISTERS_PER_SM // (per_warp * warps) if registers else BLOCKS,
              # ptxas's shared bytes already hold the 1 KiB the driver keeps per block (resources.py)
              "shared memory": SMEM // shared if shared else BLOCKS}
    limit = min(limits, key=limits.get)
    return limits[limit], limit


def planned(task, source: str) -> list:
    """(kernel name, argument types, threads per block) of each launch at the largest GPU shape."""
    shape = task.largest_shape("gpu")
    inputs_mod = task.module("inputs")
    inputs = inputs_mod.make_inputs(np.random.default_rng(0), shape)
    out = np.zeros(inputs_mod.output_shape(shape), np.float32)
    module = load_module_for_sim(source, "kernel.py")
    with records(module.cuda, record_only=True) as done:
        module.namespace["launch"](DeviceArray(out, "out"),
                                   *[DeviceArray(np.ascontiguousarray(x), f"input:{i}") for i, x in enumerate(inputs)])
    seen, out_rows = set(), []
    for launch, plan in zip(done.launches, done.plans):
        block = plan[2]
        threads = int(np.prod(block)) if isinstance(block, (tuple, list)) else int(block)
        if launch not in seen:
            seen.add(launch)
            out_rows.append((launch[0], launch, threads))
    return out_rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", default="")
    args = p.parse_args()
    wanted = [t for t in args.tasks.split(",") if t]
    for task in coaching_tasks():
        if wanted and task.name not in wanted:
            continue
        walk = load_walkthrough(task)
        if walk is None:
            continue
        print(f"\n{task.name} at {tuple(task.largest_shape('gpu'))}")
        print(f"  {'step':<30} {'kernel':<24} {'threads':>7} {'regs':>5} {'stack B':>7} {'smem B':>7} "
              f"{'blocks/SM':>9}  limit")
        for step in walk.steps:
            launches = planned(task, step.source)
            compile_launches(step.source, "kernel.py", [k for _, k, _ in launches])
            for name, launch, threads in launches:
                text = launched_ptx(step.source, launch)  # the build a launch runs, as the simulator counts it
                if text is None:
                    print(f"  {step.file:<30} {name:<24} not compiled")
                    continue
                cap = max_registers(step.source, launch)
                report = ptxas_report(text, cap)
                if report is None:
                    print(f"  {step.file:<30} {name:<24} ptxas gave no report (nvJitLink missing?)")
                    continue
                regs, stack, shared = report
                fit, limit = blocks_per_sm(threads, regs, shared)
                print(f"  {step.file:<30} {name:<24} {threads:>7} {regs:>5} {stack:>7} {shared:>7} {fit:>9}  {limit}")


if __name__ == "__main__":
    main()
