"""Render a scaffold's templates (package data under scaffold/templates/KIND/) into a directory.

Each template `NAME.j2` becomes `DIR/NAME`. Existing files are never overwritten unless asked:
a scaffold written over a user's edited train.py would lose their work.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ascend_migrate import __version__

# kind -> the files it writes, in order
KINDS: dict[str, tuple[str, ...]] = {
    "training": ("train.py", "config.yaml"),
}


class ScaffoldError(RuntimeError):
    """The scaffold cannot be written; the message says why."""


@dataclass
class ScaffoldResult:
    directory: Path
    written: list[Path] = field(default_factory=list)


def _template_text(kind: str, name: str) -> str:
    return (resources.files("ascend_migrate.scaffold") / "templates" / kind / f"{name}.j2").read_text(encoding="utf-8")


def render(kind: str) -> dict[str, str]:
    """File name -> rendered text for a scaffold kind."""
    import jinja2

    if kind not in KINDS:
        raise ScaffoldError(f"unknown scaffold {kind!r}; known: {', '.join(sorted(KINDS))}")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False)
    return {name: env.from_string(_template_text(kind, name)).render(version=__version__)
            for name in KINDS[kind]}


def write_scaffold(kind: str, directory: Path | str, force: bool = False) -> ScaffoldResult:
    """Write the scaffold into `directory` (created if missing). Refuses, before writing
    anything, when a target file exists and `force` is false."""
    directory = Path(directory)
    files = render(kind)
    if directory.exists() and not directory.is_dir():
        raise ScaffoldError(f"{directory} exists and is not a directory")
    targets = {name: directory / name for name in files}
    clashes = [p for p in targets.values() if p.exists() or p.is_symlink()]
    if clashes and not force:
        raise ScaffoldError("refusing to overwrite " + ", ".join(str(p) for p in clashes)
                            + " (use --force to replace them)")
    for path in clashes:
        if path.is_dir() and not path.is_symlink():
            raise ScaffoldError(f"{path} is a directory; remove it first")
    directory.mkdir(parents=True, exist_ok=True)
    result = ScaffoldResult(directory)
    for name, text in files.items():
        path = targets[name]
        if path.is_symlink():
            path.unlink()  # replace the link itself, never the file it points to
        path.write_text(text, encoding="utf-8")
        result.written.append(path)
    return result
