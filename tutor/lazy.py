"""Import a heavy module on first use, so the app paints before numpy has loaded.

`np = lazy("numpy", globals(), "np")` puts a stand-in under the name; the first attribute read
imports numpy and rebinds the name to the real module, so later reads cost nothing extra.
"""

from __future__ import annotations

import importlib


class _Lazy:
    def __init__(self, module: str, namespace: dict, name: str):
        self._spec = (module, namespace, name)

    def __getattr__(self, attr):
        module, namespace, name = self.__dict__["_spec"]
        real = importlib.import_module(module)
        namespace[name] = real
        return getattr(real, attr)


def lazy(module: str, namespace: dict, name: str):
    return _Lazy(module, namespace, name)
