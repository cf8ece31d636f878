"""What loading a learner's file can go wrong with, in one small module: the loader (which runs a
trusted file) and the module builder (which builds an untrusted one) both raise it, and neither
imports the other back for it."""

from __future__ import annotations


AVAILABLE = ("What a kernel file can use from numba: `from numba import cuda` (or `import numba`, then "
             "`numba.cuda`); the scalar types and `void`, e.g. `from numba import cuda, float32, int32, void` "
             "or `from numba.cuda import float32`; and `numba.types`, e.g. `from numba import types`, then "
             "`types.float32[:]`. Signatures are written `@cuda.jit('void(float32[:], int32)')` or "
             "`@cuda.jit(void(float32[:], int32))`. Besides numba, use `math`.")


class LoadError(Exception):
    rule: str | None = None

    def __init__(self, kind: str, message: str, line: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line

    @classmethod
    def raised(cls, error: BaseException, line: int | None) -> LoadError:
        """What the file's loading raised (a learner's module-level error, SystemExit included)."""
        return cls("runtime_error", f"{type(error).__name__} while loading the file: {error} (line {line}).", line)

    @classmethod
    def syntax(cls, error: SyntaxError) -> LoadError:
        """A file Python cannot read: where, what Python saw, what to type (python_words.py)."""
        from .python_words import syntax_error_message

        return cls("compile_error", syntax_error_message(error), error.lineno or 1)

    @classmethod
    def outdented(cls, source: str, line: int | None) -> LoadError | None:
        """Kernel code at column 0 that failed as module code: the indentation is the mistake."""
        from .python_words import outdented_message

        said = outdented_message(source, line)
        return None if said is None else cls("compile_error", said, line)

    @classmethod
    def unavailable(cls, what: str, line: int | None) -> LoadError:
        """Something of numba (or a module) the kernel file may not use here."""
        return cls("unsupported", f"`{what}` is not available in a kernel file (line {line}). {AVAILABLE}", line)

    def failures(self) -> list:
        """The verdict's failures for this error (a refused module has one per place)."""
        from ..verdict import Failure

        found = getattr(self, "findings", None)
        if found:
            return [Failure(kind=self.kind, message=f.message, line=f.line, rule=f.rule) for f in found]
        return [Failure(kind=self.kind, message=self.message, line=self.line, rule=self.rule)]
