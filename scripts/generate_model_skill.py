#!/usr/bin/env python3
"""Write a per-model replay skill from a passing validation report.

Same as `ascend-migrate skill PATH --model NAME ...`; runs from a source checkout or the
installed plugin without installing the package. Exit codes: 0 written, 2 refused or bad
input (nothing written), 1 the write failed.
"""
import os
import sys

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src")
if os.path.isdir(_SRC):
    sys.path.insert(0, os.path.abspath(_SRC))

from ascend_migrate.skillgen.cli import skill_command  # noqa: E402

if __name__ == "__main__":
    skill_command(prog_name="generate_model_skill.py")
