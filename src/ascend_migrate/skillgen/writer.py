"""Write a generated skill folder without ever leaving the output root or losing data.

* The folder is `<out-root>/<slug>` where the slug was checked by `naming.model_slug`; the
  resolved destination is checked again to sit directly under the resolved out-root, and a
  symlinked skill folder or references folder is refused.
* Each file is written to a temporary file in its destination folder, flushed and fsynced,
  then moved into place: `os.replace` with `force` (atomic overwrite), a hard link without it
  (atomic create that fails if the file appeared meanwhile). A crash leaves either the old
  file or the new one, never a half-written SKILL.md.
* Without `force`, nothing is written when any destination file already exists.
"""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from ascend_migrate.skillgen.errors import SkillGenError

# Files the generator may have written earlier; with --force, ones the new render does not
# produce are removed so the folder never mixes two generations.
GENERATED_EXTRAS = ("references/code-changes.md", "references/validation-items.md", "manual.patch", "replay.json",
                    "thresholds.yaml")
GENERATED_DIRS = ("entry", "golden", "files", "tools")  # replay bundle folders: stale files are removed with --force


def _inside(child: Path, parent: Path) -> bool:
    try:
        child.relative_to(parent)
    except ValueError:
        return False
    return True


def prepare_skill_dir(out_root: Path, slug: str) -> Path:
    """Create (if needed) and return the resolved `<out-root>/<slug>` folder."""
    root = Path(os.path.expanduser(str(out_root)))
    if root.exists() and not root.is_dir():
        raise SkillGenError(f"{root}: output root exists and is not a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SkillGenError(f"{root}: cannot create output root: {exc.strerror or exc}") from None
    root_real = root.resolve(strict=True)
    skill_dir = root_real / slug
    if skill_dir.is_symlink():
        raise SkillGenError(f"{skill_dir}: is a symbolic link; refusing to write through it")
    if skill_dir.exists() and not skill_dir.is_dir():
        raise SkillGenError(f"{skill_dir}: exists and is not a folder")
    if skill_dir.resolve().parent != root_real:
        raise SkillGenError(f"{skill_dir}: resolves outside {root_real}")
    return skill_dir


def _destination(skill_dir: Path, relative: str) -> Path:
    parts = relative.split("/")
    if not relative or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise SkillGenError(f"internal error: unsafe output path {relative!r}")
    # A skill is copied into agents' folders and replayed elsewhere: it never carries
    # version-control or tool state (a `files/.git/config` would configure git wherever it lands).
    from ascend_migrate.safe_paths import UnsafePathError, check_relative

    try:
        check_relative(relative, "skill file")
    except UnsafePathError as exc:
        raise SkillGenError(f"refusing to write the skill: {exc}") from None
    dest = skill_dir.joinpath(*parts)
    parent = dest.parent
    probe = skill_dir
    for part in parts[:-1]:
        probe = probe / part
        if probe.is_symlink():
            raise SkillGenError(f"{probe}: is a symbolic link; refusing to write through it")
    if not _inside(parent.resolve() if parent.exists() else parent, skill_dir):
        raise SkillGenError(f"{dest}: resolves outside {skill_dir}")
    return dest


def atomic_write(dest: Path, text: "str | bytes", *, overwrite: bool) -> None:
    """Write `text` to `dest` atomically; without `overwrite`, fail if `dest` exists."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=str(dest.parent))
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        if overwrite:
            os.replace(tmp, dest)
        else:
            try:
                os.link(tmp, dest)
            except FileExistsError:
                raise SkillGenError(f"{dest}: already exists; give this port another --model name, or pass --force to replace it") from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                    raise
                # No hard links on this filesystem: exclusive create is still race-free.
                with open(dest, "xb") as handle:
                    handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
                    handle.flush()
                    os.fsync(handle.fileno())
        _fsync_dir(dest.parent)
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_skill(out_root: Path, slug: str, files: dict[str, "str | bytes"], *, force: bool) -> Path:
    """Write `files` ({relative path: text}) into `<out-root>/<slug>`; return SKILL.md's path."""
    if "SKILL.md" not in files:
        raise SkillGenError("internal error: nothing to write (no SKILL.md rendered)")
    skill_dir = prepare_skill_dir(out_root, slug)
    targets = {rel: _destination(skill_dir, rel) for rel in files}
    if not force:
        existing = [str(path) for path in targets.values() if path.exists() or path.is_symlink()]
        if existing:
            raise SkillGenError(
                f"{existing[0]}: already exists; give this port another --model name, or pass --force to replace it"
                + (f" (and {len(existing) - 1} more)" if len(existing) > 1 else "")
            )
    skill_dir.mkdir(exist_ok=True)
    try:
        # SKILL.md last: until it is in place, the folder still holds the previous skill.
        for rel in sorted(files, key=lambda r: r == "SKILL.md"):
            atomic_write(targets[rel], files[rel], overwrite=force)
    except SkillGenError:
        raise
    except OSError as exc:
        raise SkillGenError(f"{skill_dir}: write failed: {exc.strerror or exc}", exit_code=1) from None
    if force:
        for rel in GENERATED_EXTRAS:
            if rel not in files:
                stale = _destination(skill_dir, rel)
                if stale.is_file() and not stale.is_symlink():
                    stale.unlink()
        for folder in GENERATED_DIRS:
            top = skill_dir / folder
            if top.is_dir() and not top.is_symlink():
                for old in sorted(top.rglob("*"), reverse=True):
                    rel = old.relative_to(skill_dir).as_posix()
                    if old.is_file() and not old.is_symlink() and rel not in files:
                        old.unlink()
    return targets["SKILL.md"]


# Where agent clients look for skills: Claude Code reads ~/.claude/skills/<name>/SKILL.md for the
# user and .claude/skills/<name>/SKILL.md in the project it runs in.
CLIENT_ROOTS = {"claude-user": "~/.claude/skills", "claude-project": ".claude/skills"}


def client_root(install_to: str) -> Path:
    """The skills folder named by --install-to: a client name, or a folder that holds skills."""
    return Path(os.path.expanduser(CLIENT_ROOTS.get(install_to, install_to)))


def check_install(root: Path, slug: str, files: dict[str, "str | bytes"], *, force: bool) -> bool:
    """Refuse (without --force) to replace a different skill at `root/slug`; True when an identical
    copy is already there (nothing to write). Reads only: called before anything is written."""
    dest = Path(os.path.expanduser(str(root))) / slug
    if dest.is_symlink():
        raise SkillGenError(f"{dest}: is a symbolic link; install a real copy (remove the link first)")
    if not dest.exists():
        return False
    if not dest.is_dir():
        raise SkillGenError(f"{dest}: exists and is not a folder")
    same = all((dest / rel).is_file() and (dest / rel).read_bytes() == (data if isinstance(data, bytes)
                                                                      else data.encode("utf-8"))
               for rel, data in files.items())
    if same:
        return True
    if not force and any(dest.iterdir()):
        raise SkillGenError(f"{dest}: holds a different skill; pass --force to replace it")
    return False


def install_copy(root: Path, slug: str, files: dict[str, "str | bytes"], *, force: bool) -> Path:
    """Write a real copy of the skill into a client's skills folder (a link would break when the
    product's copy is regenerated or removed); return its SKILL.md."""
    if check_install(root, slug, files, force=force):
        return Path(os.path.expanduser(str(root))).resolve() / slug / "SKILL.md"
    return write_skill(root, slug, files, force=True)
