"""Project scaffolds: starting points that already follow the Ascend porting rules."""
from ascend_migrate.scaffold.generate import KINDS, ScaffoldError, render, write_scaffold

__all__ = ["KINDS", "ScaffoldError", "render", "write_scaffold"]
