"""How the program ends when something goes wrong: the exit statuses and the one-line message.

Both entries end here: `entry.main`, which may answer a re-scan before the command-line
framework is imported, and `cli.main`, the full CLI. Imports only the standard library at
module level, so the quick entry stays quick.
"""
from __future__ import annotations

import os
import sys
from typing import NoReturn

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer cut off by `head`


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
