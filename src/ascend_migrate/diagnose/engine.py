"""Match logs and tracebacks against the failure knowledge base.

The matcher streams: a log is read in blocks of whole lines, one prefilter pass per block
(see prefilter.py) picks the lines that hold an anchor, and only those lines are matched
against the signatures that share one of the line's anchors. Memory stays flat in the size of
the log. Several logs (one per rank) can be diagnosed together; matches are then ranked across
them so the earliest most-certain root cause comes first.

A failure usually prints one specific line (the cause) and, around it, the layers that relayed
it: torch_npu's ERR suffix, a CANN code, "HCCL function error". A relay within the same error
block (same log, same rank, a few lines apart) as a specific match is folded into it (listed
under `relayed`), not reported beside it. A collective timeout (HCCL, stream synchronisation)
ranks below any error another rank or log reports: the rank that failed holds the cause, the
ones still waiting only time out.
"""
from __future__ import annotations

import codecs
import functools
import gzip
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generator, Iterable, Iterator, Optional, Sequence, Union

from ascend_migrate.diagnose.codes import CodeTable, decode_line, default_codes, line_details, quick_anchors
from ascend_migrate.diagnose.kb import CONFIDENCE_RANK, KnowledgeBase, Signature, default_kb
from ascend_migrate.diagnose.prefilter import candidate_lines

SCHEMA_VERSION = 2
NEAR_WINDOW = 6
MAX_LINE_CHARS = 400
BLOCK_CHARS = 4 << 20
# A line longer than this is read in windows of this many characters, each overlapping the one
# before by MAX_SIGNATURE_CHARS, so memory stays flat whatever the line length (a 1 GB line from
# a small .gz) and a signature up to MAX_SIGNATURE_CHARS long is found across a window edge.
LINE_WINDOW_CHARS = 256 << 10
MAX_SIGNATURE_CHARS = 4 << 10
REPEAT_LINE_CHARS = 2048  # longer lines are not remembered as repeats (bounded memory)
SNIFF_BYTES = 64 << 10
ERR_CODE_ID = "torch-npu-err-code"
CODE_FAMILY_ID = "cann-code"
# A CANN-looking code somewhere on a line: selects the line for the code decoder even when it
# holds no anchor (`E89999[PID: ...] When layout is TND, ...`). Fixed width: linear.
_CODE_SCAN = re.compile(r"E[0-9A-Z]\d{4}")
# Within the same severity, role and confidence: a signature says more than a decoded CANN code,
# which says more than torch_npu's ERR suffix (the layer that relayed the failure).
SPECIFICITY = {CODE_FAMILY_ID: 1, ERR_CODE_ID: 2}
# Answers that name the layer which relayed a failure, not the failure: folded into a specific
# match of the same error block (RELAY_WINDOW lines, same log and rank).
RELAY_IDS = frozenset({ERR_CODE_ID, CODE_FAMILY_ID, "hccl-call-failed", "hccl-timeout-generic"})
RELAY_WINDOW = 10
# What a rank reports while it waits for a peer that failed: below any error of another rank.
COLLECTIVE_WAITS = frozenset({"hccl-connect-timeout", "hccl-exec-timeout", "hccl-timeout-generic", "hccl-call-failed",
                              "stream-sync-timeout"})
REPEAT_CACHE = 20000  # distinct lines remembered
ROLE_RANK = {"cause": 0, "symptom": 1, "waiting": 2}
SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# "ERR00100 PTA call acl api failed": submodule 2 digits + code 3 digits.
_ERR_RE = re.compile(r"\bERR(\d{2})(\d{3})\b")
# Timestamps as Ascend, vLLM, Python logging and glog print them; compared as
# (month, day, hour, minute, second, fraction) so logs without a year still order.
_TS_RES = (
    re.compile(r"\b\d{4}-(\d{2})-(\d{2})[-T ](\d{2}):(\d{2}):(\d{2})(?:[.,:](\d{1,6}))?"),
    re.compile(r"(?:^|[\s\[(])(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?"),
    re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?"),
)
_RANK_RE = re.compile(r"\[rank(\d+)\]|\brank[= ](\d+)\b|RankID:(\d+)\b|\bTP(\d+)\b(?= pid=)")
_LIB_RE = re.compile(r"(?P<lib>(?<![\w.+-])[\w.+-]+\.so(?:\.[\w.]+)?)")


class InputError(ValueError):
    """A log that cannot be diagnosed (missing, empty, binary). Exit status 2."""


@dataclass
class Match:
    id: str
    title: str
    category: str
    severity: str
    confidence: str
    cause: str
    fix: str
    line_no: int  # 1-based line of the first occurrence
    line: str  # that line, stripped and clipped
    count: int = 1  # occurrences in the log
    decoded: Optional[dict[str, Any]] = None  # ERR code details
    other_lines: list[int] = field(default_factory=list)
    family: str = ""
    role: str = "cause"
    confirm: str = ""
    source: str = ""
    rank: Optional[int] = None
    timestamp: Optional[str] = None
    details: Optional[dict[str, str]] = None
    file_index: int = 0
    follows: tuple[str, ...] = ()  # families whose earlier match makes this one a consequence
    relayed: list[dict[str, Any]] = field(default_factory=list)  # relays folded into this match
    _ts: Optional[tuple] = field(default=None, repr=False)
    _sites: list[tuple[int, int]] = field(default_factory=list, repr=False)  # (log, line) of each occurrence

    def seen_again(self, file_index: int, line_no: int) -> None:
        self.count += 1
        if len(self.other_lines) < 50:
            self.other_lines.append(line_no)
        if len(self._sites) < 50:
            self._sites.append((file_index, line_no))

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "title": self.title,
            "family": self.family,
            "category": self.category,
            "severity": self.severity,
            "confidence": self.confidence,
            "role": self.role,
            "cause": self.cause,
            "fix": self.fix,
            "confirm": self.confirm,
            "source": self.source,
            "line_no": self.line_no,
            "line": self.line,
            "count": self.count,
            "rank": self.rank,
            "timestamp": self.timestamp,
        }
        if self.details:
            out["details"] = dict(self.details)
        if self.decoded is not None:
            out["decoded"] = self.decoded
        if self.relayed:
            out["relayed"] = [dict(r) for r in self.relayed]
        return out


# ----------------------------------------------------------------------------- reading


def _clean(line: str) -> str:
    if "\x1b" in line:
        line = _ANSI_RE.sub("", line)
    if "\r" in line:
        # progress bars rewrite a line with \r: keep what was printed last
        line = line.rsplit("\r", 1)[-1] or line.replace("\r", "")
    return line


def clean_lines(text: str) -> list[str]:
    """Split a log into lines, dropping ANSI colour codes and carriage-return overdraws."""
    lines = [_clean(raw) for raw in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_BINARY_MAGIC = {
    b"\x7fELF": "an ELF executable or library",
    b"PK\x03\x04": "a zip archive",
    b"\x89PNG": "a PNG image",
    b"%PDF": "a PDF document",
    b"BZh": "a bzip2 archive",
    b"\xfd7zXZ": "an xz archive",
    b"\x80\x02": "a Python pickle",
}


def _sniff(head: bytes, name: str) -> str:
    """'utf-8' or 'utf-16' for text; raise InputError for empty or binary input."""
    if not head.strip():
        raise InputError(f"{name} is empty: nothing to diagnose (capture the failing run with `cmd 2>&1 | tee run.log`)")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    for magic, what in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise InputError(f"{name} looks like {what}, not a text log")
    sample = head[:8192]
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
    if sample.count(0) > len(sample) // 100 or controls > len(sample) // 10:
        raise InputError(f"{name} looks like a binary file, not a text log (give the console output or the plog text)")
    return "utf-8"


class _Prepend(io.RawIOBase):
    """A binary stream that first returns `head`, then the rest of `raw`."""

    def __init__(self, head: bytes, raw: IO[bytes]) -> None:
        self._head, self._raw = head, raw

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed and self._raw is not None:
            self._raw.close()
        super().close()

    def readinto(self, b) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._raw.read(len(b))
        b[: len(data)] = data
        return len(data)


def open_log(source: Union[str, Path, IO[bytes]], name: Optional[str] = None) -> IO[str]:
    """A text stream over a log file (plain, gzip or UTF-16) or a binary stream.

    Raises InputError for a missing, unreadable, empty or binary input.
    """
    if isinstance(source, (str, Path)):
        name = name or str(source)
        path = Path(source)
        if path.is_dir():
            raise InputError(f"{name} is a directory; give a log file or '-'")
        try:
            raw: IO[bytes] = open(path, "rb")
        except OSError as exc:
            raise InputError(f"cannot read {name}: {exc.strerror or exc}") from exc
    else:
        raw, name = source, name or "<stdin>"
    head = raw.read(SNIFF_BYTES)
    if head[:2] == b"\x1f\x8b":
        raw = gzip.GzipFile(fileobj=io.BufferedReader(_Prepend(head, raw)))  # type: ignore[assignment]
        try:
            head = raw.read(SNIFF_BYTES)
        except (OSError, EOFError) as exc:
            raise InputError(f"{name}: broken gzip file ({exc})") from exc
    encoding = _sniff(head, name)
    stream = io.BufferedReader(_Prepend(head, raw), buffer_size=1 << 20)
    return io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline="")


def iter_pieces(stream: IO[str], size: int = BLOCK_CHARS,
                window: Optional[int] = LINE_WINDOW_CHARS) -> Iterator[tuple[str, str, bool]]:
    """("lines", text, True) for runs of whole lines (the last may lack its line end at the end
    of the input), and ("window", text, last) for the windows of a line longer than `window`
    characters: consecutive windows overlap by MAX_SIGNATURE_CHARS; `last` marks the window
    that ends the line."""
    pending = ""
    while True:
        block = pending + stream.read(size)
        pending = ""
        if not block:
            return
        if not block.endswith("\n"):
            if window is None:
                block += stream.readline()
            else:
                rest = stream.readline(window)
                block += rest
                if rest and not rest.endswith("\n") and len(rest) == window:
                    cut = block.rfind("\n") + 1
                    if cut:
                        yield "lines", block[:cut], True
                    pending = yield from _windows(block[cut:], stream, window)
                    continue
        yield "lines", block, True


def _windows(start: str, stream: IO[str], window: int) -> Generator[tuple[str, str, bool], None, str]:
    """The windows of the over-long line that begins with `start` (read on from `stream`);
    returns what was read past the line's end."""
    overlap = min(MAX_SIGNATURE_CHARS, window // 2)
    current = start
    while True:
        nl = current.find("\n")
        if nl != -1:  # the line ends in this window
            yield "window", current[:nl], True
            return current[nl + 1:]
        if len(current) >= window:
            yield "window", current[:window], False
            current = current[window - overlap:]
            continue
        more = stream.readline(window)
        if not more:
            yield "window", current, True
            return ""
        current += more


# ----------------------------------------------------------------------------- matching


def _clip(line: str) -> str:
    line = line.strip()
    if len(line) > MAX_LINE_CHARS:
        return line[: MAX_LINE_CHARS - 3] + "..."
    return line


def _timestamp(line: str) -> tuple[Optional[tuple], Optional[str]]:
    for rx in _TS_RES:
        m = rx.search(line)
        if m:
            mo, d, h, mi, s, frac = m.groups()
            key = (int(mo), int(d), int(h), int(mi), int(s), float("0." + (frac or "0")))
            return key, m.group(0).strip(" [(")
    return None, None


def _rank(line: str) -> Optional[int]:
    m = _RANK_RE.search(line)
    if not m:
        return None
    return int(next(g for g in m.groups() if g is not None))


def decode_err_code(code: str, kb: Optional[KnowledgeBase] = None) -> Optional[dict[str, Any]]:
    """Decode a torch_npu error code like 'ERR00100' into module and meaning."""
    kb = kb or default_kb()
    m = _ERR_RE.search(code)
    if not m:
        return None
    mod, num = m.group(1), m.group(2)
    module = kb.err_modules.get(mod)
    entry = kb.err_codes.get(num)
    return {
        "code": f"ERR{mod}{num}",
        "module": module.name if module else f"unknown module {mod}",
        "module_meaning": module.meaning if module else "",
        "error": entry.name if entry else f"unknown code {num}",
        "meaning": entry.meaning if entry else "",
        "fix": entry.fix if entry else "",
    }


class _Index:
    """Per knowledge base: which signatures each anchor can lead to."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.anchors = kb.anchors
        self.by_anchor: dict[str, list[Signature]] = {a: [] for a in self.anchors}
        self.unanchored: list[Signature] = []
        order = {s.id: i for i, s in enumerate(kb.signatures)}
        for sig in kb.signatures:
            hit = False
            for a in self.anchors:
                if any(a in lit.lower() for p in sig.patterns for alt in _lits(p.pattern) for lit in alt):
                    self.by_anchor[a].append(sig)
                    hit = True
            if not hit:
                self.unanchored.append(sig)
        self.order = order
        # per pattern: the lowercase literals each alternative needs (a cheap test before the regex)
        self.lits = {id(p): [[lit.lower() for lit in alt] for alt in _lits(p.pattern)]
                     for sig in kb.signatures for p in sig.patterns}

    def may_match(self, pattern: re.Pattern, low_line: str) -> bool:
        return any(all(lit in low_line for lit in alt) for alt in self.lits[id(pattern)])

    def signatures_for(self, low_line: str) -> list[Signature]:
        seen: dict[str, Signature] = {s.id: s for s in self.unanchored}
        for a in self.anchors:
            if a in low_line:
                for s in self.by_anchor[a]:
                    seen[s.id] = s
        return sorted(seen.values(), key=lambda s: self.order[s.id])


@functools.lru_cache(maxsize=4096)
def _lits(pattern: str) -> list[list[str]]:
    from ascend_migrate.diagnose.prefilter import required_literals

    return required_literals(pattern)


_INDEXES: dict[int, _Index] = {}


def _index(kb: KnowledgeBase) -> _Index:
    idx = _INDEXES.get(id(kb))
    if idx is None or idx.kb is not kb:
        idx = _INDEXES[id(kb)] = _Index(kb)
    return idx


class Diagnoser:
    """Accumulates matches over one or more logs; `matches()` returns them ranked."""

    def __init__(self, kb: Optional[KnowledgeBase] = None, codes: Optional[CodeTable] = None) -> None:
        self.kb = kb or default_kb()
        self.codes = codes or default_codes()
        self.idx = _index(self.kb)
        self.found: dict[str, Match] = {}
        self.lines = 0
        self.sources: list[str] = []
        self.notes: list[str] = []  # what was read differently (over-long lines), for the report
        # a line seen before (same text) adds to the same matches: remember which
        self._repeat: dict[str, list[str]] = {}
        # ERR codes are decoded wherever they appear; make sure the prefilter sees them.
        # Numeric runtime codes are found by the phrases that print them.
        self._anchors = tuple(sorted(set(self.idx.anchors) | {"err0", "err9"} | set(quick_anchors())))

    # one log ---------------------------------------------------------------
    def feed_stream(self, stream: IO[str], source: str) -> None:
        file_index = len(self.sources)
        self.sources.append(source)
        base = 0  # lines before the current block
        tail: list[str] = []  # the last NEAR_WINDOW lines of the previous block
        long_lines = 0
        for kind, block, last in iter_pieces(stream, BLOCK_CHARS, LINE_WINDOW_CHARS):
            if kind == "window":
                if "\x1b" in block:
                    block = _ANSI_RE.sub("", block)
                for start, end in candidate_lines(block, self._anchors, _CODE_SCAN):
                    self._match_line(block, start, end, base + 1, tail, source, file_index)
                if last:
                    long_lines += 1
                    base += 1
                continue
            if "\x1b" in block:
                block = _ANSI_RE.sub("", block)
            counted, counted_at = 0, 0
            for start, end in candidate_lines(block, self._anchors, _CODE_SCAN):
                counted += block.count("\n", counted_at, start)
                counted_at = start
                self._match_line(block, start, end, base + counted + 1, tail, source, file_index)
            n = block.count("\n")
            if block and not block.endswith("\n"):
                n += 1
            base += n
            tail = block.rsplit("\n", NEAR_WINDOW + 1)[-(NEAR_WINDOW + 1):]
        self.lines += base
        if long_lines:
            self.notes.append(f"{source}: {long_lines} line(s) longer than {LINE_WINDOW_CHARS} characters were read in "
                              f"windows overlapping by {MAX_SIGNATURE_CHARS} characters (a signature longer than "
                              "that across a window edge is not found)")

    def feed_text(self, text: str, source: str = "<text>") -> None:
        self.feed_stream(io.StringIO(text), source)

    def _window(self, block: str, start: int, end: int, tail: list[str]) -> list[str]:
        before: list[str] = []
        pos = start
        while len(before) < NEAR_WINDOW and pos > 0:
            prev = block.rfind("\n", 0, pos - 1)
            before.append(block[prev + 1 : pos - 1])
            pos = prev + 1
        if len(before) < NEAR_WINDOW and pos == 0:
            before += [t for t in reversed(tail) if t][: NEAR_WINDOW - len(before)]
        after: list[str] = []
        pos = end
        while len(after) < NEAR_WINDOW and pos < len(block):
            nxt = block.find("\n", pos + 1)
            nxt = len(block) if nxt == -1 else nxt
            after.append(block[pos + 1 : nxt])
            pos = nxt
        return [_clean(x) for x in before + after]

    def _match_line(self, block: str, start: int, end: int, line_no: int, tail: list[str], source: str, fi: int) -> None:
        line = _clean(block[start:end])
        if not line.strip():
            return
        keys = self._repeat.get(line)
        if keys is not None:
            for key in keys:
                prev = self.found[key]
                prev.seen_again(fi, line_no)
            return
        low = line.lower()
        window: Optional[list[str]] = None
        used_context = False
        on_line: list[tuple[Signature, re.Match]] = []
        for sig in self.idx.signatures_for(low):
            m = None
            for p in sig.patterns:
                if not self.idx.may_match(p, low):
                    continue
                m = p.search(line)
                if m:
                    break
            if m is None or (sig.unless is not None and sig.unless.search(line)):
                continue
            if sig.near is not None:
                used_context = True
                if window is None:
                    window = self._window(block, start, end, tail)
                if not any(sig.near.search(w) for w in window + [line]):
                    continue
            on_line.append((sig, m))
        hidden = {h for sig, _ in on_line for h in sig.supersedes}
        ts_key, ts_text = None, None
        decoded_codes = decode_line(line, self.codes)
        if on_line or decoded_codes or "err" in low:
            ts_key, ts_text = _timestamp(line)
        keys: list[str] = []
        for sig, m in on_line:
            if sig.id in hidden:
                continue
            details = self._details(sig, m)
            if details is not None and "package" not in details and "ascend" not in low:
                continue  # a library we do not know, on a line that is not about Ascend (libcudart...)
            key = sig.id if not details else f"{sig.id}:{details.get('library', '')}"
            keys.append(key)
            self._add(key, sig, line, line_no, source, fi, ts_key, ts_text, details)
        for em in _ERR_RE.finditer(line):
            decoded = decode_err_code(em.group(0), self.kb)
            key = f"{ERR_CODE_ID}:{decoded['code']}"
            keys.append(key)
            prev = self.found.get(key)
            if prev is not None:
                prev.seen_again(fi, line_no)
                continue
            self.found[key] = Match(
                id=ERR_CODE_ID,
                title=f"torch_npu error {decoded['code']}: {decoded['module']} {decoded['error']}",
                category="device",
                severity="error",
                confidence="low",
                cause=f"{decoded['module_meaning'] or decoded['module']}: {decoded['meaning'] or 'code not in the table'}. "
                "The code names the layer that failed, not why; the lines before it (E.... codes, the Python exception) say why.",
                fix=decoded["fix"] or "Read the error text before the code.",
                line_no=line_no,
                line=_clip(line),
                decoded=decoded,
                family="kernel-faults",
                role="symptom",
                confirm="ls -t ~/ascend/log/debug/plog | head -3   # then read the newest plog for the first ERROR",
                source=source,
                rank=_rank(line),
                timestamp=ts_text,
                file_index=fi,
                _ts=ts_key,
                _sites=[(fi, line_no)],
            )
        # A line a signature explains needs no family answer (it would only repeat the layer).
        for entry in (decoded_codes if not [k for k in keys if not k.startswith(ERR_CODE_ID)] else ()):
            key = f"{CODE_FAMILY_ID}:{entry['code']}"
            keys.append(key)
            prev = self.found.get(key)
            if prev is not None:
                prev.seen_again(fi, line_no)
                continue
            self.found[key] = Match(
                id=CODE_FAMILY_ID,
                title=(f"{entry['area']} (HCCL error code {entry['code'].split()[-1]})" if entry["kind"] == "hccl"
                       else f"CANN code {entry['code']}: {entry['area']}"),
                category="device",
                severity="error",
                confidence="low",
                cause=f"{entry['meaning'][:1].upper()}{entry['meaning'][1:]}. No known signature explains this line; only the code's family "
                f"({entry['family_area']}) is certain, so treat this as where to look, not as the cause.",
                fix=f"Check {entry['check']}.",
                line_no=line_no,
                line=_clip(line),
                decoded=entry,
                family=entry["family"],
                role="symptom",
                confirm=entry["confirm"],
                source=source,
                rank=_rank(line),
                timestamp=ts_text,
                details=line_details(line) or None,
                file_index=fi,
                _ts=ts_key,
                _sites=[(fi, line_no)],
            )
        if not used_context and len(self._repeat) < REPEAT_CACHE and len(line) <= REPEAT_LINE_CHARS:
            self._repeat[line] = keys

    def _details(self, sig: Signature, m: re.Match) -> Optional[dict[str, str]]:
        if sig.lookup != "libraries":
            return None
        lib = m.groupdict().get("lib") if m.re.groupindex else None
        if not lib:
            lm = _LIB_RE.search(m.group("_sig") if "_sig" in m.re.groupindex else m.group(0))
            lib = lm.group("lib") if lm else ""
        lib = lib.rsplit("/", 1)[-1]
        known = self.kb.library(lib.split(".so")[0]) if lib else None
        out = {"library": lib}
        if known:
            out.update(package=known.package, path=known.path)
        return out

    def _add(self, key, sig, line, line_no, source, fi, ts_key, ts_text, details) -> None:
        prev = self.found.get(key)
        if prev is not None:
            prev.seen_again(fi, line_no)
            return
        cause, fix, confirm = sig.cause, sig.fix, sig.confirm
        if details:
            fill = {"library": details.get("library", "?"), "package": details.get("package", "the package that ships it"),
                    "path": details.get("path", "$ASCEND_HOME_PATH")}
            cause, fix, confirm = (s.format(**fill) for s in (cause, fix, confirm))
        self.found[key] = Match(
            id=sig.id, title=sig.title, category=sig.category, severity=sig.severity,
            confidence=sig.confidence, cause=cause, fix=fix, line_no=line_no, line=_clip(line),
            family=sig.family, role=sig.role, confirm=confirm, source=source, rank=_rank(line),
            timestamp=ts_text, details=details or (line_details(line) or None), file_index=fi,
            follows=sig.follows, _ts=ts_key, _sites=[(fi, line_no)],
        )

    def matches(self) -> list[Match]:
        return rank_matches(fold_relays(self.found.values()))


def _is_relay(m: Match) -> bool:
    return m.id in RELAY_IDS


def _sites(m: Match) -> Optional[list[tuple[int, int]]]:
    """(log, line) of every occurrence of `m`, or None when not all were kept."""
    if m.count == 1:
        return [(m.file_index, m.line_no)]
    return list(m._sites) if len(m._sites) == m.count else None


def _distance(s: Match, g_sites: list[tuple[int, int]]) -> Optional[int]:
    """How far the specific error `s` is from a relay seen at `g_sites`, if every one of them
    lies in an error block of `s` in the same log (RELAY_WINDOW lines), else None."""
    s_sites = _sites(s) or [(s.file_index, s.line_no)]
    gaps = []
    for fi, line in g_sites:
        near = [abs(line - sl) for sf, sl in s_sites if sf == fi]
        if not near or min(near) > RELAY_WINDOW:
            return None
        gaps.append(min(near))
    return max(gaps)


def fold_relays(matches: Iterable[Match]) -> list[Match]:
    """The matches with each relay explained by a specific match folded into it.

    A relay (torch_npu's ERR suffix, a decoded CANN code, "HCCL function error", the bare HCCL
    timeout) whose every occurrence lies within RELAY_WINDOW lines of a specific error of the
    same log and rank only repeats that error from another layer: it moves into that match's
    `relayed` list. So does a low-confidence cause (a generic driver code) next to a more
    certain cause of its family. The nearest specific error takes it, one of the relay's own rank first. A
    relay seen elsewhere too (another log, lines far apart) may belong to several failures and
    stays. Sets every given match's `relayed` afresh (so a Diagnoser asked twice answers the
    same, with the same Match objects); returns the matches that remain."""
    matches = list(matches)
    for m in matches:
        m.relayed = []
    specific = [m for m in matches if m.severity == "error" and not _is_relay(m)
                and not (m.role == "cause" and m.confidence == "low")]
    folded: dict[int, Match] = {}  # id(relay) -> the match it is folded into
    for g in matches:
        weak_cause = g.role == "cause" and g.confidence == "low" and not _is_relay(g)
        g_sites = _sites(g)
        if g.severity != "error" or not (_is_relay(g) or weak_cause) or g_sites is None:
            continue
        best = None
        for s in specific:
            if s is g or (weak_cause and (s.role != "cause" or s.family != g.family)):
                continue
            if s.rank is not None and g.rank is not None and s.rank != g.rank:
                continue
            gap = _distance(s, g_sites)
            if gap is None:
                continue
            order = (0 if s.rank is not None and s.rank == g.rank else 1, gap, _key(s, frozenset()))
            if best is None or order < best[0]:
                best = (order, s)
        if best is not None:
            folded[id(g)] = best[1]
    for g in matches:
        host = folded.get(id(g))
        if host is not None:
            host.relayed.append({"id": g.id, "title": g.title, "line_no": g.line_no, "line": g.line,
                                 **({"code": g.decoded["code"]} if g.decoded and "code" in g.decoded else {})})
    out = [m for m in matches if id(m) not in folded]
    for m in out:
        m.relayed.sort(key=lambda r: r["line_no"])
    return out


def _waiting(matches: Sequence[Match]) -> set[int]:
    """Collective timeouts of a rank while another rank (or another log) reports an error of
    its own: that rank failed, this one only waited for it."""
    own = [m for m in matches if m.severity == "error" and m.id not in COLLECTIVE_WAITS and m.id != ERR_CODE_ID
           and not (m.id == CODE_FAMILY_ID and m.family == "distributed")]
    if not own:
        return set()
    return {id(t) for t in matches if t.id in COLLECTIVE_WAITS and any(
        e.file_index != t.file_index or (e.rank is not None and t.rank is not None and e.rank != t.rank) for e in own)}


def _key(m: Match, demoted: set[int], waiting: frozenset = frozenset()) -> tuple:
    role = "waiting" if id(m) in waiting else "symptom" if id(m) in demoted else m.role
    return (SEVERITY_RANK.get(m.severity, 3), ROLE_RANK.get(role, 0), -CONFIDENCE_RANK[m.confidence],
            SPECIFICITY.get(m.id, 0))


def _consequences(matches: Sequence[Match]) -> set[int]:
    """Matches that read as consequences of an earlier failure in the same log: a signature
    that `follows` a family (host memory exhausted after a device fault) when a match of that
    family comes first."""
    first: dict[tuple[int, str], int] = {}
    for m in matches:
        if m.severity == "error" and m.id not in SPECIFICITY:
            k = (m.file_index, m.family)
            first[k] = min(first.get(k, m.line_no), m.line_no)
    return {id(m) for m in matches if m.follows and any(
        first.get((m.file_index, fam), m.line_no) < m.line_no for fam in m.follows)}


def _cmp(a: Match, b: Match, demoted: frozenset = frozenset(), waiting: frozenset = frozenset()) -> int:
    ka, kb = _key(a, demoted, waiting), _key(b, demoted, waiting)
    if ka != kb:
        return -1 if ka < kb else 1
    if a.file_index == b.file_index:
        return (a.line_no > b.line_no) - (a.line_no < b.line_no)
    if a._ts is not None and b._ts is not None and a._ts != b._ts:
        return -1 if a._ts < b._ts else 1
    return (a.file_index > b.file_index) - (a.file_index < b.file_index)


def rank_matches(matches: Iterable[Match]) -> list[Match]:
    """Most likely root cause first.

    Errors before warnings; causes before symptoms (a collective timeout on a healthy rank is
    a symptom of a failure elsewhere), and a collective timeout below any error another rank
    or log reports; more certain before less; then earliest: by line within one log, by
    timestamp across logs (one per rank), else in the order the logs were given.
    """
    matches = list(matches)
    demoted = frozenset(_consequences(matches))
    waiting = frozenset(_waiting(matches))
    return sorted(matches, key=functools.cmp_to_key(lambda a, b: _cmp(a, b, demoted, waiting)))


def chain(matches: Iterable[Match]) -> tuple[Optional[Match], list[Match]]:
    """The failure read as a chain: the cause (the first-ranked error) and the other errors
    that followed from it, in the order they happened (by log, then line)."""
    ranked = [m for m in rank_matches(matches) if m.severity == "error"]
    if not ranked:
        return None, []
    cause, rest = ranked[0], ranked[1:]
    rest.sort(key=lambda m: (m.file_index, m.line_no))
    return cause, rest


def diagnose_text(text: str, kb: Optional[KnowledgeBase] = None) -> list[Match]:
    d = Diagnoser(kb)
    d.feed_text(text)
    return d.matches()


def diagnose_lines(lines: Sequence[str], kb: Optional[KnowledgeBase] = None) -> list[Match]:
    return diagnose_text("\n".join(lines), kb)


def diagnose_files(paths: Sequence[Union[str, Path]], kb: Optional[KnowledgeBase] = None) -> tuple[list[Match], Diagnoser]:
    d = Diagnoser(kb)
    for p in paths:
        with open_log(p) as stream:
            d.feed_stream(stream, str(p))
    return d.matches(), d


def primary(matches: Iterable[Match]) -> Optional[Match]:
    """The most likely root cause: the first ranked error (warnings only when nothing else)."""
    ranked = rank_matches(matches)
    return ranked[0] if ranked else None


def report_dict(matches: list[Match], source: Union[str, Sequence[str]], n_lines: int,
                notes: Sequence[str] = ()) -> dict[str, Any]:
    ranked = rank_matches(matches)
    top = ranked[0] if ranked else None
    sources = [source] if isinstance(source, str) else list(source)
    extra = {"notes": list(notes)} if notes else {}
    cause, consequences = chain(ranked)
    brief = lambda m: {"id": m.id, "title": m.title, "source": m.source, "line_no": m.line_no,  # noqa: E731
                       "confidence": m.confidence, **({"details": dict(m.details)} if m.details else {})}
    return {**extra,
        "schema_version": SCHEMA_VERSION,
        "source": sources[0] if len(sources) == 1 else sources,
        "lines": n_lines,
        "primary": top.id if top else None,
        "chain": {"cause": brief(cause) if cause else None, "consequences": [brief(m) for m in consequences]},
        "errors_found": any(m.severity == "error" for m in ranked),
        "matches": [m.to_dict() for m in ranked],
    }
