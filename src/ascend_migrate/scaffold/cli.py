"""`ascend-migrate scaffold`: write a starting project that already runs on Ascend NPUs."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ascend_migrate.console import verbosity


@click.group(name="scaffold", context_settings={"help_option_names": ["-h", "--help"]})
def scaffold_command() -> None:
    """Write a starting project that runs on an Ascend NPU, a GPU or the CPU.

    \b
      ascend-migrate scaffold training DIR     train.py + config.yaml in DIR
    """


@scaffold_command.command(name="training")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite DIR/train.py and DIR/config.yaml if they exist.")
def training_command(directory: Path, force: bool) -> None:
    """Write DIR/train.py and DIR/config.yaml: a device-agnostic training script.

    \b
    The script picks the NPU when torch_npu imports and a device is present, else a GPU,
    else the CPU, and the matching process-group backend (hccl, nccl, gloo). It covers
    bf16-first AMP (fp16 + GradScaler as fallback), DDP with DistributedSampler or an
    iteration-based loop, gradient accumulation with no_sync, clipping, warm-up + cosine,
    checkpoints with RNG states and exact resume, step timing and memory, a profiler hook,
    and a `train_steps(device, steps, seed)` entry for `ascend-migrate validate`.

    \b
    Then:
      python DIR/train.py --config DIR/config.yaml --max-steps 50 --output-dir runs/a
      python DIR/train.py --config DIR/config.yaml --resume runs/a/checkpoints/last.pt
      torchrun --nproc_per_node=2 DIR/train.py --config DIR/config.yaml
      ascend-migrate validate capture train.py:train_steps --root DIR -o golden.pt

    Existing files are left alone unless --force is given.
    """
    from ascend_migrate.scaffold.generate import ScaffoldError, write_scaffold

    try:
        result = write_scaffold("training", directory, force=force)
    except (ScaffoldError, OSError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    for path in result.written:
        click.echo(f"wrote {path}")
    if verbosity() >= 0:
        click.echo(f"next: python {directory / 'train.py'} --config {directory / 'config.yaml'} --max-steps 50")
