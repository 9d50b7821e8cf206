"""plugin.json, its root copy, and marketplace.json agree and follow the manifest rules."""
from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SKILLS = ("cuda-to-npu", "npu-training", "npu-troubleshooting")

RESERVED_PREFIXES = ("claude-", "anthropic-", "anthropics-", "cc-plugin-")
KNOWN_PLUGIN_FIELDS = {
    "$schema", "name", "displayName", "version", "description", "author", "homepage",
    "repository", "license", "keywords", "metadata", "defaultEnabled", "icon", "skills",
    "commands", "agents", "hooks", "mcpServers", "lspServers", "outputStyles", "workflows",
    "userConfig", "channels", "dependencies",
}


def load(path):
    return json.loads((REPO / path).read_text(encoding="utf-8"))


def test_root_plugin_json_matches_claude_plugin_json():
    assert load("plugin.json") == load(".claude-plugin/plugin.json")


def test_plugin_manifest_fields():
    manifest = load(".claude-plugin/plugin.json")
    assert manifest["name"] == "ascend-migration"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", manifest["name"])
    assert not manifest["name"].startswith(RESERVED_PREFIXES)
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    assert 10 <= len(manifest["description"]) <= 2000
    assert manifest["description"] == manifest["description"].strip()
    assert isinstance(manifest["author"], dict) and manifest["author"]["name"]
    assert isinstance(manifest["keywords"], list) and all(isinstance(k, str) for k in manifest["keywords"])
    assert manifest["license"] == "Apache-2.0"
    assert set(manifest) <= KNOWN_PLUGIN_FIELDS, set(manifest) - KNOWN_PLUGIN_FIELDS


def test_plugin_version_matches_package():
    from ascend_migrate import __version__

    assert load(".claude-plugin/plugin.json")["version"] == __version__


def test_claude_plugin_folder_holds_only_manifests():
    names = {p.name for p in (REPO / ".claude-plugin").iterdir()}
    assert names <= {"plugin.json", "marketplace.json", "icon.png"}, names


def test_marketplace_points_at_this_plugin():
    market = load(".claude-plugin/marketplace.json")
    plugin = load(".claude-plugin/plugin.json")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", market["name"])
    assert market["description"].strip()
    assert market["owner"]["name"]
    entries = [e for e in market["plugins"] if e["name"] == plugin["name"]]
    assert len(entries) == 1
    entry = entries[0]
    source = entry["source"]
    assert isinstance(source, str) and source.startswith("./") and ".." not in source
    target = (REPO / source).resolve()
    assert json.loads((target / ".claude-plugin" / "plugin.json").read_text())["name"] == plugin["name"]
    # The version lives in plugin.json only; a second copy would drift.
    assert "version" not in entry or entry["version"] == plugin["version"]
    # strict=false would make the entry the whole definition and conflict with plugin.json.
    assert entry.get("strict", True) is True


def test_every_skill_folder_is_shipped():
    found = sorted(p.parent.name for p in (REPO / "skills").glob("*/SKILL.md"))
    assert found == sorted(SKILLS)


def test_license_is_apache():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0" in text


def test_marketplace_installs_the_repository_root():
    """The plugin is the folder that holds the marketplace: skills/, scripts/, references/ and
    templates/ at the paths the manifest's folder implies, installed as the files they are."""
    entry = load(".claude-plugin/marketplace.json")["plugins"][0]
    assert entry["source"] == "./"
    for part in ("skills", "scripts", "references", "templates", "src", "pyproject.toml"):
        assert (REPO / part).exists() and not (REPO / part).is_symlink(), part


def test_tracked_tree_has_no_links():
    """A link in the plugin is a dangling link in installs that keep links (several Claude Code
    releases), or a small text file in a checkout without symlink support."""
    import subprocess

    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-s"], capture_output=True, text=True)
    if listed.returncode != 0:
        import pytest

        pytest.skip("not a git checkout")
    links = [line.split("\t", 1)[1] for line in listed.stdout.splitlines() if line.startswith("120000 ")]
    assert not links, links
