"""Golden pairs per style (tests/fix/golden/<style>/NAME.in.EXT -> NAME.out.EXT), found automatically."""
import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from ascend_migrate.knowledge.base import load_knowledge

_spec = importlib.util.spec_from_file_location("regen_golden", Path(__file__).parent / "regen_golden.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)
CASES = list(golden.cases())


def _needs_newer_python(src: Path):
    """Goldens written with `match` statements parse from Python 3.10 on."""
    if sys.version_info < (3, 10) and re.search(r"^\s*match .*:$", src.read_text(encoding="utf-8"), re.M):
        pytest.skip("the golden uses a match statement (Python 3.10+)")


def test_golden_cases_found():
    assert {style for style, _, _ in CASES} == {"transfer", "agnostic"}


@pytest.mark.parametrize("style,src,dst", CASES, ids=lambda v: v.name if isinstance(v, Path) else v)
def test_golden_output(style, src, dst):
    _needs_newer_python(src)
    out = golden.rewrite(style, src)
    assert out == dst.read_bytes()
    if src.suffix == ".py":
        ast.parse(out)


@pytest.mark.parametrize("style,src,dst", CASES, ids=lambda v: v.name if isinstance(v, Path) else v)
def test_golden_output_is_a_fixed_point(style, src, dst):
    _needs_newer_python(src)
    assert golden.rewrite(style, dst) == dst.read_bytes()


def test_goldens_cover_every_fixable_rule():
    """Each rule with a safe/unsafe fix in a style is exercised by that style's goldens."""
    from ascend_migrate.scan.engine import Job, analyse

    kb = load_knowledge()
    for style in ("transfer", "agnostic"):
        fired = set()
        for s, src, _ in CASES:
            if s != style:
                continue
            ext = src.suffixes[-1]
            if ext in (".py", ".ipynb"):
                job = Job(src.name, "python" if ext == ".py" else "notebook", "")
            else:
                job = Job(src.name, "config", golden.CONFIG_KINDS[ext])
            for f in analyse(job, src.read_bytes(), kb).findings:
                if f.fix_for(style) is not None and f.fix_for(style).edits:
                    fired.add(f.rule)
        fixable = {r.id for r in kb.rules.values() if r.fix_kind(style) in ("safe", "unsafe")
                   and r.match["kind"] not in ("parse-error",)}
        # Rules whose fix needs a context the goldens of the other style cover.
        missing = fixable - fired
        assert not missing, f"{style}: no golden exercises {sorted(missing)}"


@pytest.mark.parametrize("style,src,dst", [c for c in CASES if c[1].suffix == ".py"],
                         ids=lambda v: v.name if isinstance(v, Path) else v)
def test_golden_output_compiles_and_binds_the_names_it_introduces(style, src, dst):
    _needs_newer_python(src)
    from ascend_migrate.fix.rewrite import HELPER_NAMES, unbound_uses

    out = dst.read_text(encoding="utf-8")
    compile(out, dst.name, "exec")
    assert unbound_uses(out, ("torch", *HELPER_NAMES)) == {}
