"""`ascend-migrate check`."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

EPILOG = """\b
Stages (in order): python, torch, torch_npu, runtime_deps, numpy, cann, set_env,
driver, import_torch, import_torch_npu, devices, tensor_op, matmul, bf16, hccl;
with --vllm also vllm, vllm_ascend, vllm_pairing, vllm_plugin.
Each is ok, warn, fail or skip; failures carry a cause and the exact fix.
\b
Exit status: 0 no stage failed (warnings allowed), 1 a stage failed, 2 usage error.
\b
JSON (--json): {"schema_version": 1, "device", "python", "verdict": ok|warn|fail,
  "summary", "no_npu_stack", "counts": {ok, warn, fail, skip}, "elapsed_s",
  "stages": [{"id", "title", "status", "found", "cause", "fix", "diagnosis", "details"}]}
"""


@click.command(name="check", epilog=EPILOG)
@click.option("--device", default="npu:0", show_default=True, help="npu[:N], cuda[:N] or cpu: where the tensor, matmul and bf16 checks run.")
@click.option("--python", "python", default=None, help="Interpreter to check (default: the one running this command). Its torch / torch_npu are probed in a subprocess.")
@click.option("--json", "as_json", is_flag=True, help="Print the machine-readable report.")
@click.option("--hccl", is_flag=True, help="Also run a 2-process all_reduce (hccl on npu, nccl on cuda, gloo on cpu).")
@click.option("--vllm", is_flag=True, help="Also check vLLM serving: vllm and vllm-ascend installed, of the same release, and the ascend platform plugin registered.")
@click.option("--timeout", type=click.FloatRange(min=1), default=180.0, show_default=True, help="Seconds before a hung import or device step is killed.")
@click.option("--cann-root", type=click.Path(file_okay=False, path_type=Path), default=None, help="CANN toolkit directory to use instead of searching ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME and /usr/local/Ascend.")
@click.option("--npu-smi", "npu_smi", default=None, help="Path of the npu-smi binary (default: PATH, then /usr/local/sbin).")
@click.option("--color/--no-color", default=None, help="Colour the terminal output (default: when stdout is a terminal).")
def check_command(device, python, as_json, hccl, vllm, timeout, cann_root, npu_smi, color):
    """Check that this host can run PyTorch on an Ascend NPU, stage by stage.

    Versions (Python, torch, torch_npu and whether they match each other and the installed
    CANN), the CANN install and its set_env.sh, the driver (npu-smi info), the runtime
    Python deps, importing torch / torch_npu (in a subprocess with a timeout, errors
    classified), the device count, a tensor op and a matmul checked against the CPU, bf16
    and optionally a 2-process all_reduce.

    \b
    Examples:
      ascend-migrate check                      # the NPU host, device npu:0
      ascend-migrate check --device cpu         # same device checks on the CPU
      ascend-migrate check --python venv/bin/python --json
    """
    from ascend_migrate.check.parsers import parse_device
    from ascend_migrate.check.render import render_text
    from ascend_migrate.check.runner import run_check

    try:
        parse_device(device)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--device") from exc
    python = python or sys.executable
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        import shutil

        resolved = shutil.which(python)
        if not resolved:
            raise click.BadParameter(f"{python} is not an executable file", param_hint="--python")
        python = resolved
    report = run_check(device, python=python, timeout=timeout, hccl=hccl, vllm=vllm, cann_root=cann_root, npu_smi=npu_smi)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        from ascend_migrate.console import set_color

        use_color = set_color(color)
        click.echo(render_text(report, color=use_color), nl=False)
    sys.exit(report.exit_code)
