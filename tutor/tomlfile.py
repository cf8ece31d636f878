"""TOML files a person wrote (a settings file, a workshop file), read so that none can cost a traceback
or a hang.

tomllib parses arrays and inline tables inside each other by recursion, so a few thousand `[` in a row
exhaust Python's stack and raise RecursionError, which is not a TOMLDecodeError and would escape
every handler written for bad TOML. The file is read with `store.read_regular`, following links (a
settings file often lives in a dotfiles repository) but refusing a pipe, a device or a huge file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tutor.store import MB, read_regular

TOML_LIMIT = 1 * MB  # a settings or workshop file is a few KB


class TomlFileError(ValueError):
    """A TOML file that cannot be used; the message says why and what to do, without the file's name."""


def read_toml(path: Path, limit: int = TOML_LIMIT) -> dict:
    """The file's tables. Raises TomlFileError for bad text, and OSError (FileNotFoundError,
    IsADirectoryError, store.UnreadableFile ...) for a path that is not a file we may read."""
    data = read_regular(path, limit, follow_links=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TomlFileError("is not UTF-8 text; save it as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TomlFileError(f"not valid TOML: {e}") from None
    except (RecursionError, MemoryError):
        raise TomlFileError("not valid TOML: arrays or tables are nested too deeply (thousands of levels) to be "
                            "read; write the values out flat") from None
