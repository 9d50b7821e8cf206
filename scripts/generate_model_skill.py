#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = [
#     "pyyaml>=5.4",
#     "jinja2>=3.0",
#     "click>=8.0",
#     "markdown-it-py>=2.0",
#     "tomli>=1.1; python_version < '3.11'",
# ]
# ///
"""Write a per-model replay skill from a passing validation report.

Same as `ascend-migrate skill PATH --model NAME ...`; runs from a source checkout or the
installed plugin without installing the package. Exit codes: 0 written, 2 refused or bad
input (nothing written), 1 the write failed.
"""
from _bootstrap import require_dependencies

require_dependencies(__file__)

from ascend_migrate.skillgen.cli import skill_command  # noqa: E402

if __name__ == "__main__":
    skill_command(prog_name="generate_model_skill.py")
