"""Scanners for everything that is not a parseable Python module.

CUDA sources are triaged by what they use; dependency declarations are read from
requirements files, setup.py/setup.cfg, pyproject.toml (PEP 621 and Poetry) and conda
environment files; shell/YAML/JSON configs are searched line by line (lower confidence);
Python files that do not parse are scanned at token level so nothing is skipped silently.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import replace
from functools import lru_cache
from typing import NamedTuple, Optional

from ascend_migrate.knowledge.base import KnowledgeBase, format_message
from ascend_migrate.scan.bounds import RuleCap, clip
from ascend_migrate.scan.finding import Edit, Finding, Fix, Position
from ascend_migrate.scan.dependencies import _comment_start, _cuda_wheel_sources, _snippet

# --------------------------------------------------------------------------- CUDA sources
_HIGH = re.compile(r"\b(cublas\w*|cudnn\w*|cutlass|cusparse\w*|cufft\w*|curand\w*|cusolver\w*|thrust::|cub::|nvcuda::wmma|mma\.sync|cp\.async|__nv_bfloat16|cuda::pipeline)", re.I)
_MEDIUM = re.compile(r"(__shared__|__shfl\w*|__syncwarp|__ballot_sync|__any_sync|__all_sync|\batomic\w+\s*\(|cooperative_groups|__ldg|warpSize|__syncthreads)")
_KERNEL = re.compile(r"__global__\s+(?:void|[\w:<>]+)\s+(\w+)")


def triage_cuda_source(text: str) -> tuple[str, list[str]]:
    """Classify a .cu/.cuh file: low (elementwise/reductions), medium (shared memory, warp
    intrinsics, atomics), high (cuBLAS/cuDNN/CUTLASS/Thrust/tensor cores). Returns the level
    and the evidence that decided it."""
    code = _strip_c_comments(text)
    high = sorted({m.group(1) for m in _HIGH.finditer(code)})
    if high:
        return "high", high
    medium = sorted({m.group(1) for m in _MEDIUM.finditer(code)})
    if medium:
        return "medium", medium
    kernels = _KERNEL.findall(code)
    return "low", [f"kernels: {', '.join(kernels)}" if kernels else "no device intrinsics"]


def _strip_c_comments(text: str) -> str:
    r"""`text` without /* */ comments (their line breaks kept) and // comments.

    A loop of str.find, not a lazy regex: `/\*.*?\*/` restarts at every `/*` of an unclosed
    comment and scans to the end each time (quadratic on a file of `/*`)."""
    out, pos = [], 0
    while True:
        start = text.find("/*", pos)
        if start == -1:
            out.append(text[pos:])
            break
        end = text.find("*/", start + 2)
        if end == -1:  # an unclosed comment is left as it is
            out.append(text[pos:])
            break
        out.append(text[pos:start] + "\n" * text.count("\n", start, end))
        pos = end + 2
    return re.sub(r"//[^\n]*", "", "".join(out))


def scan_cuda_source(kb: KnowledgeBase, path: str, text: str) -> list[Finding]:
    level, evidence = triage_cuda_source(text)
    rule = kb.rule("EX001")
    effort = {"low": "rewrite with PyTorch operators", "medium": "AscendC port or CPU fallback",
              "high": "CPU fallback first, then a torch_npu fused operator"}[level]
    kernels = _KERNEL.findall(_strip_c_comments(text))
    detail = f"triage {level} ({'; '.join(evidence[:6])}); {effort}"
    if kernels:
        detail += f"; {len(kernels)} kernel(s)"
    first = text.splitlines()[0] if text else ""
    return [Finding(rule=rule.id, path=path, line=1, col=0, end_line=1, end_col=len(first),
                    message=format_message(rule, symbol=f"{level} complexity", detail=detail),
                    severity=rule.severity, confidence="high", snippet=first.strip()[:200],
                    symbol=f"triage:{level}")]


# --------------------------------------------------------------------------- configs
class _ConfigPattern(NamedTuple):
    """A generic config rule. A variable is renamed in both styles (the launch host is Ascend);
    a value (`--device cuda`, `backend: nccl`) for the transfer style only."""
    rule: str
    pattern: "re.Pattern[str]"
    replacement: str
    variable: bool = False
    #: also a part of longer names (`nvidia-nccl-cu12`: reported whole, never rewritten) and of
    #: `NCCL_*` variables (DS002's); a specific finding of the line that covers it wins
    word_in_names: bool = False


_CONFIG_PATTERNS = (
    _ConfigPattern("DS001", re.compile(r"(?i)(?<![A-Za-z0-9_])nccl(?![A-Za-z0-9_])"), "hccl", word_in_names=True),
    _ConfigPattern("DV006", re.compile(r"\bCUDA_VISIBLE_DEVICES\b"), "ASCEND_RT_VISIBLE_DEVICES", variable=True),
    _ConfigPattern("DV001", re.compile(r"""(?x)(?:--device[=\s]+|\bdevice["']?\s*[:=]\s*["']?)(cuda)(?::\d+)?\b"""), "npu"),
)
_CONFIG_STYLES = ("transfer", "agnostic")
# A shell word that is a plain value: quoted strings, ordinary characters and simple $VAR /
# ${VAR} expansions (a command substitution is not one: its value is not known here).
_SHELL_VALUE = re.compile(r"""(?:"[^"`$\\]*"|'[^']*'|\$\{?\w+\}?|[^\s;&|<>()"'`$\\])*""")
_SHELL_WORD_END = re.compile(r"[\s;&|)]|$")
_SHELL_COMMAND_START = re.compile(r"(?:^|[;&|(]|\$\(|`)[^;&|(`]*$")
_ASSIGNMENT_PREFIXES = frozenset({"export", "env", "local", "readonly", "declare", "typeset", "-x", "-gx"})


def _beside_edit(code: str, lineno: int, start: int, end: int, new: str) -> Optional[Edit]:
    """The agnostic style's edit for a CUDA variable set in a shell line (`export
    CUDA_VISIBLE_DEVICES=0,1`, `CUDA_VISIBLE_DEVICES=0 python train.py`, `docker run -e ...`):
    set the Ascend variable `new` to the same value beside it, so that a CUDA host keeps its own
    setting and an NPU host gets the same one. None where the line does not set the variable
    as a shell word of its own, or sets `new` already."""
    if code[end:end + 1] != "=" or len(code) > _BESIDE_MAX_LINE or _set_beside(code, new, "sh"):
        return None
    stop = _SHELL_VALUE.match(code, end + 1).end()  # type: ignore[union-attr]
    if not _SHELL_WORD_END.match(code, stop):
        return None  # `$(...)`, backquotes, a redirection: not a plain value
    value = code[end + 1:stop]
    command = _SHELL_COMMAND_START.search(code, 0, start)
    words = (code[command.start():start] if command else code[:start]).lstrip(";&|(`$").split()
    if words[-1:] and words[-1] in ("-e", "--env"):
        return Edit(Position(lineno, stop), Position(lineno, stop), f" {words[-1]} {new}={value}")
    if code[max(0, start - 6):start] == "--env=":
        return Edit(Position(lineno, stop), Position(lineno, stop), f" --env={new}={value}")
    if all(w in _ASSIGNMENT_PREFIXES or w.partition("=")[0].isidentifier() and "=" in w for w in words):
        return Edit(Position(lineno, stop), Position(lineno, stop), f" {new}={value}")
    return None


# Longest shell line whose CUDA variables get an Ascend twin: a longer one is generated or
# hostile, and each of its matches would otherwise re-read the line (quadratic).
_BESIDE_MAX_LINE = 4096


@lru_cache(maxsize=16)
def _set_beside(code: str, new: str, kind: str) -> bool:
    """Does this shell line set the Ascend variable `new` too (an agnostic launcher)? Cached:
    asked once per CUDA variable of the line."""
    if kind != "sh":
        return False
    at = code.find(new + "=")
    while at >= 0:
        if at == 0 or not (code[at - 1].isalnum() or code[at - 1] in "_$"):
            return True
        at = code.find(new + "=", at + 1)
    return False


def _rename_fixes(code: str, lineno: int, start: int, end: int, new: str, kind: str) -> tuple[Fix, ...]:
    """A CUDA variable in a launch config: renamed in the transfer style (the port runs on NPU
    hosts only); in the agnostic style, whose launchers still run on CUDA hosts, the Ascend
    variable is set beside it in shell lines, and anything else is left for a person."""
    fixes = [Fix(style="transfer", edits=(Edit(Position(lineno, start), Position(lineno, end), new),),
                 safety="safe", description=f"use {new}")]
    if _set_beside(code, new, kind):
        return ()  # already both: nothing left to change in either style
    beside = _beside_edit(code, lineno, start, end, new) if kind == "sh" else None
    if beside is not None:
        fixes.append(Fix(style="agnostic", edits=(beside,), safety="safe",
                         description=f"also set {new} (the CUDA host keeps its own setting)"))
    return tuple(fixes)
_NCCL_ENV = re.compile(r"\bNCCL_[A-Z0-9_]+\b")


_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")


class _Echoed:
    """Is a position of one line inside a quoted argument of echo/printf (a message, not a
    command)? `"$(nvidia-smi -L)"` inside the quotes runs the tool, so it is not a message.

    Answered in one pass over the line for positions asked in increasing order (every regex's
    matches come in that order; a smaller position starts the pass again, once per regex):
    reading the line up to the position for each match was quadratic on a long echo line."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.ends = [m.end() for m in _ECHO.finditer(code)]
        self._reset()

    def _reset(self) -> None:
        self.k = 0  # echo commands ending at or before the position
        self.start = -1  # where the quoted arguments of the last of them begin (-1: none)
        self.pos = 0  # characters before this were read
        self.odd = {'"': False, "'": False}  # an odd number of this quote since `start`
        self.runs = {'"': False, "'": False}  # `$(` or a backquote since the last such quote

    def __call__(self, index: int) -> bool:
        if index < self.pos:
            self._reset()
        ends = self.ends
        while self.k < len(ends) and ends[self.k] <= index:
            self.start = ends[self.k]
            self.k += 1
        if self.start < 0:
            return False
        if self.start > self.pos or self.pos == 0:  # a later echo: its quotes are counted afresh
            self.pos = self.start
            self.odd = {'"': False, "'": False}
            self.runs = {'"': False, "'": False}
        code = self.code
        for i in range(self.pos, index):
            ch = code[i]
            if ch in self.odd:
                self.odd[ch] = not self.odd[ch]
                self.runs[ch] = False
            elif ch == "`" or (ch == "(" and i > 0 and code[i - 1] == "$" and i - 1 >= self.start):
                self.runs['"'] = self.runs["'"] = True
        self.pos = index
        for quote in ('"', "'"):
            if self.odd[quote]:
                return not self.runs[quote]
        return False


def _embedded(code: str, start: int, end: int) -> bool:
    """Is code[start:end] joined by `-`, `.` or `/` to a longer token?"""
    return (start > 0 and code[start - 1] in "-./") or (end < len(code) and code[end] in "-./")


def _token_bounds(code: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and code[start - 1] in _TOKEN_CHARS:
        start -= 1
    while end < len(code) and code[end] in _TOKEN_CHARS:
        end += 1
    return start, end


_SCHEDULER_DIRECTIVE = re.compile(r"^\s*#(?:SBATCH|PBS|BSUB|\$)\s")


def scan_config(kb: KnowledgeBase, path: str, text: str, kind: str) -> list[Finding]:
    """Line scan of shell / YAML / JSON configs for nccl, CUDA_VISIBLE_DEVICES, cuda devices.

    Linear in the line length: a token is measured and stored once however many matches it
    holds (`nccl-nccl-...`), each line's snippet is taken once, and past the per-rule cap
    findings are counted, not built (`RuleCap`)."""
    keep = RuleCap(path)
    closed = _closed_flags(kb, text)
    for lineno, line in enumerate(text.splitlines(), 1):
        directive = _SCHEDULER_DIRECTIVE.match(line) if kind == "sh" else None
        # a job scheduler's header (`#SBATCH --gres=gpu:8`) is a comment to the shell, read as options
        code = line[: _comment_start(line[directive.end():], kind) + directive.end()] if directive else \
            line[: _comment_start(line, kind)]
        if not code.strip():
            continue
        snippet = _snippet(line)
        echoed = _Echoed(code) if _ECHO.search(code) is not None and not _WRITES_FILE.search(code) else None
        specific = _config_env_and_tools(kb, path, lineno, line, code, closed, snippet=snippet, echoed=echoed,
                                         kind=kind)
        if kind not in ("sh", "docker"):
            specific += _config_values(kb, path, lineno, line, code, snippet=snippet, form=kind)
        claimed = sorted((f.col, f.end_col) for f in specific if f.rule not in _GENERIC_CONFIG_RULES)
        for rule_id, pattern, replacement, variable, word_in_names in _CONFIG_PATTERNS:
            rule = kb.rule(rule_id)
            token_end = -1  # the end of the last long token reported: its other matches are in it
            next_claim, claim_end = 0, -1  # claimed spans starting at or before the match; their furthest end
            for m in pattern.finditer(code):
                g = 1 if m.groups() else 0
                start, end = m.start(g), m.end(g)
                if start < token_end:
                    continue
                if echoed is not None and echoed(start):
                    continue  # a message printed for the user, not a setting
                if word_in_names and code[max(0, start - 5):start].upper().endswith("NCCL_"):
                    continue
                embedded = word_in_names and _embedded(code, start, end)
                if embedded:  # part of a longer flag or package name: reported whole, never rewritten
                    start, end = _token_bounds(code, start, end)
                    token_end = end
                if word_in_names and claimed:  # matches come in order: one pass over the spans
                    while next_claim < len(claimed) and claimed[next_claim][0] <= start:
                        claim_end = max(claim_end, claimed[next_claim][1])
                        next_claim += 1
                    if claim_end >= end:
                        continue
                if not keep.room(rule.id):
                    keep.skip(rule.id, lineno, start)
                    continue
                matched = clip(code[start:end])
                fixes: tuple[Fix, ...] = ()
                severity = rule.severity
                if replacement and not embedded and variable:
                    fixes = _rename_fixes(code, lineno, start, end, replacement, kind)
                    if _set_beside(code, replacement, kind):
                        severity = "info"  # an agnostic launcher: both variables are set
                elif replacement and not embedded:
                    new = replacement.upper() if matched.isupper() else replacement
                    edit = Edit(Position(lineno, start), Position(lineno, end), new)
                    fixes = (Fix(style="transfer", edits=(edit,), safety="safe", description=f"use {new}"),)
                keep.add(Finding(
                    rule=rule.id, path=path, line=lineno, col=start, end_line=lineno, end_col=end,
                    message=format_message(rule, symbol=matched), severity=severity,
                    confidence="low", snippet=snippet, symbol=matched, fixes=fixes))
        keep.extend(specific)
        rule = kb.rule("DS002")
        for m in _NCCL_ENV.finditer(code):
            if echoed is not None and echoed(m.start()):
                continue
            keep.offer(rule.id, lineno, m.start(), lambda m=m: Finding(
                rule=rule.id, path=path, line=lineno, col=m.start(), end_line=lineno, end_col=m.end(),
                message=format_message(rule, symbol=clip(m.group(0))), severity=rule.severity,
                confidence="low", snippet=snippet, symbol=clip(m.group(0))))
    findings = keep.findings()
    if kind in ("sh", "docker"):
        findings.extend(_cuda_wheel_sources(kb, path, text.splitlines(), pip_options=False))
    if kind == "docker":
        # an image's build file: what it names is listed for review, never rewritten (a
        # CUDA_VISIBLE_DEVICES renamed inside an image built FROM a CUDA image helps nobody)
        findings = [replace(f, fixes=()) if f.fixes else f for f in findings]
    return findings


# The rules of the line scan that know only the word (nccl, a CUDA variable or tool); the others
# (cli-flag and config-value rules) know which setting the word is the value of.
_GENERIC_CONFIG_RULES = frozenset({"DS001", "DS002", "DV001", "DV006", "DV007", "NV001"})


_LINE_PATTERNS: dict[int, tuple[KnowledgeBase, list, list, "re.Pattern[str]"]] = {}


def _line_patterns(kb: KnowledgeBase) -> tuple[list, list, "re.Pattern[str]"]:
    """The env-var and tool regexes of `kb`, built once per knowledge base (not once per line),
    and one alternation of their names that a line must contain for any of them to match."""
    held = _LINE_PATTERNS.get(id(kb))
    if held is None or held[0] is not kb:
        env = [(re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])"), name, spec or {}, rule)
               for rule in kb.rules_of_kind("env-table") for name, spec in rule.match["vars"].items()]
        tools = [(re.compile(r"(?<![\w.-])" + re.escape(tool) + r"(?![\w-])"), tool, note, rule)
                 for rule in kb.rules_of_kind("tool-command") for tool, note in rule.match["tools"].items()]
        names = sorted({n for _, n, _, _ in env} | {t for _, t, _, _ in tools}, key=len, reverse=True)
        any_name = re.compile("|".join(re.escape(n) for n in names) or r"(?!)")
        held = _LINE_PATTERNS[id(kb)] = (kb, env, tools, any_name)
    return held[1], held[2], held[3]


def _env_patterns(kb: KnowledgeBase) -> list[tuple["re.Pattern[str]", str, dict, object]]:
    return _line_patterns(kb)[0]


def _tool_patterns(kb: KnowledgeBase) -> list[tuple["re.Pattern[str]", str, str, object]]:
    return _line_patterns(kb)[1]


# Commands whose quoted arguments are messages: echo/printf, logger, and the logging helpers
# launch scripts define for themselves (`log "using nccl"`, `log_info ...`, `warn ...`, `die ...`).
_ECHO = re.compile(r"(?:^|[;&|(]\s*|\s)(?:echo|printf|logger|log|log_\w+|\w+_log|info|warn|warning|die)\s")
# `echo "export CUDA_VISIBLE_DEVICES=0" >> env.sh` writes a setting into a file: that text counts.
_WRITES_FILE = re.compile(r"""["']\s*(?:>>?|\|\s*tee\b)\s*(?!&|/dev/)""")


_CONFIG_VALUE_PATTERNS: dict[int, tuple[KnowledgeBase, list]] = {}


def _config_value_patterns(kb: KnowledgeBase) -> list[tuple["re.Pattern[str]", str, object, dict]]:
    """One regex per (config-value rule, key): the key, then a value the rule's pattern accepts,
    quoted or not, as a YAML `key: value` or JSON `"key": value` entry; with the key's
    replacement values per file form (`replace: {yaml: "false"}`, empty when it has none)."""
    held = _CONFIG_VALUE_PATTERNS.get(id(kb))
    if held is None or held[0] is not kb:
        patterns = []
        for rule in kb.rules_of_kind("config-value"):
            for key, spec in rule.match["keys"].items():
                regex = re.compile(r"""(?:^|[{,\s])["']?(""" + re.escape(key) + r""")["']?\s*:\s*["']?(""" + spec["values"]
                                   + r""")["']?\s*(?:[,}]|$)""")
                patterns.append((regex, spec["note"], rule, spec.get("replace") or {}))
        held = _CONFIG_VALUE_PATTERNS[id(kb)] = (kb, patterns)
    return held[1]


def _config_values(kb: KnowledgeBase, path: str, lineno: int, line: str, code: str,
                   snippet: Optional[str] = None, form: str = "yaml") -> list[Finding]:
    """config-value rules: settings of a known config kind whose value chooses a GPU-only path
    (`distribution_strategy: mirrored`, `mixed_precision_dtype: float16`); other values of the
    same key (`tpu`, `bfloat16`, `float32`) are not findings. A key with a replacement for this
    file form (`yaml`, `json`) gets an edit of the value alone (`tf32: true` -> `tf32: false`)."""
    out: list[Finding] = []
    snippet = _snippet(line) if snippet is None else snippet
    for regex, note, rule, replace in _config_value_patterns(kb):
        for m in regex.finditer(code):
            symbol = clip(f"{m.group(1)}: {m.group(2)}")
            fixes: tuple[Fix, ...] = ()
            new = replace.get(form)
            if new is not None:
                edit = Edit(Position(lineno, m.start(2)), Position(lineno, m.end(2)), str(new))
                fixes = tuple(Fix(style=s, edits=(edit,), safety="safe", description=f"set {m.group(1)} to {new}")
                              for s in _CONFIG_STYLES if rule.fix_kind(s) == "safe")  # type: ignore[attr-defined]
            out.append(Finding(
                rule=rule.id, path=path, line=lineno, col=m.start(1), end_line=lineno, end_col=m.end(2),  # type: ignore[attr-defined]
                message=format_message(rule, symbol=symbol, detail=note), severity=rule.severity,  # type: ignore[arg-type,attr-defined]
                confidence="medium", snippet=snippet, symbol=symbol, fixes=fixes))
    return out


_CLI_FLAG_PATTERNS: dict[int, tuple[KnowledgeBase, list]] = {}


def _cli_flag_patterns(kb: KnowledgeBase, docs: bool = False) -> list[tuple["re.Pattern[str]", str, object, Optional[str],
                                                                           Optional[str], "Optional[re.Pattern[str]]"]]:
    """The cli-flag rules' regexes, compiled once per knowledge base (not once per line), each
    with its severity (None: the rule's), the text that replaces the flag's `value` group (None:
    no edit) and the regex a whole file must match for it to count (None: any file). A flag's
    entry is its note, or a mapping of `note`, `level` (a value the script fills in is something
    to check, not a known GPU setting), `replace` and `in_files_matching`. `docs`: the rules
    read in a README's code blocks too (`docs: true`); the others are the rules of scripts
    (a rule with `only_docs: true` is read in documents alone)."""
    held = _CLI_FLAG_PATTERNS.get(id(kb))
    if held is None or held[0] is not kb:
        scripts, documents = [], []
        for rule in kb.rules_of_kind("cli-flag"):
            for flag, spec in rule.match["flags"].items():
                if isinstance(spec, dict):
                    gate = re.compile(spec["in_files_matching"]) if spec.get("in_files_matching") else None
                    entry = (re.compile(flag), spec["note"], rule, spec.get("level"), spec.get("replace"), gate)
                else:
                    entry = (re.compile(flag), spec, rule, None, None, None)
                if not rule.match.get("only_docs"):
                    scripts.append(entry)
                if rule.match.get("docs"):
                    documents.append(entry)
        held = _CLI_FLAG_PATTERNS[id(kb)] = (kb, (scripts, documents))
    return held[1][1 if docs else 0]


def _closed_flags(kb: KnowledgeBase, text: str) -> frozenset[int]:
    """Indexes (into `_cli_flag_patterns`) of the flags this file's text does not open: an
    option shared by several tools (`--dtype fp16`) counts only beside the flags of the tool it
    belongs to."""
    return frozenset(i for i, (*_, gate) in enumerate(_cli_flag_patterns(kb))
                     if gate is not None and not gate.search(text))


def _config_env_and_tools(kb: KnowledgeBase, path: str, lineno: int, line: str, code: str,
                          closed: frozenset[int] = frozenset(), *, snippet: Optional[str] = None,
                          echoed: "Optional[_Echoed]" = None, kind: str = "") -> list[Finding]:
    """DV007 (CUDA-only environment variables, renamed where Ascend has the same setting),
    NV001 (nvidia-smi / nvcc invocations) and command-line options (cli-flag rules, except the
    `closed` ones) in one config or script line. `snippet` and `echoed`: the line's snippet and
    echo reader when the caller has them already (each is built once per line)."""
    out: list[Finding] = []
    snippet = _snippet(line) if snippet is None else snippet
    if echoed is None and _ECHO.search(code) is not None and not _WRITES_FILE.search(code):
        echoed = _Echoed(code)
    printed = echoed if echoed is not None else _Echoed(code)  # tool names: any echo, file or not
    for index, (regex, note, rule, level, replace, _) in enumerate(_cli_flag_patterns(kb)):
        if index in closed:
            continue
        for m in regex.finditer(code):
            if echoed is not None and echoed(m.start()):
                continue  # `echo "add --quantization awq"` is advice printed, not an option used
            symbol = clip(m.group(0))
            fixes: tuple[Fix, ...] = ()
            if replace is not None and "value" in regex.groupindex and m.group("value") is not None:
                edit = Edit(Position(lineno, m.start("value")), Position(lineno, m.end("value")), replace)
                fixes = tuple(Fix(style=s, edits=(edit,), safety="safe", description=f"pass {replace}")
                              for s in _CONFIG_STYLES if rule.fix_kind(s) == "safe")  # type: ignore[attr-defined]
            out.append(Finding(
                rule=rule.id, path=path, line=lineno, col=m.start(), end_line=lineno, end_col=m.end(),  # type: ignore[attr-defined]
                message=format_message(rule, symbol=symbol, detail=note),  # type: ignore[arg-type]
                severity=level or rule.severity,  # type: ignore[attr-defined]
                confidence="high", snippet=snippet, symbol=symbol, fixes=fixes))
    env, tools, any_name = _line_patterns(kb)
    if not any_name.search(code):
        return out
    for regex, name, spec, rule in env:
        for m in regex.finditer(code):
            if echoed is not None and echoed(m.start()):
                continue
            fixes: tuple[Fix, ...] = ()
            severity = spec.get("level") or rule.severity  # type: ignore[attr-defined]
            if spec.get("replace"):
                fixes = _rename_fixes(code, lineno, m.start(), m.end(), spec["replace"], kind)
                if _set_beside(code, spec["replace"], kind):
                    severity = "info"  # an agnostic launcher: both variables are set
            out.append(Finding(
                rule=rule.id, path=path, line=lineno, col=m.start(), end_line=lineno, end_col=m.end(),  # type: ignore[attr-defined]
                message=format_message(rule, symbol=name, detail=spec.get("note", "")),  # type: ignore[arg-type]
                severity=severity, confidence="low",
                snippet=snippet, symbol=name, fixes=fixes))
    for regex, tool, note, rule in tools:
        for m in regex.finditer(code):
            if printed(m.start()):
                continue
            out.append(Finding(
                rule=rule.id, path=path, line=lineno, col=m.start(), end_line=lineno, end_col=m.end(),  # type: ignore[attr-defined]
                message=format_message(rule, symbol=tool, detail=note), severity=rule.severity,  # type: ignore[arg-type, attr-defined]
                confidence="low", snippet=snippet, symbol=tool))
    return out


# --------------------------------------------------------------------------- documents
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_SHELL_FENCES = frozenset({"", "sh", "bash", "shell", "console", "zsh", "shell-session", "text",
                           "dockerfile", "docker"})


def scan_docs(kb: KnowledgeBase, path: str, text: str) -> list[Finding]:
    """A README's shell code blocks (install and usage steps a user copies), read for the
    cli-flag rules marked `docs: true`: low-confidence findings, at most warnings, never edited
    (the document is not a script that runs)."""
    patterns = _cli_flag_patterns(kb, docs=True)
    if not patterns:
        return []
    keep = RuleCap(path)
    fence = ""
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if m:
            if not fence:
                fence = m.group(1) if m.group(2).lower() in _SHELL_FENCES else "-" + m.group(1)
            elif line.strip().startswith(fence.lstrip("-")):
                fence = ""
            continue
        if not fence or fence.startswith("-"):
            continue
        code = line[: _comment_start(line, "sh")]
        for regex, note, rule, level, _, gate in patterns:
            if gate is not None and not gate.search(text):
                continue
            for hit in regex.finditer(code):
                symbol = clip(hit.group(0))
                severity = "info" if (level or rule.severity) == "info" else "warning"  # type: ignore[attr-defined]
                keep.offer(rule.id, lineno, hit.start(), lambda hit=hit, rule=rule, note=note, symbol=symbol,  # type: ignore[misc]
                           severity=severity: Finding(
                    rule=rule.id, path=path, line=lineno, col=hit.start(), end_line=lineno, end_col=hit.end(),  # type: ignore[attr-defined]
                    message=format_message(rule, symbol=symbol, detail=note), severity=severity,  # type: ignore[arg-type]
                    confidence="low", snippet=_snippet(line), symbol=symbol))
    return keep.findings()


# --------------------------------------------------------------------------- launch scripts
_LAUNCHER = r"(?:python[0-9.]*|torchrun|accelerate\s+launch|deepspeed|torch\.distributed\.(?:run|launch))\b"
# The arguments are read up to the next launcher word at most (tempered): that word starts its
# own match, and a line of many launcher words with no script costs linear time, not quadratic.
_LAUNCH = re.compile(_LAUNCHER + r"(?:(?!" + _LAUNCHER + r")[^\n;|&])*?(?:\s-m\s+([\w.]+)|\s([\w./-]+\.py))\b")


def launched_scripts(text: str) -> list[tuple[int, str]]:
    """(line, target) for each `python x.py` / `torchrun ... x.py` / `python -m mod` in a script."""
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        code = line[: _comment_start(line, "sh")]
        for m in _LAUNCH.finditer(code):
            out.append((lineno, m.group(1) or m.group(2)))
    return out


# --------------------------------------------------------------------------- token fallback
_TOKEN_RULES = (
    (re.compile(r"\btorch\.cuda\.([A-Za-z_][\w.]*)"), "cuda-table"),
    (re.compile(r"\.cuda\(\)"), "DV002"),
    (re.compile(r"""["']cuda(?::\d+)?["']"""), "DV001"),
    (re.compile(r"(?i)\bnccl\b"), "DS001"),
    (re.compile(r"\bDataParallel\b"), "DS003"),
)


def scan_tokens(kb: KnowledgeBase, path: str, text: str, reason: str) -> list[Finding]:
    """Scan a Python file that does not parse: SC001 plus low-confidence token matches."""
    sc = kb.rule("SC001")
    keep = RuleCap(path)
    keep.add(Finding(rule=sc.id, path=path, line=1, col=0, end_line=1, end_col=0,
                     message=format_message(sc, detail=reason), severity=sc.severity,
                     confidence="high", symbol=reason))
    for lineno, line in enumerate(text.splitlines(), 1):
        code = _strip_python_comment(line)
        snippet = None
        for pattern, target in _TOKEN_RULES:
            for m in pattern.finditer(code):
                if target == "cuda-table":
                    name = m.group(1)[:200]  # no CUDA name is longer: a long dotted run is cut first
                    while name and f"torch.cuda.{name}" not in kb.cuda_names and "." in name:
                        name = name.rsplit(".", 1)[0]
                    entry = kb.cuda_names.get(f"torch.cuda.{name}")
                    rule = kb.rule(entry.rule if entry and kb.rule(entry.rule).match["kind"] == "cuda-table"
                                   else ("CU001" if entry and entry.transfer != "none" else "CU002"))
                    symbol = f"torch.cuda.{name}"
                else:
                    rule = kb.rule(target)
                    symbol = m.group(0)
                if not keep.room(rule.id):
                    keep.skip(rule.id, lineno, m.start())
                    continue
                if snippet is None:
                    snippet = _snippet(line)
                keep.add(Finding(
                    rule=rule.id, path=path, line=lineno, col=m.start(), end_line=lineno, end_col=m.end(),
                    message=format_message(rule, symbol=clip(symbol), detail="token match"), severity=rule.severity,
                    confidence="low", snippet=snippet, symbol=clip(symbol)))
    return keep.findings()


def _strip_python_comment(line: str) -> str:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line.split("#", 1)[0]
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            return line[: tok.start[1]]
    return line
