"""Options every command shares, and the terminal policy behind them.

* Colour: `--color/--no-color` on every command; without either, colour only on a terminal
  and never when the `NO_COLOR` environment variable is set to a non-empty value
  (https://no-color.org). The choice is stored in the click context, so every `click.echo`
  of the command strips ANSI styling when colour is off.
* `--format text|json` on every command that has `--json` (kept as an alias) and no
  `--format` of its own, so one spelling works everywhere.
* `-q/--quiet` and `-v/--verbose` on every command: commands that define their own keep
  them; elsewhere they set the verbosity `info()` and `detail()` honour (quiet: progress
  and "wrote ..." lines are dropped; errors and the result itself are always printed).
"""
from __future__ import annotations

from typing import Optional

import click

from ascend_migrate.color_policy import color_enabled, no_color_env  # noqa: F401 (re-exported)

VERBOSITY_KEY = "ascend_migrate.verbosity"


def set_color(flag: Optional[bool]) -> bool:
    """Decide colour for the current command and make `click.echo` follow it."""
    enabled = color_enabled(flag)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.color = enabled
    return enabled


def verbosity() -> int:
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if VERBOSITY_KEY in ctx.meta:
            return ctx.meta[VERBOSITY_KEY]
        ctx = ctx.parent
    return 0


def info(message: str) -> None:
    """A progress or "wrote ..." line on stderr; dropped under --quiet."""
    if verbosity() >= 0:
        click.echo(message, err=True)


def detail(message: str) -> None:
    """Extra detail on stderr, shown only under --verbose."""
    if verbosity() > 0:
        click.echo(message, err=True)


def _color_callback(ctx: click.Context, _param: click.Parameter, value: Optional[bool]) -> None:
    if value is not None or no_color_env():
        ctx.color = color_enabled(value)


def _verbosity_callback(delta: int):
    def callback(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if value:
            ctx.meta[VERBOSITY_KEY] = delta
    return callback


def _names(cmd: click.Command) -> set[str]:
    return {opt for p in cmd.params for opt in (*p.opts, *getattr(p, "secondary_opts", []))}


def add_common_options(cmd: click.Command) -> click.Command:
    """Add --color/--no-color, -q/--quiet, -v/--verbose where a command lacks them (recursively
    for groups). The added options take no part in the command's own arguments."""
    names = _names(cmd)
    if "--no-color" not in names:
        cmd.params.append(click.Option(["--color/--no-color"], default=None, expose_value=False,
                                       is_eager=True, callback=_color_callback,
                                       help="Colour output (default: on a terminal, off when NO_COLOR is set)."))
    if "--quiet" not in names and "-q" not in names:
        cmd.params.append(click.Option(["-q", "--quiet"], is_flag=True, expose_value=False,
                                       callback=_verbosity_callback(-1), help="Print only results and errors."))
    if "--verbose" not in names and "-v" not in names:
        cmd.params.append(click.Option(["-v", "--verbose"], is_flag=True, expose_value=False,
                                       callback=_verbosity_callback(1), help="Print more detail on stderr."))
    json_flag = next((p for p in cmd.params if "--json" in p.opts), None)
    if json_flag is not None and "--format" not in names:
        _add_format(cmd, json_flag.name)
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            add_common_options(sub)
    return cmd


FORMAT_KEY = "ascend_migrate.format"


def _add_format(cmd: click.Command, json_param: str) -> None:
    def store(ctx: click.Context, _param: click.Parameter, value: Optional[str]) -> None:
        if value is not None:
            ctx.meta[FORMAT_KEY] = value

    cmd.params.append(click.Option(["--format", "fmt_alias"], type=click.Choice(["text", "json"]), default=None,
                                   expose_value=False, callback=store,
                                   help="Output format (--json is the same as --format json)."))
    inner = cmd.callback
    if inner is None:
        return

    def callback(*args, **kwargs):
        ctx = click.get_current_context()
        if ctx.meta.pop(FORMAT_KEY, None) == "json":
            kwargs[json_param] = True
        return inner(*args, **kwargs)

    callback.__doc__ = inner.__doc__
    cmd.callback = callback
