"""The optional vLLM stages of `check` (`--vllm`): vllm and vllm-ascend installed and of the
same release, the torch_npu of that release, and the `ascend` platform plugin visible to vLLM.

Pure functions over package metadata (distribution versions and the entry points of group
`vllm.platform_plugins`, as the probe reads them in the checked interpreter); the release pairs
come from rule VL008 of the knowledge base.
"""
from __future__ import annotations

import re
from typing import Mapping, Optional, Sequence

from ascend_migrate.check.model import Stage, fail, ok, skip, warn

PLUGIN_GROUP = "vllm.platform_plugins"
_RELEASE = re.compile(r"^v?(\d+(?:\.\d+)*)")


def release(version: Optional[str]) -> Optional[tuple[int, ...]]:
    """(0, 23, 0) for 0.23.0, 0.23.0rc1, 0.23.0+empty, v0.23.0; None when unreadable."""
    m = _RELEASE.match(version or "")
    if not m:
        return None
    parts = tuple(int(p) for p in m.group(1).split("."))
    return parts + (0,) * (3 - len(parts)) if len(parts) < 3 else parts[:3]


def pairing_table() -> dict[tuple[int, ...], str]:
    """vLLM release -> the vllm-ascend release, CANN and torch / torch_npu that go with it."""
    from ascend_migrate.knowledge.base import load_knowledge

    table = load_knowledge().rule("VL008").match["supported"]
    out = {}
    for spec, what in table.items():
        rel = release(spec.lstrip("="))
        if rel is not None:
            out[rel] = what
    return out


def _fmt(rel: tuple[int, ...]) -> str:
    return ".".join(map(str, rel))


def vllm_stages(dists: Mapping[str, Optional[str]], platform_plugins: Sequence[str],
                table: Optional[Mapping[tuple[int, ...], str]] = None) -> list[Stage]:
    """`dists`: distribution name -> installed version (None when absent), for vllm, vllm-ascend
    (or vllm_ascend) and torch_npu. `platform_plugins`: names registered in vllm.platform_plugins."""
    table = pairing_table() if table is None else table
    vllm = dists.get("vllm")
    plugin = dists.get("vllm-ascend") or dists.get("vllm_ascend")
    stages: list[Stage] = []
    newest = _fmt(max(table)) if table else "X.Y.Z"
    if vllm is None:
        stages.append(fail("vllm", "vLLM installed", "vllm is not installed",
                           "the vLLM package is missing from this interpreter",
                           f"pip install vllm=={newest}, then vllm-ascend=={newest}"))
    else:
        stages.append(ok("vllm", "vLLM installed", f"vllm {vllm}", version=vllm))
    if plugin is None:
        want = _fmt(release(vllm)) if release(vllm) else newest
        stages.append(fail("vllm_ascend", "vllm-ascend installed", "vllm-ascend is not installed",
                           "without the plugin vLLM finds no platform ('Failed to infer device type')",
                           "pip install --extra-index-url https://mirrors.huaweicloud.com/ascend/repos/pypi/variant "
                           f"vllm-ascend=={want} (after vllm; it reinstalls torch_npu)"))
    else:
        stages.append(ok("vllm_ascend", "vllm-ascend installed", f"vllm-ascend {plugin}", version=plugin))
    stages.append(_pairing(vllm, plugin, dists.get("torch_npu"), table))
    stages.append(_plugin(plugin, platform_plugins))
    return stages


def _pairing(vllm: Optional[str], plugin: Optional[str], torch_npu: Optional[str],
             table: Mapping[tuple[int, ...], str]) -> Stage:
    title = "vLLM and vllm-ascend paired"
    if vllm is None or plugin is None:
        return skip("vllm_pairing", title, "needs both vllm and vllm-ascend")
    rv, rp = release(vllm), release(plugin)
    if rv is None:
        return fail("vllm_pairing", title, f"vllm {vllm}", "the vLLM version is not a release number "
                    "(a source or editable build gives InvalidVersion in vllm-ascend)",
                    "export VLLM_VERSION=X.Y.Z (the release the source tree is at)")
    if rp is None or rv != rp:
        return fail("vllm_pairing", title, f"vllm {vllm}, vllm-ascend {plugin}",
                    "vllm-ascend X.Y.Z is built for vLLM X.Y.Z; other pairs fail at import or at run time",
                    f"install vllm-ascend=={_fmt(rv)} (or vllm=={_fmt(rp) if rp else 'X.Y.Z'})"
                    + ("" if rv in table else f"; vLLM {_fmt(rv)} has no vllm-ascend release, pick one of "
                       + ", ".join(_fmt(r) for r in sorted(table, reverse=True))))
    row = table.get(rv)
    if row is None:
        return warn("vllm_pairing", title, f"vllm {vllm}, vllm-ascend {plugin}",
                    "this release is not in the compatibility matrix known here",
                    "check the vllm-ascend compatibility matrix for its CANN and torch_npu", release=_fmt(rv))
    m = re.search(r"torch_npu (\S+)", row)
    want_npu = m.group(1) if m else None
    if want_npu and torch_npu and torch_npu != want_npu:
        return warn("vllm_pairing", title, f"vllm {vllm}, vllm-ascend {plugin}, torch_npu {torch_npu}",
                    f"this release is tested with {row}",
                    f"reinstall vllm-ascend=={_fmt(rv)} (it brings torch_npu {want_npu}), or install the matching "
                    "torch_npu afterwards; run pip check", expected=row)
    return ok("vllm_pairing", title, f"vllm {vllm}, vllm-ascend {plugin} ({row})", expected=row)


def _plugin(plugin: Optional[str], names: Sequence[str]) -> Stage:
    title = "Ascend platform plugin registered"
    names = sorted(set(names))
    if plugin is None and not names:
        return skip("vllm_plugin", title, "vllm-ascend is not installed")
    if "ascend" not in names:
        return fail("vllm_plugin", title, f"{PLUGIN_GROUP}: {', '.join(names) or 'none'}",
                    "vLLM loads its platform from this entry-point group; without `ascend` it reports "
                    "'No platform detected' / 'Failed to infer device type'",
                    "reinstall vllm-ascend into this interpreter; unset VLLM_PLUGINS or include ascend in it")
    others = [n for n in names if n != "ascend"]
    if others:
        return fail("vllm_plugin", title, f"{PLUGIN_GROUP}: {', '.join(names)}",
                    "vLLM activates one out-of-tree platform plugin only ('Only one platform plugin can be activated')",
                    f"uninstall the package providing {', '.join(others)} or select ascend with VLLM_PLUGINS=ascend")
    return ok("vllm_plugin", title, f"{PLUGIN_GROUP}: ascend")
