"""The `ascend-migrate` program: a re-scan whose stored report still stands is answered before
the command-line framework is even imported (see `scan.stored_report_cli`); every other
invocation, and any doubt, goes to the full CLI (`cli.main`) with identical behaviour."""
from __future__ import annotations

import os
import sys
from typing import NoReturn


def main() -> None:
    """Console-script and `python -m ascend_migrate` entry point."""
    args = sys.argv[1:]
    if args[:1] == ["scan"]:
        code = _stored_report(args[1:])
        if code is not None:
            sys.exit(code)
    from ascend_migrate.cli import main as full_main

    full_main()


def _stored_report(args: list[str]) -> "int | None":
    """The stored-report path, failing the way `cli.main` reports failures once it has begun
    writing (before that it hands over to the full CLI instead)."""
    try:
        from ascend_migrate.scan.stored_report_cli import serve_stored_report

        return serve_stored_report(args)
    except (KeyboardInterrupt, Exception) as exc:
        exit_on_error(exc)


def exit_on_error(exc: BaseException) -> "NoReturn":
    """How both entries end on an interrupt or an unexpected error: one line on stderr, never a
    traceback (unless ASCEND_MIGRATE_DEBUG is set); a plain Ctrl-C is re-raised as Python does.

    Exit 128+signal after an interrupted write (rolled back or finished), 2 for an internal error
    (1 means "findings exist")."""
    if isinstance(exc, KeyboardInterrupt):
        from ascend_migrate.fix.commit import Interrupted

        if not isinstance(exc, Interrupted):
            raise exc
        sys.stderr.write(f"error: interrupted by signal {exc.signum}; every file is either as it was or fully "
                         "written\n")
        sys.exit(128 + exc.signum)
    if os.environ.get("ASCEND_MIGRATE_DEBUG"):
        raise exc
    from ascend_migrate.printable import printable

    # the message may quote a file name or a field of a shared skill: shown escaped
    sys.stderr.write(printable(f"ascend-migrate: internal error: {type(exc).__name__}: {exc}") +
                     " (set ASCEND_MIGRATE_DEBUG=1 for the traceback)\n")
    sys.exit(2)

