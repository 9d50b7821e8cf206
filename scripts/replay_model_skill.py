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
"""Reproduce a validated port from its model skill on a fresh checkout.

Same as `ascend-migrate replay SKILL_DIR TARGET [--device DEV]`; runs from a source checkout or
the installed plugin without installing the package. Exit codes: 0 reproduced (and validated
with --device), 1 the tree or the validation differs, 2 unusable input.
"""
from _bootstrap import require_dependencies

require_dependencies(__file__)

from ascend_migrate.replay import replay_command  # noqa: E402

if __name__ == "__main__":
    replay_command(prog_name="replay_model_skill.py")
