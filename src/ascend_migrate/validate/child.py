"""Run code from the validated tree in a child process that cannot end quietly.

Everything validate runs from a tree (a hand-written entry, the project's own command, the DDP
smoke run) runs here: in its own session (so a stop reaches every process it started), with a
no-progress limit (no output and no training step for `idle_s` seconds) and an overall cap.
The outcome says how it ended - exited with a code, killed by a signal (a crash), stopped for
no progress, stopped at the cap - and keeps the last lines of its output for the report.

Environment variables that look like credentials are not passed to the tree's code unless the
user names them (`pass_env`): a training script has no business reading the host's cloud keys.
"""
from __future__ import annotations

import collections
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

DEFAULT_IDLE_S = 600.0
DEFAULT_CAP_S = 3600.0
TAIL_LINES = 200  # kept for reading the error (torchrun's own summary alone is about 40 lines)
REPORT_LINES = 40  # shown in reports
_CREDENTIAL = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|SESSION_?KEY|"
    r"COOKIE|_PAT$|^PAT_)", re.IGNORECASE)
# names that match the pattern but carry no secret
_NOT_CREDENTIAL = {"SSH_AUTH_SOCK", "XAUTHORITY", "KRB5CCNAME"}
# CSI, OSC (ending in BEL or ST), other escapes and C0 controls but tab: a child's output is shown
# to a terminal and kept in reports, and must not drive either
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|[\x00-\x08\x0b-\x1f\x7f\x9b]")


def clean_line(line: str, limit: int = 400) -> str:
    """A line of child output safe for a terminal and a report."""
    text = _CONTROL.sub("", line.rstrip("\r\n"))
    return text if len(text) <= limit else text[:limit] + "..."


def is_credential(name: str) -> bool:
    return name not in _NOT_CREDENTIAL and bool(_CREDENTIAL.search(name))


def child_env(base: Optional[dict[str, str]] = None, pass_env: Sequence[str] = ()) -> tuple[dict[str, str], list[str]]:
    """(environment for the child, names withheld) - credentials left out unless named."""
    env = dict(os.environ if base is None else base)
    withheld = sorted(n for n in env if is_credential(n) and n not in pass_env)
    for name in withheld:
        del env[name]
    return env, withheld


@dataclass
class ChildOutcome:
    """How a child ended. `kind`: exited | signal | no-progress | timeout | launch-error."""

    kind: str
    returncode: Optional[int]
    duration_s: float
    tail: list[str] = field(default_factory=list)
    log: Optional[str] = None  # the full output, when written to a file
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "exited" and self.returncode == 0

    def describe(self) -> str:
        """One sentence for a verdict line."""
        if self.kind == "exited":
            return f"the process exited with code {self.returncode} after {self.duration_s:.1f} s"
        if self.kind == "signal":
            return f"the process was killed by {self.detail} after {self.duration_s:.1f} s (a crash)"
        if self.kind == "no-progress":
            return f"stopped: {self.detail}"
        if self.kind == "timeout":
            return f"stopped at the overall limit of {self.detail}"
        return f"could not start: {self.detail}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "returncode": self.returncode, "duration_s": round(self.duration_s, 2),
                "summary": self.describe(), "last_output": list(self.tail)[-REPORT_LINES:], "log": self.log}


def _signal_name(code: int) -> str:
    try:
        name = signal.Signals(code).name
    except ValueError:
        return f"signal {code}"
    extra = {"SIGSEGV": "segmentation fault", "SIGABRT": "abort", "SIGBUS": "bus error", "SIGKILL": "killed",
             "SIGFPE": "arithmetic fault", "SIGILL": "illegal instruction"}.get(name)
    return f"{name} ({extra})" if extra else name


def _terminal_stdin() -> tuple[object, list[int]]:
    """A terminal for the child's stdin (80x24, nothing typed): programs launched from a shell
    ask it their size (`stty size`) and fail without one. Its output still goes to a pipe.
    Returns (stdin for Popen, descriptors to close after the run); DEVNULL where no pty exists."""
    try:
        import fcntl
        import pty
        import struct
        import termios

        controller, terminal = pty.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    except (ImportError, OSError):
        return subprocess.DEVNULL, []
    return terminal, [terminal, controller]


def _stop_group(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM the child's session, then SIGKILL what is left after `grace_s`."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=grace_s)
            # the leader is gone; make sure its children are too
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return
        except subprocess.TimeoutExpired:
            continue


def run_child(argv: Sequence[str], *, cwd: Path, env: dict[str, str], idle_s: float = DEFAULT_IDLE_S,
              cap_s: float = DEFAULT_CAP_S, log_path: Optional[Path] = None,
              progress: Optional[Callable[[], Optional[float]]] = None,
              on_line: Optional[Callable[[str], None]] = None, poll_s: float = 0.2) -> ChildOutcome:
    """Run `argv` and wait for it within the limits.

    `progress()` returns the monotonic time of the last training step the child reported (or
    None); output lines count as progress too. `on_line` sees every cleaned output line.
    """
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    start = time.monotonic()
    last = [start]
    log = open(log_path, "w", encoding="utf-8", errors="replace") if log_path else None
    try:
        stdin, keep = _terminal_stdin()
        try:
            proc = subprocess.Popen(list(argv), cwd=str(cwd), env=env, stdin=stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            for fd in keep:
                os.close(fd)
            return ChildOutcome("launch-error", None, 0.0, [], str(log_path) if log_path else None,
                                f"{argv[0]}: {exc.strerror or exc}")

        def pump() -> None:
            assert proc.stdout is not None
            for raw in iter(proc.stdout.readline, b""):
                line = clean_line(raw.decode("utf-8", errors="replace"))
                last[0] = time.monotonic()
                tail.append(line)
                if log is not None:
                    log.write(line + "\n")
                if on_line is not None:
                    on_line(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        kind, detail = "exited", ""
        while True:
            try:
                proc.wait(timeout=poll_s)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            stepped = progress() if progress is not None else None
            active = max(last[0], stepped or 0.0)
            if now - start > cap_s:
                kind, detail = "timeout", f"{cap_s:g} s"
            elif now - active > idle_s:
                kind, detail = "no-progress", (f"no output and no training step for {idle_s:g} s "
                                               "(a hang, or a wait for input or data that never comes)")
            else:
                continue
            _stop_group(proc)
            break
        if kind == "exited":
            # the leader ended; anything it left running in its session goes too
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        reader.join(timeout=5)
        for fd in keep:
            os.close(fd)
        code = proc.returncode
        if kind == "exited" and code is not None and code < 0:
            kind, detail = "signal", _signal_name(-code)
        return ChildOutcome(kind, code, time.monotonic() - start, list(tail), str(log_path) if log_path else None,
                            detail)
    finally:
        if log is not None:
            log.close()
