"""The `ascend-migrate` command line.

Subcommands are imported lazily: `ascend-migrate scan` must not pay for importing the
validation runner (which may import torch), and a broken optional area must not take the
whole CLI down with it.
"""
from __future__ import annotations

import importlib

import click

from ascend_migrate import __version__
from ascend_migrate.exits import EXIT_BROKEN_PIPE, exit_on_error

# name -> "module:attribute". Each area owns its module; add a line here to expose a command.
LAZY_COMMANDS: dict[str, str] = {
    "scan": "ascend_migrate.scan.cli:scan_command",
    "rules": "ascend_migrate.knowledge.cli:rules_command",
    "explain": "ascend_migrate.knowledge.cli:explain_command",
    "docs": "ascend_migrate.knowledge.cli:docs_command",
    "migrate": "ascend_migrate.fix.cli:migrate_command",
    "check": "ascend_migrate.check.cli:check_command",
    "diagnose": "ascend_migrate.diagnose.cli:diagnose_command",
    "env": "ascend_migrate.envsetup.cli:env_command",
    "emulated-npu": "ascend_migrate.emulated_npu.cli:emulated_npu_group",
    "validate": "ascend_migrate.validate.cli:validate_command",
    "kb": "ascend_migrate.knowledge.sync_cli:kb_group",
    "skill": "ascend_migrate.skillgen.cli:skill_command",
    "scaffold": "ascend_migrate.scaffold.cli:scaffold_command",
    "replay": "ascend_migrate.replay:replay_command",
    "ops": "ascend_migrate.validate.ops_cli:ops_command",
}


class LazyGroup(click.Group):
    """A click group that imports a subcommand only when it is invoked or listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(LAZY_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = LAZY_COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith(module_name.rsplit(".", 1)[0]):
                return _unavailable(cmd_name, f"not available in this build ({exc.name} missing)")
            raise
        from ascend_migrate.console import add_common_options

        return add_common_options(getattr(module, attr))

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # The reader went away (`ascend-migrate rules | head`): stop quietly with the
            # exit status a process killed by SIGPIPE reports, not a traceback.
            _silence_stdout()
            ctx.exit(EXIT_BROKEN_PIPE)


def _silence_stdout() -> None:
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _unavailable(name: str, reason: str) -> click.Command:
    @click.command(name=name, help=f"(unavailable: {reason})")
    def _cmd() -> None:
        raise click.UsageError(f"'{name}' is {reason}")

    return _cmd


def _root_color(ctx: click.Context, _param: click.Parameter, value: "bool | None") -> None:
    from ascend_migrate.console import color_enabled, no_color_env

    if value is not None or no_color_env():
        ctx.color = color_enabled(value)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ascend-migrate")
@click.option("--color/--no-color", default=None, expose_value=False, is_eager=True, callback=_root_color,
              help="Colour output for every command (default: on a terminal, off when NO_COLOR is set).")
def cli() -> None:
    """Port CUDA PyTorch projects to Huawei Ascend NPUs.

    \b
    Typical flow:
      ascend-migrate check --device npu:0     is this NPU host ready?
      ascend-migrate scan PATH                what in PATH will break on Ascend?
      ascend-migrate migrate PATH             rewrite it (dry run; --write to apply)
      ascend-migrate validate run PATH        one verdict: is the port done?
      ascend-migrate diagnose LOG             what does this error mean, how to fix it
      ascend-migrate skill PATH --model NAME  a per-model skill from a validated port
      ascend-migrate replay SKILL_DIR TARGET  reproduce that port on a fresh checkout
    """


def main() -> None:
    """Console-script entry point. An internal error is one line on stderr and exit code 2
    (1 means "findings exist"); set ASCEND_MIGRATE_DEBUG=1 for the traceback."""
    import sys

    try:
        try:
            cli(prog_name="ascend-migrate")
        finally:
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                _silence_stdout()
                sys.exit(EXIT_BROKEN_PIPE)
    except SystemExit:
        raise
    except (KeyboardInterrupt, Exception) as exc:
        exit_on_error(exc)  # a write was rolled back (staging) or finished (renaming): said in one line
