"""The `ascend-migrate` program: a re-scan whose stored report still stands is answered before
the command-line framework is even imported (see `scan.stored_report_cli`); every other
invocation, and any doubt, goes to the full CLI (`cli.main`) with identical behaviour."""
from __future__ import annotations

import sys

from ascend_migrate.exits import exit_on_error


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
