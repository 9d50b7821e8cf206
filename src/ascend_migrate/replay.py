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
real folders only, in TARGET and in SKILL_DIR alike. One bad path refuses the whole replay
(exit 2) with TARGET untouched, and the message names the field.
"""
from __future__ import annotations

import json
import shutil
import sys
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
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReplayError(f"{path}: not found; regenerate the skill with `ascend-migrate skill PATH --model NAME` "
                          "(skills from older versions cannot be replayed)") from None
    except (OSError, ValueError) as exc:
        raise ReplayError(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != REPLAY_SCHEMA:
        raise ReplayError(f"{path}: not a replay record (schema {REPLAY_SCHEMA})")
    return data


@dataclass
class RecordPaths:
    """Every location a replay record names, checked (see `check_record_paths`)."""

    patch: Path
    patch_text: str
    binary: list[tuple[Path, Path]] = field(default_factory=list)  # (in SKILL_DIR, in TARGET)
    deleted: list[Path] = field(default_factory=list)
    entry_source: Optional[Path] = None
    entry_dest: Optional[Path] = None


def _no_link(root: Path, dest: Path) -> None:
    from ascend_migrate.safe_paths import UnsafePathError, no_link_below

    try:
        no_link_below(root, dest, "path")
    except UnsafePathError as exc:
        raise ReplayError(f"refusing the skill: {exc}") from None


def check_record_paths(skill_dir: Path, target: Path, record: dict[str, Any]) -> RecordPaths:
    """Check every path in the record and in manual.patch before anything is written; a path
    that is absolute, has `..`, a drive, a NUL, goes through a symlink or through version-control
    or tool state (`.git`, `.ascend-migrate`, ...: `safe_paths.state_component`) raises
    ReplayError (2) naming the field."""
    from ascend_migrate.patchfile import PatchError, parse_patch
    from ascend_migrate.safe_paths import UnsafePathError, check_relative, inside

    def lst(value: Any, what: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            raise ReplayError(f"{skill_dir / 'replay.json'}: {what} is not a list")
        return value

    try:
        migrate = record.get("migrate")
        if not isinstance(migrate, dict) or not isinstance(migrate.get("options"), dict):
            raise ReplayError(f"{skill_dir / 'replay.json'}: no migrate options")
        for key in ("entry", "no_entry"):
            for rel in lst(migrate["options"].get(key), f"migrate.options.{key}"):
                check_relative(rel, f"migrate.options.{key}")
        info = record.get("manual_patch") or {}
        patch = inside(skill_dir, info.get("file") or "manual.patch", "manual_patch.file")
        try:
            text = patch.read_text(encoding="utf-8", errors="surrogateescape")
        except FileNotFoundError:
            raise ReplayError(f"{patch}: not found") from None
        except OSError as exc:
            raise ReplayError(f"{patch}: cannot read: {exc.strerror or exc}") from None
        try:
            file_patches = parse_patch(text)
        except PatchError as exc:
            raise ReplayError(f"{patch}: {exc}") from None
        for fp in file_patches:
            for rel in {fp.old, fp.new} - {None}:
                inside(target, rel, "path in manual.patch")
        for rel in lst(info.get("files"), "manual_patch.files"):
            check_relative(rel, "manual_patch.files")
        out = RecordPaths(patch=patch, patch_text=text)
        for rel in lst(info.get("binary_files"), "manual_patch.binary_files"):
            if not isinstance(rel, str) or not rel.startswith("files/"):
                raise UnsafePathError(f"manual_patch.binary_files {rel!r}: not under files/")
            out.binary.append((inside(skill_dir, rel, "manual_patch.binary_files"),
                               inside(target, rel.removeprefix("files/"), "manual_patch.binary_files")))
        for rel in lst(info.get("deleted_binary"), "manual_patch.deleted_binary"):
            out.deleted.append(inside(target, rel, "manual_patch.deleted_binary"))
        entry = record.get("entry") or {}
        if entry.get("unported_file") and entry.get("path"):
            out.entry_source = inside(skill_dir, entry["unported_file"], "entry.unported_file")
            out.entry_dest = inside(target, entry["path"], "entry.path")
        golden = (record.get("golden") or {}).get("file")
        if golden:
            inside(skill_dir, golden, "golden.file")
        thresholds = (record.get("validation") or {}).get("thresholds_file")
        if thresholds:
            inside(skill_dir, thresholds, "validation.thresholds_file")
    except UnsafePathError as exc:
        raise ReplayError(f"refusing the skill: {exc}; nothing was written") from None
    return out


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
    if entry.get("unported_file") and entry.get("path"):
        dest = paths.entry_dest
        if not dest.exists():
            try:
                stored = paths.entry_source.read_bytes()
            except OSError as exc:
                raise ReplayError(f"{skill_dir / entry['unported_file']}: cannot read the stored entry: {exc}") from None
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(stored)
            echo(f"0/4 added the validation entry {entry['path']} (TARGET had none)")
    echo(f"1/4 migrate: {record['migrate']['command']}")
    result = migrate(target, write=True, style=options.get("style") or "transfer",
                     min_torch=options.get("min_torch") or "2.6", annotate=bool(options.get("annotate")),
                     safe_only=bool(options.get("safe_only")), inject_init=bool(options.get("inject_init")),
                     torch_npu_version=options.get("torch_npu_version"),
                     entry=options.get("entry") or (), no_entry=options.get("no_entry") or ())
    if result.errors:
        echo("   files the migration could not rewrite: " + ", ".join(f.path for f in result.errors))
    patch_info = record.get("manual_patch") or {}
    patch_path = paths.patch
    echo(f"2/4 apply {patch_path.name} ({len(patch_info.get('files') or [])} file(s))")
    try:
        patched = apply_patch(target, paths.patch_text)
    except PatchError as exc:
        raise ReplayError(f"manual.patch does not apply to the migrate output of {target}: {exc}. "
                          "TARGET is not the revision that was ported (or was not a clean checkout)", 1) from None
    for source, dest in paths.binary:
        _no_link(target, dest)  # again: the migration and the patch ran since the first check
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink():
            dest.unlink()
        shutil.copyfile(source, dest, follow_symlinks=False)
    for dest in paths.deleted:
        _no_link(target, dest)
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
    tree = record["tree"]
    manifest = provenance.tree_manifest(target, tree.get("excluded") or [])
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
        return load_thresholds(str(skill_dir / stored)) if stored else load_thresholds()
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
