"""Errors raised by the model-skill generator."""
from __future__ import annotations


class SkillGenError(Exception):
    """A refusal or an input problem: the message is shown to the user as is.

    `exit_code` is 2 for refusals and bad input (nothing was written) and 1 for a failure
    while writing (the previous files, if any, are left untouched).
    """

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
