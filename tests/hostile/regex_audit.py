"""Regex inventory and adversarial-line timing for the regex audit test.

Every regular expression the tool runs on text it did not write (scanned trees, logs, wheels,
pyproject files) must take time linear in the line length. This module finds them all:

* every compiled pattern reachable from a module global of `ascend_migrate` (walking tuples,
  lists, dicts, sets and dataclass instances a few levels deep);
* every pattern the knowledge-base loaders compile (diagnose signatures with their `near` and
  `unless`, prefilter anchors) and every string under a pattern-like key of the KB YAML files
  (rule match patterns are used with `re.search`/`re.match` at run time);
* every literal pattern passed to a `re.*` call anywhere in the sources (found with `ast`),
  so patterns compiled inside functions are audited too.

A `re.*` call whose pattern is not a literal must be listed in `DYNAMIC_SITES` with where its
patterns come from; the guard test fails on any other, so a new call site cannot escape.

Adversarial lines are built from each pattern's own parse tree: runs of every printable
character, runs of each literal fragment, and for every repetition a witness of what comes
before it followed by its body pumped many times and a character that fails the rest.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import re
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

try:  # Python 3.11+: the parser moved; `sre_parse` is deprecated there
    import re._parser as sre_parse  # type: ignore[import-not-found]
    import re._constants as sre_c  # type: ignore[import-not-found]
except ImportError:  # Python 3.9, 3.10
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

import ascend_migrate

SRC = Path(ascend_migrate.__file__).parent
KB_DIR = SRC / "knowledge"
RE_FUNCS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
PATTERN_KEYS = re.compile(r"pattern|regex|^near$|^unless$|anchor")

# `re.*` calls whose pattern is not a literal: (module path relative to the package, source text
# of the pattern argument) -> where the patterns come from, which the inventory must cover.
DYNAMIC_SITES: dict[tuple[str, str], str] = {
    ("validate/command.py", "pattern"):
        "the user's own --loss-pattern (not ours to audit), applied to the first 2,000 characters of "
        "each output line, so a crafted line is bounded in length",
    ("scan/pyast/frameworks.py", 'rule.match["arg_pattern"]'): "rule YAML `match.arg_pattern` (KB walk)",
    ("scan/pyast/environment.py", 'rule.match["pattern"]'): "rule YAML `match.pattern` (KB walk)",
    ("scan/pyast/frameworks.py", 'rule.match["pattern"]'): "rule YAML `match.pattern` (KB walk)",
    ("diagnose/kb.py", "pattern"): "failures.yaml patterns, near, unless (diagnose loader)",
    ("diagnose/kb.py", "linear"): "the linear forms of failures.yaml patterns, near, unless (diagnose loader)",
    ("scan/text_scanners.py", '_LAUNCHER + r"(?:(?!" + _LAUNCHER + r")[^\\n;|&])*?(?:\\s-m\\s+([\\w.]+)|\\s([\\w./-]+\\.py))\\b"'):
        "module global _LAUNCH (walked)",
    ("knowledge/base.py", "pat"): "packages.yaml patterns, compiled only to check them (KB walk)",
    ("skillgen/recipe.py", "p"): "packages.yaml patterns (KB walk)",
    ("scan/dependencies.py", "pat"): "packages.yaml patterns (built_patterns: _package_patterns)",
    ("scan/text_scanners.py", "flag"): "cli-flag rules' flags (built_patterns: _cli_flag_patterns)",
    ("scan/text_scanners.py", 'r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])"'):
        "env-table rules' names, escaped (built_patterns: _line_patterns)",
    ("scan/text_scanners.py", 'r"(?<![\\w.-])" + re.escape(tool) + r"(?![\\w-])"'):
        "tool-command rules' tools, escaped (built_patterns: _line_patterns)",
    ("scan/text_scanners.py", '"|".join(re.escape(n) for n in names) or r"(?!)"'):
        "alternation of escaped names (built_patterns: _line_patterns)",
    ("scan/pyast/environment.py", 'r"(?<![\\w.-])" + re.escape(tool) + r"(?![\\w-])"'):
        "tool-command rules' tools, escaped: the same patterns as text_scanners' (built_patterns)",
    ("scan/prefilter.py", '"|".join(alternatives)'): "the scan prefilter (built_patterns: prefilter.pattern)",
    ("scan/aggregate.py", "_PIN_HEAD + re.escape(package) + _PIN_VERSIONS"):
        "a pin line of one escaped package name; its pieces are module globals walked with the package "
        "name `transformers` (built_patterns: engine pin pattern)",
    ("scan/text_scanners.py", 'spec["in_files_matching"]'):
        "cli-flag rules' file gates (built_patterns: _cli_flag_patterns)",
    ("scan/pyast/settings.py", 'spec["values"]'): "config-value rules' values (built_patterns: _config_value_patterns)",
    ("scan/file_analysis.py", '("|".join(re.escape(k) for k in _CONFIG_KEYS)).encode()'): "module global (walked)",
    ("scan/file_analysis.py", '_SCRIPTS_KEY + r"""\\.\\s*["\']?[\\w.-]+["\']?\\s*=\\s*["\']([A-Za-z_][\\w.]*)\\s*:\\s*([A-Za-z_][\\w.]*)"""'):
        "module global (walked)",
    ("scan/file_analysis.py", '_SCRIPTS_KEY + r"""=\\s*\\{([^}]*)\\}"""'): "module global (walked)",
    ("scan/pyast/settings.py", 'r"(?m)^[ \\t]*(?:import|from)[ \\t]+" + re.escape(top) + r"\\b"'):
        "import_line_pattern: an escaped module name (built_patterns: keyword rules' in_modules_importing)",
    ("scan/text_scanners.py", 'r"""(?:^|[{,\\s])["\']?(""" + re.escape(key) + r""")["\']?\\s*:\\s*["\']?(""" + spec["values"]\n                                   + r""")["\']?\\s*(?:[,}]|$)"""'):
        "config-value rules' keys (escaped) and values (rule YAML) (built_patterns: _config_value_patterns)",
    ("scan/own_outputs.py", 'rb\'"schema"\\s*:\\s*"ascend-migrate/(\' + "|".join(OUTPUT_KINDS).encode() + rb\')/\''):
        "module global (walked)",
}

# Patterns that never see text from someone else, each with why (kept few, and checked to exist).
EXEMPT: dict[str, str] = {}

ALPHABET = [chr(c) for c in range(32, 127)] + ["\t", "\u00e9", "\u4e2d"]
GENERIC = " a0-._/:=\t\u4e2d"  # always run, whatever the pattern names
FAIL_TAILS = ("\x00", "\n")


@dataclasses.dataclass(frozen=True)
class Audited:
    """One pattern to audit. A bytes pattern is audited as the same pattern over Latin-1 text
    with ASCII classes, which backtracks exactly as it does over bytes."""

    pattern: str
    flags: int
    origin: str

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern, self.flags)

    @classmethod
    def of(cls, pattern: "str | bytes", flags: int, origin: str) -> "Audited":
        if isinstance(pattern, bytes):
            return cls(pattern.decode("latin-1"), (flags & ~re.UNICODE) | re.ASCII, origin)
        return cls(pattern, flags & ~re.UNICODE, origin)


# --------------------------------------------------------------------------- inventory
def all_modules() -> list[str]:
    names = ["ascend_migrate"]
    for info in pkgutil.walk_packages([str(SRC)], prefix="ascend_migrate."):
        names.append(info.name)
    return names


def _walk_value(value: Any, depth: int, seen: set[int]) -> Iterator[re.Pattern]:
    if id(value) in seen or depth > 4:
        return
    seen.add(id(value))
    if isinstance(value, re.Pattern):
        yield value
    elif isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _walk_value(item, depth + 1, seen)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _walk_value(item, depth + 1, seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _walk_value(getattr(value, f.name, None), depth + 1, seen)


def module_patterns() -> tuple[list[Audited], list[str]]:
    """Patterns held by module globals, and modules that could not be imported."""
    found: list[Audited] = []
    failed: list[str] = []
    for name in all_modules():
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            failed.append(f"{name}: {exc!r}")
            continue
        seen: set[int] = set()
        for attr, value in vars(module).items():
            if isinstance(value, type(re)) or attr.startswith("__"):
                continue
            for p in _walk_value(value, 0, seen):
                found.append(Audited.of(p.pattern, p.flags, f"{name}.{attr}"))
    return found, failed


def _yaml_strings(data: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _yaml_strings(v, str(k))
    elif isinstance(data, list):
        for v in data:
            yield from _yaml_strings(v, key)
    elif isinstance(data, str) and PATTERN_KEYS.search(key):
        yield key, data


def kb_patterns() -> list[Audited]:
    """Patterns of the knowledge base: what the loaders compile plus every pattern-like YAML value."""
    import yaml

    from ascend_migrate.diagnose import kb as diagnose_kb
    from ascend_migrate.knowledge.base import load_knowledge

    out: list[Audited] = []
    fkb = diagnose_kb.load_kb()
    seen: set[int] = set()
    for p in _walk_value(fkb, 0, seen):
        out.append(Audited.of(p.pattern, p.flags, "failures.yaml (loaded)"))
    for sig in fkb.signatures:
        for p in (*sig.patterns, sig.near, sig.unless):
            if p is not None:
                out.append(Audited.of(p.pattern, p.flags, f"failures.yaml {sig.id}"))
    kb = load_knowledge()
    for p in _walk_value(kb, 0, set()):
        out.append(Audited.of(p.pattern, p.flags, "knowledge base (loaded)"))
    for path in sorted(KB_DIR.rglob("*.yaml")):
        if path.name == "failures.yaml":
            continue  # its patterns run only in the linear form the loader compiles (audited above)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key, text in _yaml_strings(data):
            try:
                re.compile(text)
            except re.error:
                continue  # a glob or plain text under a pattern-like key
            out.append(Audited(text, 0, f"{path.relative_to(SRC)} {key}"))
    return out


def _flags(node: ast.AST | None) -> int:
    if node is None:
        return 0
    return int(eval(compile(ast.Expression(node), "<flags>", "eval"), {"re": re}))  # re.I | re.M only


def call_sites() -> tuple[list[Audited], list[tuple[str, str, int]]]:
    """Literal patterns of every `re.*` call in the sources, and the non-literal call sites
    (module, pattern source text, line)."""
    literal: list[Audited] = []
    dynamic: list[tuple[str, str, int]] = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in RE_FUNCS and node.args):
                continue
            arg = node.args[0]
            flag_node = next((k.value for k in node.keywords if k.arg == "flags"), None)
            if flag_node is None:
                pos = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2,
                       "split": 3, "sub": 4, "subn": 4}[node.func.attr]
                if len(node.args) > pos:
                    flag_node = node.args[pos]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, bytes)):
                literal.append(Audited.of(arg.value, _flags(flag_node), f"{rel}:{node.lineno}"))
            else:
                dynamic.append((rel, ast.get_source_segment(source, arg) or "", node.lineno))
    return literal, dynamic


def built_patterns() -> list[Audited]:
    """Patterns the tool builds inside functions from the knowledge base or its own constants."""
    from ascend_migrate.knowledge.base import load_knowledge
    from ascend_migrate.scan import dependencies, prefilter, text_scanners
    from ascend_migrate.scan.pyast import settings as python_settings

    kb = load_knowledge()
    out = [Audited.of(prefilter.pattern(kb).pattern, 0, "scan.prefilter.pattern")]
    env, tools, any_name = text_scanners._line_patterns(kb)
    for p, *_ in (*env, *tools):
        out.append(Audited.of(p.pattern, p.flags, "scan.text_scanners._line_patterns"))
    out.append(Audited.of(any_name.pattern, any_name.flags, "scan.text_scanners._line_patterns (names)"))
    for p, *_ in (*text_scanners._cli_flag_patterns(kb), *dependencies._package_patterns(kb)):
        out.append(Audited.of(p.pattern, p.flags, "scan.text_scanners cli flags / packages"))
    for p, *_ in text_scanners._config_value_patterns(kb):
        out.append(Audited.of(p.pattern, p.flags, "scan.text_scanners._config_value_patterns"))
    for *_, gate in text_scanners._cli_flag_patterns(kb):
        if gate is not None:
            out.append(Audited.of(gate.pattern, gate.flags, "scan.text_scanners cli flag file gates"))
    from ascend_migrate.scan import engine

    pin = re.compile(engine._PIN_HEAD + re.escape("transformers") + engine._PIN_VERSIONS)
    out.append(Audited.of(pin.pattern, pin.flags, "scan.engine pin pattern"))
    for p, *_ in text_scanners._cli_flag_patterns(kb, docs=True):
        out.append(Audited.of(p.pattern, p.flags, "scan.text_scanners cli flags read in documents"))
    for rule in (*kb.rules_of_kind("keyword"), *kb.rules_of_kind("config-value"), *kb.rules_of_kind("device-name")):
        for top in rule.match.get("in_modules_importing", ()):
            p = python_settings.import_line_pattern(top)
            out.append(Audited.of(p.pattern, p.flags, "scan.pyast.settings.import_line_pattern"))
    return out


def inventory() -> tuple[list[Audited], list[str]]:
    mods, failed = module_patterns()
    literal, _ = call_sites()
    seen: dict[tuple[str, int], Audited] = {}
    for item in (*mods, *kb_patterns(), *built_patterns(), *literal):
        seen.setdefault((item.pattern, item.flags), item)
    return list(seen.values()), failed


# --------------------------------------------------------------------------- adversarial lines
def _in_class(items: list, ch: str) -> bool:
    code = ord(ch)
    negate = False
    hit = False
    for op, av in items:
        if op is sre_c.NEGATE:
            negate = True
        elif op is sre_c.LITERAL:
            hit = hit or code == av
        elif op is sre_c.RANGE:
            hit = hit or av[0] <= code <= av[1]
        elif op is sre_c.CATEGORY:
            hit = hit or _category(av, ch)
    return hit != negate


def _category(cat: Any, ch: str) -> bool:
    name = str(cat).upper()
    if "NOT_DIGIT" in name:
        return not ch.isdigit()
    if "DIGIT" in name:
        return ch.isdigit()
    if "NOT_SPACE" in name:
        return not ch.isspace()
    if "SPACE" in name:
        return ch.isspace()
    if "NOT_WORD" in name:
        return not (ch.isalnum() or ch == "_")
    if "WORD" in name:
        return ch.isalnum() or ch == "_"
    return False


def _accepted(op: Any, av: Any) -> list[str]:
    """Characters of ALPHABET a single-character node accepts (a few, spread out)."""
    if op is sre_c.LITERAL:
        return [chr(av)]
    if op is sre_c.NOT_LITERAL:
        return [c for c in "a0 -" if ord(c) != av][:2]
    if op is sre_c.ANY:
        return ["a", " ", "-"]
    if op is sre_c.IN:
        hits = [c for c in ALPHABET if _in_class(av, c)]
        return hits[:: max(1, len(hits) // 4)][:5]
    if op is sre_c.CATEGORY:
        return [c for c in ALPHABET if _category(av, c)][:2]
    return []


def _example(seq: Iterable, pump: int = 1) -> str:
    """A short string this part of the pattern accepts (lookarounds and anchors give nothing)."""
    out = []
    for op, av in seq:
        chars = _accepted(op, av)
        if chars:
            out.append(chars[0])
        elif op is sre_c.BRANCH:
            out.append(_example(av[1][0]))
        elif op is sre_c.SUBPATTERN:
            out.append(_example(av[-1]))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            lo, _hi, body = av
            out.append(_example(body) * max(lo, pump if pump else lo))
        elif op is getattr(sre_c, "ATOMIC_GROUP", None):
            out.append(_example(av))
    return "".join(out)


def _pump_points(seq: Any, prefix: str, out: list[tuple[str, list[str]]]) -> None:
    acc = prefix
    for op, av in seq:
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            _lo, hi, body = av
            if hi is sre_c.MAXREPEAT or (isinstance(hi, int) and hi > 50):
                units = {_example(body)}
                for sop, sav in list(body)[:1]:
                    units.update(_accepted(sop, sav))
                out.append((acc, [u for u in units if u]))
            _pump_points(body, acc, out)
        elif op is sre_c.BRANCH:
            for alt in av[1]:
                _pump_points(alt, acc, out)
        elif op is sre_c.SUBPATTERN:
            _pump_points(av[-1], acc, out)
        acc += _example([(op, av)], pump=1)


def _inner(op: Any, av: Any, assertions: bool) -> list:
    """The sub-sequences one parsed node holds (alternatives, a group, a repeated item and,
    when asked, a lookaround)."""
    if op is sre_c.BRANCH:
        return list(av[1])
    if op is sre_c.SUBPATTERN:
        return [av[-1]]
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT):
        return [av[2]]
    if assertions and op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        return [av[1]]
    return []


def _chars(seq: Any, out: set[str]) -> None:
    """Characters the pattern's own literals and classes accept (a few per class)."""
    for op, av in seq:
        out.update(_accepted(op, av))
        for inner in _inner(op, av, assertions=True):
            _chars(inner, out)


def _fragments(seq: Any, out: set[str]) -> None:
    run = []
    for op, av in seq:
        if op is sre_c.LITERAL:
            run.append(chr(av))
            continue
        if len(run) > 1:
            out.add("".join(run))
        run = []
        for inner in _inner(op, av, assertions=False):
            _fragments(inner, out)
    if len(run) > 1:
        out.add("".join(run))


def adversarial_lines(item: Audited, size: int) -> dict[str, str]:
    """Named lines of about `size` characters built to make `item` backtrack."""
    parsed = sre_parse.parse(item.pattern, item.flags)
    lines: dict[str, str] = {}

    def add(name: str, head: str, unit: str, tail: str) -> None:
        if not unit:
            return
        body = unit * max(1, (size - len(head) - len(tail)) // len(unit))
        lines.setdefault(name, (head + body + tail)[: size + len(head)])

    chars: set[str] = set(GENERIC)
    _chars(list(parsed), chars)
    for ch in sorted(chars):
        add(f"run {ch!r}", "", ch, "")
    frags: set[str] = set()
    _fragments(list(parsed), frags)
    for frag in sorted(frags):
        add(f"fragment {frag!r}", "", frag, "")
        add(f"fragment+space {frag!r}", "", frag + " ", "")
        add(f"fragment {frag!r} then run", frag, frag[-1], "")
    points: list[tuple[str, list[str]]] = []
    _pump_points(list(parsed), "", points)
    for head, units in points:
        for unit in units:
            for tail in FAIL_TAILS:
                add(f"pump {head[-20:]!r}+{unit!r}*n+{tail!r}", head, unit, tail)
                add(f"pump {head[-20:]!r}+({unit!r}+' ')*n+{tail!r}", head, unit + " ", tail)
    return lines


def time_line(pattern: re.Pattern[str], line: str, repeat: int = 3) -> float:
    """Best of `repeat` runs of the most expensive use the tool makes: every match in the line.
    CPU time of this process, not wall time: the suite runs on several workers at once, and a
    pattern must not be judged by what its neighbours spend."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _m in pattern.finditer(line):
            pass
        best = min(best, time.process_time() - start)
    return best


# --------------------------------------------------------------------------- the verdict
MAX_100K_S = 0.5  # no line of 100,000 characters may take longer than this
SLOW_100K_S = 0.08  # below this a 100 kB line is fast whatever the ratio (timer noise)
MAX_RATIO = 30.0  # 100k/10k time ratio: about 10 when linear, 100 when quadratic
SCREEN = ((250, 0.02), (2_000, 0.05))  # (size, time no line of that size may take)
SCREEN_BUDGET_S = 1.0  # all screening lines of one pattern together
TOP_LINES = 2


def verdict(item: Audited) -> str | None:
    """None when `item` is linear on its adversarial lines, else why not. Lines grow in steps
    (250, 2,000, then the 3 slowest at 10,000 and 100,000 characters) and the first step that is
    already too slow ends the measurement, so a cubic pattern fails in well under a second."""
    pattern = item.compiled()
    spent = 0.0
    screened: list[tuple[float, str]] = []
    for size, limit in SCREEN:
        screened = []
        for name, line in adversarial_lines(item, size).items():
            took = time_line(pattern, line, repeat=1)
            spent += took
            if took > limit:  # measured again: one slow run can be the machine, not the pattern
                took = time_line(pattern, line, repeat=2)
            if took > limit:
                return f"{took:.3f}s on a {size}-character line {name}"
            if spent > SCREEN_BUDGET_S:
                return f"{spent:.1f}s for the screening lines (last {name} at {size})"
            screened.append((took, name))
    screened.sort(reverse=True)
    for _, name in screened[:TOP_LINES]:
        t10 = time_line(pattern, adversarial_lines(item, 10_000)[name], repeat=2)
        if t10 > MAX_100K_S / 10:
            return f"{t10:.3f}s on a 10 kB line {name}"
        big = adversarial_lines(item, 100_000)[name]
        t100 = time_line(pattern, big, repeat=1)
        if t100 > SLOW_100K_S:
            t100 = min(t100, time_line(pattern, big, repeat=2))
        ratio = t100 / max(t10, 1e-6)
        if t100 > MAX_100K_S or (t100 > SLOW_100K_S and ratio > MAX_RATIO):
            return f"{t100:.3f}s on a 100 kB line, x{ratio:.0f} the 10 kB time, line {name}"
    return None


# --------------------------------------------------------------------------- text scanners
# A regex can be linear and the scanner around it quadratic: measuring the whole token at each
# of its matches, copying the line into each finding's snippet, reading the line up to each
# match to tell whether it is echoed. These lines repeat a unit that matches (or almost
# matches) the scanners' rules; each scanner must take time linear in the line's length.
SCANNER_UNITS = ("nccl-", "nccl ", "Nccl_", "CUDA_VISIBLE_DEVICES-", "CUDA_VISIBLE_DEVICES ", "NCCL_ALGO ",
                 "--device cuda ", "device: cuda, ", "nvidia-smi ", "nvcc -", "https://x.org/whl/cu121 ",
                 "1+cu121 ", "torch.cuda.", "torch.cuda.synchronize() ", ".cuda() ", "'cuda' ", "DataParallel ",
                 "--distributed-backend nccl ", "backend: nccl, ", '"nccl", ', "a-", "torch==2.1.0 ")
SCANNER_PREFIXES = ("", 'echo "', "export X=", "- ", '{"train_batch_size": 1, "x": "')
SCANNER_SIZES = (2_000, 20_000)
SCANNER_MAX_2K_S = 0.15  # screening: any line of 2,000 characters
SCANNER_MAX_20K_S = 1.0
SCANNER_MAX_RATIO = 40.0  # 20k/2k: about 10-15 when linear (the cap makes it uneven), 100 when quadratic
SCANNER_SLOW_S = 0.1  # below this a 20 kB line is fast whatever the ratio (timer noise)


def scanner_runs() -> dict[str, Any]:
    """name -> function(line) running one text scanner the way the engine does on a file
    holding that line."""
    from ascend_migrate.knowledge.base import load_knowledge
    from ascend_migrate.scan import config_kinds, dependencies, entries
    from ascend_migrate.scan import text_scanners as ts

    kb = load_knowledge()
    return {
        "config sh": lambda line: ts.scan_config(kb, "run.sh", line + "\n", "sh"),
        "config yaml": lambda line: ts.scan_config(kb, "conf.yaml", line + "\n", "yaml"),
        "config json": lambda line: ts.scan_config(kb, "ds_config.json", line + "\n", "json"),
        "requirements": lambda line: dependencies.scan_dependencies(kb, "requirements.txt", line + "\n"),
        "pyproject": lambda line: dependencies.scan_dependencies(kb, "pyproject.toml", '[project]\ndependencies = [\n'
                                                       + line + "\n]\n"),
        "token fallback": lambda line: ts.scan_tokens(kb, "bad.py", line + "\n", "syntax error"),
        "launch lines": lambda line: ts.launched_scripts(line + "\n"),
        "entry launches sh": lambda line: entries.launches(line + "\n", "sh"),
        "entry launches md": lambda line: entries.launches("```sh\n" + line + "\n```\n", "md"),
        "config references": lambda line: config_kinds.config_references(line + "\n"),
        "config kind yaml": lambda line: config_kinds.known_config_kind(line + "\n", "yaml"),
    }


def _time_call(run: Any, line: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run(line)
        best = min(best, time.process_time() - start)
    return best


def scanner_verdict(run: Any, prefix: str, unit: str) -> str | None:
    """None when `run` takes time linear in the length of `prefix + unit * n`, else why not.
    The 2,000-character line screens first, so a quadratic scanner fails in about a second; a
    ratio over the bound is measured again with more runs (a 2 ms baseline is noisy on a busy
    machine) before it counts."""
    lines = [prefix + unit * max(1, (size - len(prefix)) // len(unit)) for size in SCANNER_SIZES]
    small = _time_call(run, lines[0], 3)
    if small > SCANNER_MAX_2K_S:
        return f"{small:.3f}s on a 2,000-character line"
    big = _time_call(run, lines[1], 1)
    for _ in range(2):
        ratio = big / max(small, 1e-6)
        if not (big > SCANNER_MAX_20K_S or (big > SCANNER_SLOW_S and ratio > SCANNER_MAX_RATIO)):
            return None
        small = min(small, _time_call(run, lines[0], 5))
        big = min(big, _time_call(run, lines[1], 2))
    return f"{big:.3f}s on a 20,000-character line, x{big / max(small, 1e-6):.0f} the 2,000-character time"


# Launch lines whose words run on for a long way: the launcher's arguments are split into words,
# and a splitter that grows a word one character at a time is quadratic only past some
# 100 kB (a 1.6 MB `python x.pyx...` line took 40 s), so these are timed at 20 kB and 200 kB.
LAUNCH_SHAPES = (("python ", "x.pyx"), ("python ", "a "), ("torchrun ", "--a=b "), ("python -m ", "a."),
                 ("deepspeed ", "'x "), ('python "', "x.py"))
LAUNCH_SIZES = (20_000, 200_000)
LAUNCH_MAX_200K_S = 1.0


def launch_runs() -> dict[str, Any]:
    """name -> function(line) for each scanner that reads the launch lines of a script."""
    runs = scanner_runs()
    return {name: runs[name] for name in ("config sh", "launch lines", "entry launches sh", "entry launches md")}


def launch_verdict(run: Any, prefix: str, unit: str) -> str | None:
    """None when `run` on `prefix + unit * n` is linear from 20 kB to 200 kB, else why not."""
    lines = [prefix + unit * ((size - len(prefix)) // len(unit)) for size in LAUNCH_SIZES]
    small = _time_call(run, lines[0], 3)
    big = _time_call(run, lines[1], 1)
    for _ in range(2):
        if not (big > LAUNCH_MAX_200K_S or (big > SCANNER_SLOW_S and big / max(small, 1e-6) > SCANNER_MAX_RATIO)):
            return None
        small = min(small, _time_call(run, lines[0], 5))
        big = min(big, _time_call(run, lines[1], 2))
    return f"{big:.3f}s on a 200,000-character line, x{big / max(small, 1e-6):.0f} the 20,000-character time"
