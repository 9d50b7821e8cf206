"""Unified diffs between two trees, and a strict applier for them.

The manual work of a port is stored as `manual.patch`: the unified diff from the migrate
output to the validated tree. It is applied to a freshly migrated checkout, whose files are
byte-identical to the diff's base, so every hunk must match exactly where it says; a hunk
that does not match fails loudly with its file and line. Files are split on "\\n" only, so
CRLF line ends and other separators survive; bytes that are not UTF-8 travel through
surrogate escapes. The output is readable by `git apply` and `patch -p1`.
"""
from __future__ import annotations

import difflib
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

NO_EOL = "\\ No newline at end of file\n"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    pass


def split_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def read_text(path: Path) -> Optional[str]:
    """The file as text, or None for binary content (NUL bytes)."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="surrogateescape")


def _diff_lines(a: list[str], b: list[str], old: str, new: str) -> list[str]:
    out = []
    for line in difflib.unified_diff(a, b, old, new, n=3):
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + NO_EOL)
    return out


def file_diff(rel: str, before: Optional[str], after: Optional[str]) -> str:
    """One file's diff; before/after None means the file is absent on that side."""
    a = split_lines(before) if before is not None else []
    b = split_lines(after) if after is not None else []
    old = f"a/{rel}" if before is not None else "/dev/null"
    new = f"b/{rel}" if after is not None else "/dev/null"
    head = f"diff --git a/{rel} b/{rel}\n"
    if before is None:
        head += "new file mode 100644\n"
    elif after is None:
        head += "deleted file mode 100644\n"
    body = _diff_lines(a, b, old, new)
    if not body:
        if before is None or after is None:  # an empty file created or deleted
            return head + f"--- {old}\n+++ {new}\n"
        return ""
    return head + "".join(body)


@dataclass
class TreeDiff:
    patch: str = ""
    files: list[str] = field(default_factory=list)  # files the patch touches
    binary: list[str] = field(default_factory=list)  # files that differ but are not text (copied instead)
    deleted_binary: list[str] = field(default_factory=list)
    added: int = 0
    removed: int = 0


def diff_trees(base: Path, base_files: dict[str, Path], final: Path, final_files: dict[str, Path],
               same: dict[str, bool]) -> TreeDiff:
    """Diff two trees given their file maps ({rel: absolute path}); `same[rel]` says a file is identical."""
    result = TreeDiff()
    chunks = []
    for rel in sorted(set(base_files) | set(final_files)):
        if same.get(rel):
            continue
        before = read_text(base_files[rel]) if rel in base_files else None
        after = read_text(final_files[rel]) if rel in final_files else None
        if (rel in base_files and before is None) or (rel in final_files and after is None):
            if rel in final_files:
                result.binary.append(rel)
            else:
                result.deleted_binary.append(rel)
            continue
        text = file_diff(rel, before, after)
        if text:
            chunks.append(text)
            result.files.append(rel)
            for line in text.splitlines():
                if line.startswith("+") and not line.startswith("+++"):
                    result.added += 1
                elif line.startswith("-") and not line.startswith("---"):
                    result.removed += 1
    result.patch = "".join(chunks)
    return result


# --- applying -----------------------------------------------------------------------------

@dataclass
class _FilePatch:
    old: Optional[str]
    new: Optional[str]
    hunks: list[tuple[int, list[str]]] = field(default_factory=list)  # (old start, lines)


def parse_patch(text: str) -> list[_FilePatch]:
    lines = split_lines(text)
    patches: list[_FilePatch] = []
    i = 0
    current: Optional[_FilePatch] = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            current = None
            i += 1
            continue
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old = line[4:].rstrip("\n")
            new = lines[i + 1][4:].rstrip("\n")
            current = _FilePatch(None if old == "/dev/null" else old[2:], None if new == "/dev/null" else new[2:])
            patches.append(current)
            i += 2
            continue
        m = _HUNK.match(line)
        if m and current is not None:
            start = int(m.group(1))
            old_len = int(m.group(2)) if m.group(2) is not None else 1
            new_len = int(m.group(4)) if m.group(4) is not None else 1
            body: list[str] = []
            i += 1
            seen_old = seen_new = 0
            while i < len(lines) and (seen_old < old_len or seen_new < new_len or
                                      (i < len(lines) and lines[i] == NO_EOL)):
                hl = lines[i]
                if hl == NO_EOL:
                    if body:
                        body[-1] = body[-1][:-1] if body[-1].endswith("\n") else body[-1]
                    i += 1
                    continue
                tag = hl[:1]
                if tag not in (" ", "-", "+"):
                    if hl == "\n":  # a context line whose trailing space was stripped
                        hl, tag = " \n", " "
                    else:
                        raise PatchError(f"malformed hunk line {i + 1}: {hl[:60]!r}")
                body.append(hl)
                if tag in (" ", "-"):
                    seen_old += 1
                if tag in (" ", "+"):
                    seen_new += 1
                i += 1
            current.hunks.append((start, body))
            continue
        if line.startswith(("new file mode", "deleted file mode", "index ")):
            i += 1
            continue
        if current is None and patches and line.strip() == "":
            i += 1
            continue
        i += 1
    return patches


def apply_patch(root: Path, text: str) -> list[str]:
    """Apply a unified diff under `root`; return the files changed. Raises PatchError.

    The patch may come from someone else (a shared skill): every path must be relative, free of
    `..` and reach its file through real folders (no symlinked component). Every hunk is checked
    before the first file is written, so a patch that does not apply changes nothing."""
    from ascend_migrate.fix.commit import new_file_mode
    from ascend_migrate.safe_paths import UnsafePathError, inside

    root = Path(root)
    planned: list[tuple[str, Path, Optional[bytes]]] = []  # (rel, file, new bytes or None to delete)
    for fp in parse_patch(text):
        rel = fp.new or fp.old
        try:
            for name in {fp.old, fp.new} - {None}:
                inside(root, name, "path in patch")
            target = inside(root, rel, "path in patch")
        except UnsafePathError as exc:
            raise PatchError(f"unsafe {exc}") from None
        if any(p == rel for p, _t, _d in planned):
            raise PatchError(f"{rel}: changed twice in one patch")
        if fp.old is None:
            if target.exists():
                raise PatchError(f"{rel}: the patch creates it, but it already exists")
            old_lines: list[str] = []
        else:
            if not target.is_file():
                raise PatchError(f"{rel}: the patch changes it, but it does not exist")
            content = read_text(target)
            if content is None:
                raise PatchError(f"{rel}: binary file, cannot apply a text hunk")
            old_lines = split_lines(content)
        out: list[str] = []
        pos = 0  # index into old_lines
        for start, body in fp.hunks:
            idx = max(start - 1, 0) if any(h[:1] in (" ", "-") for h in body) else start
            if idx < pos:
                raise PatchError(f"{rel}: overlapping hunks at line {start}")
            out.extend(old_lines[pos:idx])
            pos = idx
            for hl in body:
                tag, content_line = hl[:1], hl[1:]
                if tag in (" ", "-"):
                    if pos >= len(old_lines) or old_lines[pos] != content_line:
                        found = old_lines[pos] if pos < len(old_lines) else "<end of file>"
                        raise PatchError(f"{rel}:{pos + 1}: the patch expects {content_line!r}, the file has {found!r}")
                    pos += 1
                    if tag == " ":
                        out.append(content_line)
                else:
                    out.append(content_line)
        out.extend(old_lines[pos:])
        data = None if fp.new is None else "".join(out).encode("utf-8", errors="surrogateescape")
        planned.append((rel, target, data))
    changed = []
    for rel, target, data in planned:
        if data is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            # a changed file keeps its mode; a new one gets what a plain create gives (0666 less
            # the umask), not the 0600 of the temporary file
            mode = target.stat().st_mode if target.exists() else new_file_mode()
            # a fresh name (O_EXCL): a link planted under a predictable temporary name is never followed
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".patch.tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.chmod(tmp, stat.S_IMODE(mode))
                os.replace(tmp, target)
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
        changed.append(rel)
    return changed
