"""`gpu-tutor ARGS` run in this process: the CLI's own main(), with the environment, working folder,
stdout and stderr the call asks for. A call pays no interpreter start and no import of litellm or
numba (seconds each); main() is the whole program but for that. The process boundary itself (the
console script, a pty, a room with no network) is tested by the tests marked `e2e`.
"""

import contextlib
import io
import os
from dataclasses import dataclass


@dataclass
class Done:
    """What subprocess.run would have said."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(*args, env: dict | None = None, cwd=None) -> Done:
    from tutor.cli import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update({k: str(v) for k, v in env.items()})
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:  # argparse's usage errors and --help
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
    return Done(code, out.getvalue(), err.getvalue())
