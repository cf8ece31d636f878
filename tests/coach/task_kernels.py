"""What the task tests share: loading a task's module by path, and compiling its kernels for
sm_90 with no GPU (the engine's own scoped stand-in for the device)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[2] / "kernels"


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_for_sm90(task: str, signatures: dict) -> list[dict]:
    """Compile every kernel of `signatures` ({candidate: {kernel: numba signature}}) to PTX for
    compute capability 9.0; one record per kernel with its count of local-memory loads and stores."""
    from numba import cuda

    from tutor.engine.loading.compile import no_device_needed

    records = []
    with no_device_needed((9, 0)):
        for cand, kernels in signatures.items():
            mod = load(KERNELS / task / f"{cand}.py", f"{task}_{cand}")
            for name, sig in kernels.items():
                ptx, _ = cuda.compile_ptx(getattr(mod, name).py_func, sig, cc=(9, 0))
                records.append({"candidate": cand, "kernel": name,
                                "local_memory_ops": len(re.findall(r"(ld|st)\.local", ptx))})
    return records
