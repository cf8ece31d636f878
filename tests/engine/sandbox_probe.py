"""A sandboxed child for the sandbox's own tests: it runs the Python it is sent and answers with
`result`. Nothing in gpu-tutor runs code this way; the tests use it to try, from inside, every
door the sandbox is meant to hold shut."""

import sys

from tutor.engine.process.sandbox import serve


def handle(request, arrays):
    namespace = {"arrays": arrays}
    exec(request["code"], namespace)
    return namespace.get("result")


def handler(argv):
    """For the fork server's tests: the same probe, forked fresh for each check."""
    return handle, None, None


if __name__ == "__main__":
    sys.exit(serve(handle))
