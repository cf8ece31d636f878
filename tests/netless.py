"""Running a test's child process without network: `unshare -rn` where the kernel allows it."""

import os
import subprocess


def no_network_prefix() -> list[str]:
    """The command prefix that puts a child in a network namespace with no network, or [] where
    that is not possible (the tests then rely on their socket guards alone)."""
    if not os.path.exists("/usr/bin/unshare"):
        return []
    ok = subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0
    return ["unshare", "-rn"] if ok else []
