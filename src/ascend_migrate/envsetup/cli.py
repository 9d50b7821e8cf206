"""`ascend-migrate env`: write or print the host's NPU environment script."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from ascend_migrate.console import info
from ascend_migrate.envsetup.generate import (
    LOG_LEVELS,
    PIP_INDEXES,
    EnvOptionError,
    EnvOptions,
    add_to_rc_bytes,
    build_script,
    pip_index_url,
    replace_file,
    requirements,
)

EPILOG = """\b
Nothing is installed and no shell start-up file is edited unless asked: --install runs
pip now; --rc-file FILE adds one guarded `source` line (idempotent) to FILE.
Exit status: 0 ok, 1 pip install failed, 2 usage error.
"""


def _installed_torch(python: str) -> str:
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        try:
            from importlib.metadata import version

            return version("torch")
        except Exception:
            return ""
    return ""


def _prepare_rc(rc_file: Path, output: Path) -> tuple[bytes, bytes]:
    """The rc file's bytes now and with our block; exit 2 when it cannot be edited safely."""
    if rc_file.exists() and not Path(os.path.realpath(rc_file)).is_file():
        click.echo(f"error: --rc-file {rc_file}: not a regular file", err=True)
        sys.exit(2)
    try:
        old = rc_file.read_bytes() if rc_file.exists() else b""
    except OSError as exc:
        click.echo(f"error: --rc-file {rc_file}: cannot read: {exc.strerror or exc}", err=True)
        sys.exit(2)
    folder = Path(os.path.realpath(rc_file)).parent
    if not os.access(folder, os.W_OK | os.X_OK):
        click.echo(f"error: --rc-file {rc_file}: its folder {folder} is not writable; nothing was written", err=True)
        sys.exit(2)
    return old, add_to_rc_bytes(old, str(output.resolve()))


def _replace_or_exit(path: Path, data: bytes, mode: int) -> None:
    try:
        replace_file(path, data, mode)
    except OSError as exc:
        click.echo(f"error: cannot write {path}: {exc.strerror or exc}; it was left as it was", err=True)
        sys.exit(2)


@click.command(name="env", epilog=EPILOG)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write the script here (default: print it).")
@click.option("--set-env", "set_env", type=click.Path(dir_okay=False), default=None, help="CANN set_env.sh to source (default: detected).")
@click.option("--cann-root", type=click.Path(file_okay=False, path_type=Path), default=None, help="CANN toolkit directory to detect set_env.sh and the version from.")
@click.option("--also-source", multiple=True, type=click.Path(dir_okay=False), help="Another environment script to source after CANN's (e.g. /usr/local/Ascend/nnal/atb/set_env.sh). Repeatable.")
@click.option("--devices", default=None, help="ASCEND_RT_VISIBLE_DEVICES, e.g. 0,1,2,3 (default: leave all visible).")
@click.option("--hccl-connect-timeout", type=int, default=1200, show_default=True, help="HCCL_CONNECT_TIMEOUT seconds.")
@click.option("--hccl-exec-timeout", type=int, default=1200, show_default=True, help="HCCL_EXEC_TIMEOUT seconds.")
@click.option("--log-level", type=click.Choice(list(LOG_LEVELS)), default="error", show_default=True, help="ASCEND_GLOBAL_LOG_LEVEL.")
@click.option("--log-stdout/--no-log-stdout", default=False, show_default=True, help="ASCEND_SLOG_PRINT_TO_STDOUT.")
@click.option("--pip-index", default="pypi", show_default=True, help=f"Index for --install: {', '.join(PIP_INDEXES)} or a URL.")
@click.option("--torch-npu", "torch_npu", default=None, help="Also pin this torch_npu release and the torch it is paired with.")
@click.option("--numpy-pin/--no-numpy-pin", default=None, help="Force or forbid the numpy<2 pin (default: when the CANN/torch version needs it).")
@click.option("--python", "python", default=None, help="Interpreter the script's pip uses (default: this one).")
@click.option("--install", is_flag=True, help="Run pip install of the pinned deps now, with --python.")
@click.option("--driver-dir", type=click.Path(file_okay=False), default=None, help="Ascend driver folder the script checks (default: beside the CANN toolkit, else /usr/local/Ascend/driver).")
@click.option("--master-addr", default=None, help="Multi-node: MASTER_ADDR, the rank-0 host (same on every node).")
@click.option("--master-port", type=int, default=None, help="Multi-node: MASTER_PORT (same on every node).")
@click.option("--hccl-if-ip", default=None, help="Multi-node: HCCL_IF_IP, this node's IP address on the NIC HCCL uses.")
@click.option("--socket-ifname", default=None, help="Multi-node: NIC name for GLOO_SOCKET_IFNAME and TP_SOCKET_IFNAME (e.g. eth0).")
@click.option("--rc-file", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Add a line sourcing the script to this file (needs --output).")
def env_command(output, set_env, cann_root, also_source, devices, hccl_connect_timeout, hccl_exec_timeout,
                log_level, log_stdout, pip_index, torch_npu, numpy_pin, python, install, driver_dir, master_addr, master_port, hccl_if_ip, socket_ifname,
                rc_file):
    """Write the environment setup script for this Ascend host.

    The script sources CANN's set_env.sh (detected, or --set-env), sets
    ASCEND_RT_VISIBLE_DEVICES, the HCCL timeouts and the CANN log level, and carries the
    pinned Python runtime deps (plus numpy<2 where the CANN or torch version needs it) for
    `--install`; for multi-node jobs MASTER_ADDR/MASTER_PORT, HCCL_IF_IP and the socket NIC.
    It checks the driver and `npu-smi`. Source it in every shell or job script that runs on
    the NPU; it leaves only the exported variables behind (helpers are function-local).

    \b
    Examples:
      ascend-migrate env                               # print it
      ascend-migrate env -o npu_env.sh --devices 0,1   # then: source npu_env.sh
      ascend-migrate env --pip-index huawei --install  # install the deps now
    """
    from ascend_migrate.check.cann import find_cann
    from ascend_migrate.check.compat import default_compat

    if rc_file is not None and output is None:
        raise click.UsageError("--rc-file needs --output (the rc file sources the written script)")
    cann = find_cann(os.environ, cann_root)
    python = python or sys.executable
    compat = default_compat()
    pins: list[str] = []
    torch_version = _installed_torch(python)
    if torch_npu:
        torch_for = compat.torch_for_torch_npu(torch_npu)
        if torch_for is None:
            m = __import__("re").match(r"^(\d+\.\d+\.\d+)", torch_npu)
            if not m:
                raise click.BadParameter(f"{torch_npu!r} is not a torch_npu version", param_hint="--torch-npu")
            torch_for = m.group(1)
        pins = [f"torch=={torch_for}", f"torch-npu=={torch_npu}"]
        torch_version = torch_for
    opts = EnvOptions(
        set_env=set_env or (str(cann.set_env) if cann.set_env else None),
        also_source=list(also_source),
        cann_version=cann.version,
        visible_devices=devices,
        hccl_connect_timeout=hccl_connect_timeout,
        hccl_exec_timeout=hccl_exec_timeout,
        log_level=log_level,
        log_to_stdout=log_stdout,
        pip_index=pip_index,
        python=python,
        torch_version=torch_version,
        torch_pins=pins,
        numpy_pin=numpy_pin,
        name=output.name if output else "npu_env.sh",
        driver_dir=driver_dir,
        master_addr=master_addr,
        master_port=master_port,
        hccl_if_ip=hccl_if_ip,
        socket_ifname=socket_ifname,
    )
    try:
        text = build_script(opts, compat)
    except EnvOptionError as exc:
        raise click.UsageError(str(exc)) from exc
    rc_new = _prepare_rc(rc_file, output) if rc_file is not None else None  # refused before anything is written
    if output is None:
        click.echo(text, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        _replace_or_exit(output, text.encode("utf-8"), 0o755)
        output.chmod(0o755)
        info(f"wrote {output}; use it with: source {output}")
        if not opts.set_env:
            click.echo("note: no CANN set_env.sh found on this host; the script uses the default path", err=True)
    if rc_file is not None and rc_new is not None:
        old_bytes, new_bytes = rc_new
        if new_bytes != old_bytes:
            _replace_or_exit(rc_file, new_bytes, 0o644)
        info(f"{rc_file}: sources {output.resolve()}")
    if install:
        specs, _ = requirements(opts, compat)
        cmd = [python, "-m", "pip", "install"]
        index = pip_index_url(pip_index)
        if index:
            cmd += ["--index-url", index]
        cmd += specs
        info("running: " + " ".join(cmd))
        rc = subprocess.call(cmd)
        if rc != 0:
            click.echo(f"pip install failed (status {rc})", err=True)
            sys.exit(1)
