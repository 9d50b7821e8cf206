"""Generate the host's NPU environment script. Pure: options in, bash text out."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ascend_migrate import __version__
from ascend_migrate.check.compat import Compat, default_compat
from ascend_migrate.check.parsers import parse_visible_devices

PIP_INDEXES = {
    "pypi": None,
    "huawei": "https://repo.huaweicloud.com/repository/pypi/simple/",
    "tsinghua": "https://pypi.tuna.tsinghua.edu.cn/simple/",
    "aliyun": "https://mirrors.aliyun.com/pypi/simple/",
}
LOG_LEVELS = {"debug": 0, "info": 1, "warning": 2, "error": 3}
DEFAULT_SET_ENV = "/usr/local/Ascend/ascend-toolkit/set_env.sh"
SCRIPT_NAME = "npu_env.sh"


@dataclass
class EnvOptions:
    set_env: Optional[str] = None  # None: not found on this host; the default path is used
    also_source: list[str] = field(default_factory=list)  # e.g. nnal/atb/set_env.sh
    cann_version: str = ""
    visible_devices: Optional[str] = None
    hccl_connect_timeout: int = 1200
    hccl_exec_timeout: int = 1200
    log_level: str = "error"
    log_to_stdout: bool = False
    pip_index: str = "pypi"
    python: str = "python3"
    torch_version: str = ""  # installed / intended torch, for the numpy rule
    torch_pins: list[str] = field(default_factory=list)  # e.g. ["torch==2.6.0", "torch-npu==2.6.0.post3"]
    numpy_pin: Optional[bool] = None  # None: decide from the CANN / torch versions
    name: str = SCRIPT_NAME
    driver_dir: Optional[str] = None  # None: <Ascend>/driver beside the toolkit of set_env
    # multi-node HCCL networking (None: left to the job script, with a commented example)
    master_addr: Optional[str] = None
    master_port: Optional[int] = None
    hccl_if_ip: Optional[str] = None  # this node's IP on the NIC HCCL uses to build the domain
    socket_ifname: Optional[str] = None  # NIC for the host-side sockets (GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME)


class EnvOptionError(ValueError):
    pass


def pip_index_url(choice: str) -> Optional[str]:
    if choice in PIP_INDEXES:
        return PIP_INDEXES[choice]
    if re.match(r"^http://", choice, re.I):
        raise EnvOptionError(f"pip index {choice!r}: plain http lets anyone on the path replace the packages "
                             "pip installs; use the https URL of the index")
    if re.match(r"^https://[^\s'\"]+$", choice):
        return choice
    raise EnvOptionError(f"pip index {choice!r}: use one of {', '.join(PIP_INDEXES)} or an https URL")


def driver_dir(opts: EnvOptions) -> str:
    if opts.driver_dir:
        return opts.driver_dir
    if opts.set_env:
        parts = opts.set_env.replace("\\", "/").split("/")
        if len(parts) >= 3 and parts[-2] == "ascend-toolkit":
            return "/".join(parts[:-2] + ["driver"])
    return "/usr/local/Ascend/driver"


def requirements(opts: EnvOptions, compat: Optional[Compat] = None) -> tuple[list[str], Optional[str]]:
    """(pip requirement specs, why numpy is pinned or None)."""
    compat = compat or default_compat()
    specs = list(opts.torch_pins) + [d.spec for d in compat.runtime_deps]
    why = None
    if opts.numpy_pin is None:
        why = compat.numpy_pin_needed(opts.torch_version, opts.cann_version)
    elif opts.numpy_pin:
        why = "requested"
    if why:
        specs.append(compat.numpy_spec)
    return specs, why


def _q(value: str) -> str:
    """Quote for bash (double quotes unnecessary when shlex says the word is safe)."""
    return shlex.quote(value)


def validate(opts: EnvOptions) -> None:
    if opts.visible_devices is not None:
        _, err = parse_visible_devices(opts.visible_devices)
        if err:
            raise EnvOptionError(err)
    for name in ("hccl_connect_timeout", "hccl_exec_timeout"):
        if getattr(opts, name) <= 0:
            raise EnvOptionError(f"{name.replace('_', '-')} must be a positive number of seconds")
    if opts.log_level not in LOG_LEVELS:
        raise EnvOptionError(f"log level {opts.log_level!r}: use one of {', '.join(LOG_LEVELS)}")
    pip_index_url(opts.pip_index)
    if opts.hccl_if_ip is not None:
        import ipaddress

        try:
            ipaddress.ip_address(opts.hccl_if_ip)
        except ValueError:
            raise EnvOptionError(f"HCCL_IF_IP {opts.hccl_if_ip!r} is not an IP address") from None
    if opts.socket_ifname is not None and not re.fullmatch(r"[A-Za-z0-9_.:-]{1,15}", opts.socket_ifname):
        raise EnvOptionError(f"network interface {opts.socket_ifname!r} is not an interface name")
    if opts.master_addr is not None and not re.fullmatch(r"[A-Za-z0-9_.:-]+", opts.master_addr):
        raise EnvOptionError(f"master address {opts.master_addr!r} is not a host name or IP address")
    if opts.master_port is not None and not 0 < opts.master_port < 65536:
        raise EnvOptionError("master port must be between 1 and 65535")
    for p in [opts.set_env or "", *opts.also_source, opts.python, opts.driver_dir or "", opts.name]:
        if "\n" in p or "\r" in p or "\0" in p:  # a line break would end a comment or a quoted word
            raise EnvOptionError(f"name or path contains a line break or NUL: {p!r}")


def build_script(opts: EnvOptions, compat: Optional[Compat] = None) -> str:
    """The setup script. Sourcing it sets the environment; `--install` also runs pip."""
    validate(opts)
    specs, numpy_why = requirements(opts, compat)
    index = pip_index_url(opts.pip_index)
    set_env = opts.set_env or DEFAULT_SET_ENV
    n = opts.name
    L: list[str] = [
        "#!/usr/bin/env bash",
        f"# Ascend NPU environment for this host, generated by ascend-migrate {__version__} (ascend-migrate env).",
        "#",
        f"#   source {_q(n)}              set up the current shell (CANN, devices, HCCL, logs)",
        f"#   source {_q(n)} --install    the same, then pip-install the pinned runtime deps",
        f"#   bash {_q(n)} --install      only install the deps",
        "#",
        "# Sourcing exports the environment variables below (and those of CANN's set_env.sh) and",
        "# nothing else: its own helpers live in a function's local scope and the function is",
        "# removed before it returns. To try it without touching your shell, run it in a subshell:",
        f"#   ( source {_q(n)} && python train.py )",
        "# It never edits shell start-up files. Exit/return status: 0 ok, 1 a step failed.",
    ]
    if opts.cann_version:
        L.append(f"# CANN {opts.cann_version} detected when this was generated.")
    if not opts.set_env:
        L.append("# No set_env.sh was found when this was generated: the default path is used.")
    L += [
        "",
        "am_main() {",
        "    local am_status=0 am_set_env am_arg am_driver am_name am_python",
        # names and paths are assigned once, quoted, and only ever expanded inside double quotes
        f"    am_name={_q(n)}",
        f"    am_python={_q(opts.python)}",
        "",
        "    # --- CANN toolkit: library paths, ASCEND_HOME_PATH, ASCEND_OPP_PATH, PYTHONPATH",
    ]
    for path in [set_env, *opts.also_source]:
        L += [
            f"    am_set_env={_q(path)}",
            '    if [ -f "$am_set_env" ]; then',
            "        # shellcheck source=/dev/null",
            '        . "$am_set_env"',
            "    else",
            '        echo "$am_name: CANN environment script not found: $am_set_env" >&2',
            "        am_status=1",
            "    fi",
        ]
    L += [
        "",
        "    # --- driver and devices: npu-smi ships with the driver and answers only when it is loaded",
        f"    am_driver={_q(driver_dir(opts))}",
        '    if [ ! -f "$am_driver/version.info" ]; then',
        '        echo "$am_name: no Ascend driver at $am_driver (version.info missing); install the driver and firmware,'
        ' or mount it into the container" >&2',
        "        am_status=1",
        "    fi",
        "    if ! command -v npu-smi >/dev/null 2>&1; then",
        '        echo "$am_name: npu-smi not found on PATH; it comes with the Ascend driver" >&2',
        "        am_status=1",
        "    elif ! npu-smi info >/dev/null 2>&1; then",
        '        echo "$am_name: npu-smi info failed: the driver is not loaded or no /dev/davinci* device is'
        ' visible here" >&2',
        "        am_status=1",
        "    fi",
        "",
        "    # --- devices (ids are renumbered from 0 inside the process)",
    ]
    if opts.visible_devices is not None:
        L.append(f"    export ASCEND_RT_VISIBLE_DEVICES={_q(opts.visible_devices)}")
    else:
        L.append("    # all devices visible; to restrict: export ASCEND_RT_VISIBLE_DEVICES=0,1")
    L += [
        "",
        "    # --- HCCL (multi-card): seconds to build the communication domain / to wait in a collective",
        f"    export HCCL_CONNECT_TIMEOUT={int(opts.hccl_connect_timeout)}",
        f"    export HCCL_EXEC_TIMEOUT={int(opts.hccl_exec_timeout)}",
        "",
        "    # --- multi-node: the rendezvous host, and the NIC each node talks on. Set the same",
        "    # MASTER_ADDR/MASTER_PORT on every node; HCCL_IF_IP is this node's own address.",
    ]
    net = [("MASTER_ADDR", opts.master_addr, "10.0.0.1"), ("MASTER_PORT", opts.master_port, "29500"),
           ("HCCL_IF_IP", opts.hccl_if_ip, "10.0.0.2"), ("GLOO_SOCKET_IFNAME", opts.socket_ifname, "eth0"),
           ("TP_SOCKET_IFNAME", opts.socket_ifname, "eth0")]
    for var, value, example in net:
        if value is not None:
            L.append(f"    export {var}={_q(str(value))}")
        else:
            L.append(f"    # export {var}={example}")
    L += [
        "",
        "    # --- logs: 0 debug, 1 info, 2 warning, 3 error (debug/info slow training down)",
        f"    export ASCEND_GLOBAL_LOG_LEVEL={LOG_LEVELS[opts.log_level]}",
        f"    export ASCEND_SLOG_PRINT_TO_STDOUT={1 if opts.log_to_stdout else 0}",
        "",
        "    # --- Python runtime deps torch_npu / CANN import but the wheel does not declare",
    ]
    if numpy_why:
        L.append(f"    # numpy is pinned: {numpy_why}.")
    pip_args = ["-m", "pip", "install"]
    if index:
        pip_args += ["--index-url", index]
    pip_line = " ".join(_q(a) for a in pip_args + specs)
    L += [
        '    for am_arg in "$@"; do',
        '        if [ "$am_arg" = "--install" ]; then',
        f'            "${{AM_PYTHON:-$am_python}}" {pip_line} || am_status=1',
        "        fi",
        "    done",
        "",
        "    # --- verify what set_env.sh promised",
        '    if [ -z "${ASCEND_OPP_PATH:-}" ] || [ ! -d "${ASCEND_OPP_PATH:-/nonexistent}" ]; then',
        '        echo "$am_name: ASCEND_OPP_PATH is not set to an existing directory; torch_npu will not import" >&2',
        "        am_status=1",
        "    fi",
        "",
        "    unset -f am_main",
        '    return "$am_status"',
        "}",
        "",
        "# return when sourced, exit when run (a bare return/exit passes am_main's status on)",
        'if (return 0 2>/dev/null); then',
        '    am_main "$@"',
        "    return",
        "fi",
        'am_main "$@"',
        "exit",
        "",
    ]
    return "\n".join(L)


RC_BEGIN = "# >>> ascend-migrate env >>>"
RC_END = "# <<< ascend-migrate env <<<"


def rc_block(script_path: str) -> str:
    return f"{RC_BEGIN}\n[ -f {_q(script_path)} ] && . {_q(script_path)}\n{RC_END}\n"


def add_to_rc(rc_text: str, script_path: str, newline: str = "\n") -> str:
    """rc file text with our block added or replaced (idempotent), its lines ended by `newline`."""
    block = rc_block(script_path).replace("\n", newline)
    # Plain searches, not a regular expression: one pass over the file whatever it holds.
    begin = rc_text.find(RC_BEGIN)
    end = rc_text.find(RC_END, begin + len(RC_BEGIN)) if begin >= 0 else -1
    if end >= 0:
        stop = end + len(RC_END)
        stop += 2 if rc_text.startswith("\r\n", stop) else 1 if rc_text.startswith("\n", stop) else 0
        return rc_text[:begin] + block + rc_text[stop:]
    sep = "" if not rc_text or rc_text.endswith("\n") else newline
    return rc_text + sep + block


def add_to_rc_bytes(rc: bytes, script_path: str) -> bytes:
    """The same on the file's bytes: line endings (CRLF or LF, as the file has them) and bytes that
    are not UTF-8 are kept exactly; only our block changes."""
    text = rc.decode("utf-8", errors="surrogateescape")
    newline = "\r\n" if "\r\n" in text and text.count("\r\n") * 2 >= text.count("\n") else "\n"
    return add_to_rc(text, script_path, newline).encode("utf-8", errors="surrogateescape")


def replace_file(path: Path, data: bytes, default_mode: int = 0o644) -> None:
    """Write `data` to `path` atomically: a temporary file beside it, flushed to disk, given the
    old file's mode, owner and group, then renamed over it. A full disk or a crash leaves the old
    file whole. A symlinked `path` is written at the file it points to (the link stays)."""
    import os
    import tempfile

    real = Path(os.path.realpath(path))
    try:
        st: Optional[os.stat_result] = os.stat(real)
    except FileNotFoundError:
        st = None
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(tmp, st.st_uid if os.geteuid() == 0 else -1, st.st_gid)
                except PermissionError:
                    pass
            os.chmod(tmp, st.st_mode & 0o7777)
        else:
            os.chmod(tmp, default_mode)
        os.replace(tmp, real)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
