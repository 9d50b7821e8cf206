"""What a scan produces: the result of a scan with its entry points and notes.

The bottom floor of the scanner's public types: the engine builds these, `scan.api` hands them
out, the reports read them; this module imports no other part of the scanner but `finding`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ascend_migrate.scan.finding import Finding


@dataclass(frozen=True)
class EntryPoint:
    """A file that starts a program: the migrator injects torch_npu imports here."""

    path: str  # relative to the scan root, POSIX
    line: int
    kind: str  # "main-guard" | "console-script" | "launch-script" | "module-code" | "notebook" | "override"
    has_transfer_import: bool  # already imports torch_npu.contrib.transfer_to_npu
    imports_torch_npu: bool
    reason: str = ""  # the evidence behind the decision, for the user to check or overrule
    selected: bool = True  # False: a candidate that was rejected (a library, no torch, a build script, ...)
    # Other files of the tree import it too (each of them an entry point with its own imports),
    # or it is a module of an installable package: the migrator puts its imports under a
    # `__name__` test, so importing it needs no torch_npu.
    guarded: bool = False
    # A console script's module that a library module imports: the imports go into this function
    # (the one the command calls) instead of under a `__name__` test.
    inject_function: str = ""


@dataclass(frozen=True)
class FileNote:
    """A file the scanner could not treat fully (did not parse, binary, too big, ...)."""

    path: str
    reason: str


@dataclass
class ScanResult:
    root: str
    findings: list[Finding] = field(default_factory=list)
    entry_points: list[EntryPoint] = field(default_factory=list)  # selected: the migrator injects here
    rejected_entry_points: list[EntryPoint] = field(default_factory=list)  # candidates not selected, with why
    notes: list[FileNote] = field(default_factory=list)
    files_scanned: int = 0
    lines_scanned: int = 0
    duration_s: float = 0.0
    torch_npu_version: str = ""
    build_configs: list[str] = field(default_factory=list)  # build/install/CI configs: reported, not rewritten
    # Python modules the scan analysed in full: path -> (content hash, the analysis' findings in
    # its own order, before rule selection). Not part of any report: the migrator re-uses an
    # analysis for a file whose bytes still hash the same instead of analysing it again.
    analyses: dict[str, tuple[bytes, tuple[Finding, ...]]] = field(default_factory=dict, repr=False, compare=False)
    # Every scanned file's content hash and per-file result (engine.FileResult), and how many of
    # `notes` came before the per-file ones (the walk's and the reader's): what a report patched
    # file by file is made from (scan/report_ledger.py). Not part of any report.
    file_results: dict[str, tuple[bytes, Any]] = field(default_factory=dict, repr=False, compare=False)
    lead_notes: int = field(default=0, repr=False, compare=False)
    selection: tuple[tuple[str, ...], tuple[str, ...]] = field(default=((), ()), repr=False, compare=False)  # (select, ignore)

    def rules_fired(self) -> set[str]:
        return {f.rule for f in self.findings}

    def by_rule(self, rule: str) -> list[Finding]:
        return [f for f in self.findings if f.rule == rule]
