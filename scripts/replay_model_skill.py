#!/usr/bin/env python3
"""Reproduce a validated port from its model skill on a fresh checkout.

Same as `ascend-migrate replay SKILL_DIR TARGET [--device DEV]`; runs from a source checkout or
the installed plugin without installing the package. Exit codes: 0 reproduced (and validated
with --device), 1 the tree or the validation differs, 2 unusable input.
"""
import os
import sys

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src")
if os.path.isdir(_SRC):
    sys.path.insert(0, os.path.abspath(_SRC))

from ascend_migrate.replay import replay_command  # noqa: E402

if __name__ == "__main__":
    replay_command(prog_name="replay_model_skill.py")
