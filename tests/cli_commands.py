"""Every command of the CLI (subcommands of groups included), for tests that check a property
of all of them."""
from __future__ import annotations

from typing import Iterator

import click

from ascend_migrate.cli import LAZY_COMMANDS, cli


def all_commands() -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    for name in sorted(LAZY_COMMANDS):
        cmd = cli.get_command(ctx, name)
        yield name, cmd
        if isinstance(cmd, click.Group):
            for sub_name, sub in cmd.commands.items():
                yield f"{name} {sub_name}", sub
