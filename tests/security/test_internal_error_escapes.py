"""The one-line internal-error message escapes what the exception text quotes.

An exception raised while reading a tree or a shared skill can carry a file name or a field
value in its message (a named pipe called `x<ESC>]52;...`, a config key with a carriage
return). The last-resort handler prints that message; raw, an operating-system command or a
cursor movement in it would reach the terminal.
"""
from __future__ import annotations

import pytest

from ascend_migrate.exits import exit_on_error


@pytest.mark.parametrize("text", [
    "cannot open pipe\x1b]52;c;Y2xpcGJvYXJk\x07here",  # clipboard write
    "bad key\x1b[2J\x1b[Hscreen cleared",  # erase the screen
    "name\rforged start of line",
    "undecodable \udcff byte",
])
def test_internal_error_text_is_shown_escaped(capsys: pytest.CaptureFixture, text: str) -> None:
    with pytest.raises(SystemExit) as raised:
        exit_on_error(OSError(text))
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n")
    body = err[:-1]
    assert body.isprintable(), repr(body)
    assert "internal error: OSError" in body


def test_plain_message_is_unchanged(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        exit_on_error(ValueError("model.py: nothing unusual"))
    assert "internal error: ValueError: model.py: nothing unusual (set ASCEND_MIGRATE_DEBUG" in capsys.readouterr().err
