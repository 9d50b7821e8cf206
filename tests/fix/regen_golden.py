"""Regenerate the golden outputs after a deliberate change: python tests/fix/regen_golden.py

Review the diff of tests/fix/golden before committing it.
"""
from pathlib import Path

from ascend_migrate.fix.notebook import rewrite_notebook
from ascend_migrate.fix.rewrite import Options, rewrite_config, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge

GOLDEN = Path(__file__).parent / "golden"
CONFIG_KINDS = {".sh": "sh", ".json": "json", ".yaml": "yaml", ".yml": "yaml"}


def options_for(style: str, name: str) -> Options:
    """Files named entry.* are treated as entry points and annotated; notebooks that import torch are
    entry points too (the scanner selects them), so they get the imports but no annotations."""
    entry = name.startswith("entry")
    return Options(style=style, inject=entry or name.endswith(".ipynb"), annotate=entry)


def rewrite(style: str, src: Path) -> bytes:
    kb = load_knowledge()
    text = src.read_bytes().decode("utf-8")
    ext = src.suffixes[-1]
    if ext == ".py":
        return rewrite_python(kb, src.name, text, options_for(style, src.name)).text.encode("utf-8")
    if ext == ".ipynb":
        return rewrite_notebook(kb, src.name, text, options_for(style, src.name)).text.encode("utf-8")
    return rewrite_config(kb, src.name, text, CONFIG_KINDS[ext], options_for(style, src.name)).text.encode("utf-8")


def cases():
    for style_dir in sorted(GOLDEN.iterdir()):
        for src in sorted(style_dir.glob("*.in.*")):
            yield style_dir.name, src, src.with_name(src.name.replace(".in.", ".out."))


if __name__ == "__main__":
    for style, src, dst in cases():
        dst.write_bytes(rewrite(style, src))
        print("wrote", dst)
