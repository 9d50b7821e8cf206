"""`ascend-migrate replay SKILL_DIR TARGET`: reproduce a validated port from its model skill.

On a fresh checkout of the unported project at TARGET:

0. when TARGET lacks the validation entry file the port was validated with, put the stored
   copy (as it was before migrating) in place;
1. migrate in place with the flags recorded in SKILL_DIR/replay.json;
2. apply SKILL_DIR/manual.patch (and copy SKILL_DIR/files/ for binary files);
3. compare the tree with the recorded manifest: a different tree hash exits 1 and lists every
   file that differs;
4. with --device, validate with the recorded options against the stored golden file; a verdict
   other than pass exits 1.

Exit codes: 0 reproduced (and validated, with --device); 1 the tree or the validation differs;
2 the skill folder or TARGET cannot be used.

A skill folder may come from someone else: every path it names (in replay.json and in
manual.patch) is checked before anything is written: relative, no `..`, no drive, no NUL,
no version-control or tool state (`.git`, `.hg`, `.ascend-migrate`, ...), and reached through
real folders only, in TARGET and in SKILL_DIR alike. Every file read from SKILL_DIR is a
regular file (a named pipe there would hang the replay). Every file the replay writes is one the
tree hash counts: nothing goes into `__pycache__/`, `*.pyc`, `*.egg-info/`, a virtual
environment or a cache folder, where it would run later without the hash ever seeing it (checked
before writing, and the written files are looked up in the tree listing afterwards). Every field
of replay.json has the shape `ascend-migrate skill` writes; the tree hash's exclusions are
literal names of files a validation run wrote, never patterns or source files; the files
manual.patch changes are the ones replay.json lists, and the replay names each. One bad path or
field refuses the whole replay (exit 2) with TARGET untouched, and the message names the field.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import click

from ascend_migrate.console import info
from ascend_migrate.printable import printable

REPLAY_SCHEMA = "ascend-migrate/replay/1"


class ReplayError(Exception):
    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class ReplayResult:
    tree_sha256: str = ""
    expected_sha256: str = ""
    differences: list[str] = field(default_factory=list)
    patched: list[str] = field(default_factory=list)
    report: Optional[dict[str, Any]] = None

    @property
    def tree_matches(self) -> bool:
        return self.tree_sha256 == self.expected_sha256


def load_replay(skill_dir: Path) -> dict[str, Any]:
    path = Path(skill_dir) / "replay.json"
    try:
        data = json.loads(read_skill_file(path).decode("utf-8"))
    except FileNotFoundError:
        raise ReplayError(f"{path}: not found; regenerate the skill with `ascend-migrate skill PATH --model NAME` "
                          "(skills from older versions cannot be replayed)") from None
    except (OSError, ValueError) as exc:
        raise ReplayError(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != REPLAY_SCHEMA:
        raise ReplayError(f"{path}: not a replay record (schema {REPLAY_SCHEMA})")
    return data


def open_skill_file(path: Path) -> int:
    """A descriptor for the skill's file at `path`, which must be a regular file: a link is not
    followed (O_NOFOLLOW) and a named pipe, device or folder is refused without blocking on it
    (OSError). The caller closes it."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) |
                 getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(f"not a regular file ({_kind_name(mode)})")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_skill_file(path: Path) -> bytes:
    fd = open_skill_file(path)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _kind_name(mode: int) -> str:
    from ascend_migrate.scan.walk import special_kind

    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a " + special_kind(mode)


@dataclass
class RecordPaths:
    """Every location a replay record names, checked (see `check_record_paths`)."""

    patch: Path
    patch_text: str
    binary: list[tuple[Path, Path]] = field(default_factory=list)  # (in SKILL_DIR, in TARGET)
    deleted: list[Path] = field(default_factory=list)
    entry_source: Optional[Path] = None
    entry_dest: Optional[Path] = None
    patch_files: list[str] = field(default_factory=list)  # as parsed from manual.patch, in its order
    excluded: list[str] = field(default_factory=list)  # the tree hash's exclusions, as literal names


def _no_link(root: Path, dest: Path) -> None:
    from ascend_migrate.safe_paths import UnsafePathError, no_link_below

    try:
        no_link_below(root, dest, "path")
    except UnsafePathError as exc:
        raise ReplayError(f"refusing the skill: {exc}") from None


STYLES = ("transfer", "agnostic")
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+){0,3}[A-Za-z0-9.+-]{0,40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_LITERAL_ESCAPE = re.compile(r"\[([*?\[])\]")  # how `validate` writes a run output's name as a pattern
# what the scanner reads as code or as the project's own set-up: never a run's output
_SOURCE_KINDS = ("python", "notebook", "cuda", "dependency")


def _check_shape(record: dict[str, Any]) -> None:
    """Every field replay uses has the type `ascend-migrate skill` writes; UnsafePathError
    naming the field otherwise (a wrong type would fail half-way, after the migration)."""
    from ascend_migrate.safe_paths import UnsafePathError

    def bad(name: str, value: Any, what: str) -> UnsafePathError:
        shown = repr(value)
        return UnsafePathError(f"replay.json: {name} {shown[:80]}{'...' if len(shown) > 80 else ''}: {what}")

    def mapping(value: Any, name: str, required: bool = False) -> dict:
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            raise bad(name, value, "not a mapping")
        return value

    def text(value: Any, name: str, required: bool = False) -> None:
        if (value is not None or required) and not isinstance(value, str):
            raise bad(name, value, "not a string")

    def strings(value: Any, name: str) -> None:
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            raise bad(name, value, "not a list of strings")

    migrate = mapping(record.get("migrate"), "migrate", required=True)
    text(migrate.get("command"), "migrate.command", required=True)
    options = mapping(migrate.get("options"), "migrate.options", required=True)
    if options.get("style") is not None and options["style"] not in STYLES:
        raise bad("migrate.options.style", options["style"], f"not one of {', '.join(STYLES)}")
    for key in ("min_torch", "torch_npu_version"):
        value = options.get(key)
        if value is not None and not (isinstance(value, str) and _VERSION.match(value)):
            raise bad(f"migrate.options.{key}", value, "not a version (such as 2.6 or 2.1.0.post3)")
    for key in ("annotate", "safe_only", "inject_init"):
        if options.get(key) is not None and not isinstance(options[key], bool):
            raise bad(f"migrate.options.{key}", options[key], "not true or false")
    for key in ("entry", "no_entry"):
        strings(options.get(key), f"migrate.options.{key}")
    patch = mapping(record.get("manual_patch"), "manual_patch")
    text(patch.get("file"), "manual_patch.file")
    for key in ("files", "binary_files", "deleted_binary"):
        strings(patch.get(key), f"manual_patch.{key}")
    tree = mapping(record.get("tree"), "tree", required=True)
    if not isinstance(tree.get("sha256"), str) or not _SHA256.match(tree["sha256"]):
        raise bad("tree.sha256", tree.get("sha256"), "not a SHA-256 in hex")
    strings(tree.get("excluded"), "tree.excluded")
    manifest = tree.get("manifest")
    if manifest is not None and (not isinstance(manifest, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in manifest.items())):
        raise bad("tree.manifest", manifest, "not a mapping of paths to hashes")
    entry = mapping(record.get("entry"), "entry")
    for key in ("unported_file", "path", "file", "spec"):
        text(entry.get(key), f"entry.{key}")
    text(mapping(record.get("golden"), "golden").get("file"), "golden.file")
    validation = mapping(record.get("validation"), "validation")
    text(validation.get("thresholds_file"), "validation.thresholds_file")
    mapping(validation.get("options"), "validation.options")


def _skill_file(skill_dir: Path, rel: Any, what: str, *, required: bool = True) -> Path:
    """SKILL_DIR/rel after the path checks (`safe_paths.inside`: no link on the way, the file
    itself included), which must be a regular file; a missing file is refused when `required`."""
    from ascend_migrate.safe_paths import UnsafePathError, inside

    path = inside(skill_dir, rel, what)
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        if required:
            raise UnsafePathError(f"{what} {rel!r}: not in the skill folder") from None
        return path
    if not stat.S_ISREG(mode):
        raise UnsafePathError(f"{what} {rel!r}: {_kind_name(mode)} in the skill folder, not a regular file")
    return path


def uncounted_reason(target: Path, rel: str) -> str:
    """Why the tree hash would leave TARGET/rel out ('' when it counts it): what running or
    installing the project writes (`provenance._runtime_output`), or a folder on the way that
    the walker skips for what it holds (a virtual environment, a cache: `scan.walk`)."""
    from ascend_migrate.scan.walk import _skip_reason_by_content
    from ascend_migrate.validate.provenance import _runtime_output

    if _runtime_output(rel):
        return "what running or installing a project writes (__pycache__, *.pyc, *.pyo, *.egg-info)"
    folder = Path(target)
    for part in rel.split("/")[:-1]:
        folder = folder / part
        if not folder.is_dir():
            break
        reason = _skip_reason_by_content(str(folder), None)
        if reason:
            return f"inside {folder.relative_to(target).as_posix()}/ ({reason})"
    return ""


def _planted_skips(rels: list[str]) -> dict[str, str]:
    """{rel: why} for the paths among `rels` the tree hash would leave out once all of them are
    written: the same paths, empty, in a scratch folder, listed as the tree hash lists a tree
    (so a skill that writes `.venv/pyvenv.cfg` beside `.venv/bin/pip` is caught before writing)."""
    from ascend_migrate.safe_paths import UnsafePathError
    from ascend_migrate.scan.walk import walk_tree
    from ascend_migrate.validate import provenance

    with tempfile.TemporaryDirectory(prefix="ascend-migrate-replay-") as tmp:
        for rel in rels:
            path = Path(tmp, rel)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.is_dir():
                    path.touch()
            except OSError:
                raise UnsafePathError(f"{rel!r} is both a file and a folder among the paths the skill writes") from None
            if path.is_dir():
                raise UnsafePathError(f"{rel!r} is both a file and a folder among the paths the skill writes")
        counted = {rel for rel, _full in provenance.iter_tree(Path(tmp))}
        skipped = walk_tree(tmp).skipped
    out = {}
    for rel in rels:
        if rel not in counted:
            out[rel] = next((f"inside {folder.rstrip('/')}/ ({reason.removeprefix('folder skipped: ')})"
                             for folder, reason in skipped if rel.startswith(folder.rstrip("/") + "/")),
                            "a file the tree walk leaves out")
    return out


def _source_kind(rel: str) -> str:
    from ascend_migrate.scan.engine import classify

    job = classify(rel)
    if job is not None and (job.kind in _SOURCE_KINDS or job.config_kind == "sh"):
        return job.kind if job.config_kind != "sh" else "shell script"
    return ""


def _exclusion(pattern: str, what: str) -> str:
    """The file name an exclusion of the tree hash stands for. Only literal names are accepted
    (a run output's name, with `*`, `?`, `[` written as `[*]`, `[?]`, `[[]` as `validate` does);
    a pattern could leave any file out, and a source file is never a run's output."""
    from ascend_migrate.safe_paths import UnsafePathError, check_relative

    check_relative(pattern, what, state_ok=True)  # a name in tool state is never counted: leaving it out changes nothing
    if re.search(r"[*?\[]", _LITERAL_ESCAPE.sub("", pattern)):
        raise UnsafePathError(f"{what} {pattern!r}: a pattern; only the literal names of files a validation run "
                              "wrote are left out of the tree hash")
    if pattern.endswith("/"):
        raise UnsafePathError(f"{what} {pattern!r}: names a folder; only files a validation run wrote are left out")
    name = _LITERAL_ESCAPE.sub(r"\1", pattern)
    kind = _source_kind(name)
    if kind:
        raise UnsafePathError(f"{what} {pattern!r}: a {kind}, which a validation run does not write; source "
                              "files are always counted")
    return name


def check_record_paths(skill_dir: Path, target: Path, record: dict[str, Any]) -> RecordPaths:
    """Check every field and path of the record and of manual.patch before anything is written.

    Refused (ReplayError 2, naming the field): a field of the wrong type or shape (`_check_shape`);
    a path that is absolute, has `..`, a drive, a NUL, goes through a symlink or through
    version-control or tool state (`.git`, `.ascend-migrate`, ...: `safe_paths.state_component`);
    a skill file that is not a regular file; a TARGET path the tree hash would not count
    (`uncounted_reason`, `_planted_skips`); an exclusion that is not a literal run-output name
    (`_exclusion`) or names a file the skill writes or the validated manifest lists; a
    manual.patch whose files are not the ones `manual_patch.files` lists."""
    from ascend_migrate.patchfile import PatchError, parse_patch
    from ascend_migrate.safe_paths import UnsafePathError, check_relative, inside

    try:
        _check_shape(record)
        options = record["migrate"]["options"]
        for key in ("entry", "no_entry"):
            for rel in options.get(key) or []:
                check_relative(rel, f"migrate.options.{key}")
        info = record.get("manual_patch") or {}
        patch = inside(skill_dir, info.get("file") or "manual.patch", "manual_patch.file")
        try:
            text = read_skill_file(patch).decode("utf-8", errors="surrogateescape")
        except FileNotFoundError:
            raise ReplayError(f"{patch}: not found") from None
        except OSError as exc:
            raise UnsafePathError(f"manual_patch.file {patch.name!r}: cannot read: "
                                  f"{exc.strerror or exc}") from None
        try:
            file_patches = parse_patch(text)
        except PatchError as exc:
            raise ReplayError(f"{patch}: {exc}") from None
        writes: list[tuple[str, str]] = []  # (path in TARGET, field)
        out = RecordPaths(patch=patch, patch_text=text)
        for fp in file_patches:
            if fp.old is not None and fp.new is not None and fp.old != fp.new:
                raise UnsafePathError(f"path in manual.patch {fp.new!r}: renamed from {fp.old!r}; "
                                      "a skill's patch changes files in place")
            for rel in {fp.old, fp.new} - {None}:
                inside(target, rel, "path in manual.patch")
            out.patch_files.append(fp.new or fp.old)
            writes.append((fp.new or fp.old, "path in manual.patch"))
        listed = info.get("files") or []
        for rel in listed:
            check_relative(rel, "manual_patch.files")
        if sorted(listed) != sorted(out.patch_files):
            extra = sorted(set(out.patch_files) - set(listed))
            missing = sorted(set(listed) - set(out.patch_files))
            raise UnsafePathError(
                "manual_patch.files does not list the files manual.patch changes"
                + (f" (the patch also changes {', '.join(map(repr, extra[:10]))})" if extra else "")
                + (f" (the patch does not change {', '.join(map(repr, missing[:10]))})" if missing else ""))
        for rel in info.get("binary_files") or []:
            if not rel.startswith("files/"):
                raise UnsafePathError(f"manual_patch.binary_files {rel!r}: not under files/")
            dest_rel = rel.removeprefix("files/")
            dest = inside(target, dest_rel, "manual_patch.binary_files")
            if dest.is_dir() and not dest.is_symlink():
                raise UnsafePathError(f"manual_patch.binary_files {rel!r}: {dest_rel!r} is a folder in TARGET")
            if dest.exists() and not dest.is_file():
                raise UnsafePathError(f"manual_patch.binary_files {rel!r}: {dest_rel!r} in TARGET is not a regular file")
            out.binary.append((_skill_file(skill_dir, rel, "manual_patch.binary_files"), dest))
            writes.append((dest_rel, "manual_patch.binary_files"))
        for rel in info.get("deleted_binary") or []:
            out.deleted.append(inside(target, rel, "manual_patch.deleted_binary"))
            writes.append((rel, "manual_patch.deleted_binary"))
        entry = record.get("entry") or {}
        if entry.get("unported_file") and entry.get("path"):
            out.entry_dest = inside(target, entry["path"], "entry.path")
            if out.entry_dest.exists() or out.entry_dest.is_symlink():
                out.entry_source = _skill_file(skill_dir, entry["unported_file"], "entry.unported_file", required=False)
            else:
                out.entry_source = _skill_file(skill_dir, entry["unported_file"], "entry.unported_file")
                writes.append((entry["path"], "entry.path"))
        golden = (record.get("golden") or {}).get("file")
        if golden:
            _skill_file(skill_dir, golden, "golden.file", required=False)
        thresholds = (record.get("validation") or {}).get("thresholds_file")
        if thresholds:
            _skill_file(skill_dir, thresholds, "validation.thresholds_file", required=False)
        # every file the replay writes is one the tree hash counts
        for rel, what in writes:
            reason = uncounted_reason(target, rel)
            if reason:
                raise UnsafePathError(f"{what} {rel!r}: {reason}, which the tree hash leaves out; a skill writes "
                                      "only files the tree hash counts")
        planted = _planted_skips([rel for rel, what in writes if what != "manual_patch.deleted_binary"])
        for rel, what in writes:
            if rel in planted:
                raise UnsafePathError(f"{what} {rel!r}: {planted[rel]} once the skill's files are written, so the "
                                      "tree hash would leave it out; a skill writes only files the tree hash counts")
        written = {rel for rel, _what in writes}
        manifest = record["tree"].get("manifest") or {}
        for pattern in record["tree"].get("excluded") or []:
            name = _exclusion(pattern, "tree.excluded")
            if name in written or any(rel.startswith(name + "/") for rel in written):
                raise UnsafePathError(f"tree.excluded {pattern!r}: the skill writes it; what a skill writes is "
                                      "always counted")
            if name in manifest or any(rel.startswith(name + "/") for rel in manifest):
                raise UnsafePathError(f"tree.excluded {pattern!r}: the validated manifest lists it")
            if (target / name).is_dir():
                raise UnsafePathError(f"tree.excluded {pattern!r}: a folder in TARGET; only files a validation run "
                                      "wrote are left out")
            out.excluded.append(name)
    except UnsafePathError as exc:
        raise ReplayError(f"refusing the skill: {exc}; nothing was written") from None
    return out


def check_written(target: Path, written: list[str], paths: RecordPaths, counted: set[str]) -> None:
    """After writing: every file the replay wrote is in the tree listing the hash is made from
    (`counted`: the paths of the manifest), and the exclusions leave out nothing but the
    literal files they name (ReplayError 2)."""
    from ascend_migrate.validate import provenance

    listed = {rel for rel, _full in provenance.iter_tree(target)}
    missing = [rel for rel in written if rel not in listed or rel not in counted]
    if missing:
        raise ReplayError(f"refusing the skill: it wrote {', '.join(map(repr, missing[:10]))}, which the tree hash "
                          "leaves out; inspect TARGET (it holds the migration and the skill's files)")
    covered = sorted(listed - counted)
    wrong = [rel for rel in covered if rel not in paths.excluded or _source_kind(rel)]
    if wrong:
        raise ReplayError(f"refusing the skill: tree.excluded leaves out {', '.join(map(repr, wrong[:10]))}, which "
                          "are not files a validation run wrote; inspect TARGET")


def _as_patterns(names: list[str]) -> list[str]:
    """Literal file names as exclusion patterns that match only themselves."""
    return [re.sub(r"([*?\[])", r"[\1]", name) for name in names]


def check_validation_options(vopts: Any) -> None:
    """Refuse recorded validation options outside what `validate run` accepts, before anything
    is written or run: the DDP steps and timeout in the CLI's ranges, and no recorded torchrun
    command starting more processes than the thresholds' `ddp.nproc` may (a shared skill asking
    for thousands would fork them on the replaying host)."""
    from ascend_migrate.validate.command import CommandError, command_shape
    from ascend_migrate.validate.thresholds import DDP_NPROC, DDP_STEPS, DDP_TIMEOUT_S

    if vopts is None:
        return
    if not isinstance(vopts, dict):
        raise ReplayError("replay.json: validation.options is not a mapping")
    for key, (low, high), kinds in (("ddp_steps", DDP_STEPS, (int,)), ("ddp_timeout_s", DDP_TIMEOUT_S, (int, float))):
        value = vopts.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            raise ReplayError(f"replay.json: validation.options.{key} {value!r}: not a number in {low}..{high} "
                              "(the range `validate run` accepts)")
    for key in ("command", "ddp_command"):
        words = vopts.get(key)
        if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
            continue  # checked when the command is used (`_replay_command`)
        try:
            nproc = command_shape(words).nproc
        except CommandError:
            continue
        if nproc > DDP_NPROC[1]:
            raise ReplayError(f"replay.json: validation.options.{key} starts {nproc} processes; at most "
                              f"{DDP_NPROC[1]} are run")


def replay(skill_dir: Path, target: Path, device: Optional[str] = None,
           echo=lambda message: None) -> ReplayResult:
    from ascend_migrate.fix.api import migrate
    from ascend_migrate.patchfile import PatchError, apply_patch
    from ascend_migrate.validate import provenance

    skill_dir, target = Path(skill_dir), Path(target)
    record = load_replay(skill_dir)
    if not target.is_dir():
        raise ReplayError(f"{target}: not a folder; check out the unported project there first")
    paths = check_record_paths(skill_dir, target, record)
    if device:  # a skill whose validation settings will be refused is refused before any write
        check_validation_options((record.get("validation") or {}).get("options"))
        _skill_thresholds(skill_dir, record)
    options = record["migrate"]["options"]
    entry = record.get("entry") or {}
    written: list[str] = []
    if entry.get("unported_file") and entry.get("path"):
        dest = paths.entry_dest
        if not dest.exists() and not dest.is_symlink():
            try:
                stored = read_skill_file(paths.entry_source)
            except OSError as exc:
                raise ReplayError(f"{skill_dir / entry['unported_file']}: cannot read the stored entry: {exc}") from None
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(stored)
            written.append(entry["path"])
            echo(f"0/4 added the validation entry {entry['path']} (TARGET had none)")
    echo(f"1/4 migrate: {record['migrate']['command']}")
    result = migrate(target, write=True, style=options.get("style") or "transfer",
                     min_torch=options.get("min_torch") or "2.6", annotate=bool(options.get("annotate")),
                     safe_only=bool(options.get("safe_only")), inject_init=bool(options.get("inject_init")),
                     torch_npu_version=options.get("torch_npu_version"),
                     entry=options.get("entry") or (), no_entry=options.get("no_entry") or ())
    if result.errors:
        echo("   files the migration could not rewrite: " + ", ".join(f.path for f in result.errors))
    patch_path = paths.patch
    # the files named are the ones parsed from the patch (checked against replay.json's list)
    echo(f"2/4 apply {patch_path.name} ({len(paths.patch_files)} file(s))")
    for rel in paths.patch_files:
        echo(f"   patch: {rel}")
    try:
        patched = apply_patch(target, paths.patch_text)
    except PatchError as exc:
        raise ReplayError(f"manual.patch does not apply to the migrate output of {target}: {exc}. "
                          "TARGET is not the revision that was ported (or was not a clean checkout)", 1) from None
    written += [rel for rel in patched if (target / rel).exists()]
    for source, dest in paths.binary:
        _no_link(target, dest)  # again: the migration and the patch ran since the first check
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink():
            dest.unlink()
        rel = dest.relative_to(target).as_posix()
        echo(f"   copy: {rel} (binary, from the skill's files/)")
        try:
            with os.fdopen(open_skill_file(source), "rb") as src, open(dest, "wb") as dst:
                shutil.copyfileobj(src, dst)
        except OSError as exc:
            raise ReplayError(f"{source}: cannot copy into {dest}: {exc.strerror or exc}") from None
        written.append(rel)
    for dest in paths.deleted:
        _no_link(target, dest)
        if dest.is_symlink() or dest.is_file():
            echo(f"   delete: {dest.relative_to(target).as_posix()}")
            dest.unlink()
    tree = record["tree"]
    manifest = provenance.tree_manifest(target, _as_patterns(paths.excluded))
    check_written(target, written, paths, set(manifest))
    out = ReplayResult(tree_sha256=provenance.manifest_hash(manifest), expected_sha256=tree["sha256"], patched=patched)
    echo(f"3/4 tree hash {out.tree_sha256} (validated: {out.expected_sha256})")
    if not out.tree_matches:
        out.differences = provenance.diff_manifests(tree.get("manifest") or {}, manifest)
        return out
    if device:
        out.report = _validate(skill_dir, target, record, device, echo)
    else:
        echo("4/4 validation skipped (give --device to validate)")
    return out


def _skill_thresholds(skill_dir: Path, record: dict[str, Any]) -> Any:
    """The thresholds the port passed (stored in the skill), or the defaults; a file that is
    missing or out of bounds (`validate.thresholds.load_thresholds`) raises ReplayError."""
    from ascend_migrate.knowledge.loader import KnowledgeError
    from ascend_migrate.validate.thresholds import load_thresholds

    stored = (record.get("validation") or {}).get("thresholds_file")
    if stored and not (skill_dir / stored).is_file():
        raise ReplayError(f"{skill_dir / stored}: missing; the port was validated with these thresholds")
    try:
        return load_thresholds(str(skill_dir / stored), shared=True) if stored else load_thresholds()
    except KnowledgeError as exc:
        raise ReplayError(f"replay.json: validation.thresholds_file cannot be used: {exc}") from None


def _validate(skill_dir: Path, target: Path, record: dict[str, Any], device: str, echo) -> dict[str, Any]:
    from ascend_migrate.validate.devices import parse_device
    from ascend_migrate.validate.report import to_json, to_markdown
    from ascend_migrate.validate.runner import ValidateOptions, validate_project

    golden_rel = (record.get("golden") or {}).get("file")
    if not golden_rel or not (skill_dir / golden_rel).is_file():
        raise ReplayError("the skill stores no golden file; capture one with "
                          f"`{(record.get('golden') or {}).get('capture_command')}` and run "
                          f"`ascend-migrate validate run {target} --device {device} --golden golden.pt`")
    validation = record.get("validation") or {}
    vopts = validation.get("options") or {}
    stored = validation.get("thresholds_file")  # the thresholds the port passed, kept in the skill
    thresholds = _skill_thresholds(skill_dir, record)
    device = parse_device(device)
    echo(f"4/4 validate on {device} against {golden_rel}")
    opts = ValidateOptions(device=device, golden=skill_dir / golden_rel, entry=vopts.get("entry"),
                           autocast=vopts.get("autocast"), dtype=vopts.get("dtype"), thresholds=thresholds,
                           thresholds_file=str((skill_dir / stored).resolve()) if stored else None,
                           ddp=bool(vopts.get("ddp", True)), ddp_entry=vopts.get("ddp_entry"),
                           ddp_steps=vopts.get("ddp_steps"), ddp_timeout_s=vopts.get("ddp_timeout_s"),
                           precision=vopts.get("precision") or "fp32", command=_replay_command(vopts, target),
                           loss_pattern=vopts.get("loss_pattern") if isinstance(vopts.get("loss_pattern"), str) else None,
                           ddp_command=_replay_command({"command": vopts.get("ddp_command")}, target))
    _decisions_to_make_again(validation.get("confirmed") or [], echo)
    report = validate_project(target, opts)
    write_state_files(target, {"validation-report.json": to_json(report), "validation-report.md": to_markdown(report)})
    return report


def _replay_command(vopts: dict[str, Any], target: Path) -> Optional[list[str]]:
    """The recorded command, when it runs the target's own code: `python FILE`, `python -m MOD`
    or torchrun of one, with FILE or MOD inside the target. A skill is shared input: any other
    program (a shell, `python -c`) is refused, never run."""
    from ascend_migrate.validate.command import CommandError, command_shape

    words = vopts.get("command")
    if words is None:
        return None
    if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
        raise ReplayError("replay.json: validation.options.command is not a list of words")
    try:
        shape = command_shape(words)
    except CommandError as exc:
        raise ReplayError(f"replay.json: {exc}") from None
    target_root = target.resolve()
    if shape.kind == "other" or not shape.target:
        raise ReplayError(f"replay.json: the recorded command {' '.join(words)!r} does not run a Python file or "
                          "module of the project; refusing to run it")
    if shape.kind == "python-module" or (shape.kind == "torchrun" and not shape.target.endswith(".py")):
        base = target_root / shape.target.replace(".", "/")
        inside = (base.with_suffix(".py")).is_file() or (base / "__main__.py").is_file()
    else:
        script = (target_root / shape.target).resolve()
        inside = script.is_file() and script.is_relative_to(target_root)
    if not inside:
        raise ReplayError(f"replay.json: the recorded command runs {shape.target!r}, which is not in {target}; "
                          "refusing to run it")
    return words


def _decisions_to_make_again(confirmed: list[Any], echo) -> None:
    """Manual items a person decided when the port was validated are not carried over: a
    decision holds for the tree and host it was made on. Name them so a person decides again."""
    for item in confirmed:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            echo(f"   decided by a person at port time, to be decided again here: {item['id']}")


def write_state_files(target: Path, files: dict[str, str]) -> None:
    """Write files into TARGET/.ascend-migrate together; a linked folder is refused, a linked
    file is replaced (renamed over), never written through."""
    from ascend_migrate.fix.commit import Transaction, WriteError
    from ascend_migrate.safe_paths import UnsafePathError, state_dir

    try:
        folder = state_dir(target)
    except UnsafePathError as exc:
        raise ReplayError(str(exc)) from None
    txn = Transaction(root=folder)
    try:
        for name, text in files.items():
            txn.stage_bytes(folder / name, text.encode("utf-8"))
        txn.commit()
    except WriteError as exc:
        txn.abort()
        raise ReplayError(f"cannot write the validation report: {exc}") from None


@click.command("replay")
@click.argument("skill_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("target", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--device", help="Validate the replayed tree on this device (npu:N, cpu, cuda:N) with the stored golden.")
def replay_command(skill_dir: Path, target: Path, device: Optional[str]) -> None:
    """Reproduce the validated port in SKILL_DIR on a fresh checkout at TARGET.

    Migrates TARGET in place with the recorded flags, applies manual.patch, checks the tree
    hash against the validated one, and with --device validates against the stored golden.
    Exit code: 0 reproduced, 1 the tree or the validation differs, 2 unusable input.
    """
    try:
        # replay.json and the tree are someone else's: what they say is shown escaped
        result = replay(skill_dir, target, device, echo=lambda message: info(printable(message)))
    except ReplayError as exc:
        click.echo(f"error: {printable(exc)}", err=True)
        sys.exit(exc.exit_code)
    if not result.tree_matches:
        click.echo(f"error: the replayed tree differs from the validated one ({len(result.differences)} file(s)):",
                   err=True)
        for line in result.differences[:100]:
            click.echo(f"  {printable(line)}", err=True)
        sys.exit(1)
    click.echo(f"tree reproduced: {result.tree_sha256}")
    if result.report is not None:
        verdict = result.report["verdict"]
        click.echo(f"validation: {verdict.upper()} (report: {target / '.ascend-migrate' / 'validation-report.json'})")
        for reason in result.report.get("reasons", []):
            click.echo(f"  - {printable(reason)}")
        sys.exit(0 if verdict == "pass" else 1)
