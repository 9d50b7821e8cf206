"""When output is coloured: the rule behind `--color/--no-color` (see `console`), kept free of
click so the stored-report path of `scan` can apply it without importing the CLI framework."""
from __future__ import annotations

import os
import sys
from typing import IO, Optional


def no_color_env() -> bool:
    return bool(os.environ.get("NO_COLOR", ""))


def color_enabled(flag: Optional[bool], stream: Optional[IO] = None) -> bool:
    """An explicit --color/--no-color wins; otherwise NO_COLOR turns colour off; otherwise
    colour when `stream` (stdout by default) is a terminal."""
    if flag is not None:
        return flag
    if no_color_env():
        return False
    stream = sys.stdout if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
