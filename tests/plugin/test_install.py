"""The plugin as Claude Code installs it: the marketplace source copied into the plugin cache.

Built from the files git tracks (what a clone or a published checkout holds), then installed
by the pinned `claude` CLI from a local folder and from a git URL served on loopback; the two
installs must be the same real files, pass the directory profile's strict validation, and run
every script and skill from there. Copies that keep links (`cp -a`) and checkouts without
symlink support must load every skill too, and each skill copied alone into a user's skill
folder must run its first step.
"""
from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from ci_gates import cache_dir, unavailable
from skill_blocks import agent_env, run_block, shell_blocks


REPO = Path(__file__).resolve().parents[2]
SKILLS = ("cuda-to-npu", "npu-training", "npu-troubleshooting")
SCRIPTS = sorted(p.name for p in (REPO / "scripts").glob("*.py") if not p.name.startswith("_"))
MAX_INSTALL_BYTES = 8 << 20


def _git(*args: str, cwd: Path) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """A git repository holding the tracked files as they are in this working tree."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: cannot tell the committed tree")
    target = tmp_path_factory.mktemp("published") / "ascend-migration"
    for rel in filter(None, listed.stdout.decode().split("\0")):
        source, dest = REPO / rel, target / rel
        if source.is_symlink() or not source.is_file():
            continue  # deleted in the working tree; links are refused by test_tracked_tree_has_no_links
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
    _git("init", "-q", "-b", "main", cwd=target)
    _git("add", "-A", cwd=target)
    _git("commit", "-q", "-m", "release", cwd=target)
    return target


class _SmartGitHandler(http.server.BaseHTTPRequestHandler):
    """git's smart HTTP protocol through `git http-backend` (CGI), which shallow clones need."""

    project_root = ""

    def _serve(self) -> None:
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {**os.environ, "GIT_PROJECT_ROOT": self.project_root, "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
               "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
               "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "REMOTE_ADDR": "127.0.0.1"}
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True,
                             timeout=120).stdout
        sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
        head, _, payload = out.partition(sep)
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _serve

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def git_url(published, tmp_path_factory):
    """The published repository over git's smart HTTP protocol on 127.0.0.1."""
    served = tmp_path_factory.mktemp("served")
    bare = served / "ascend-migration.git"
    _git("clone", "-q", "--bare", str(published), str(bare), cwd=served)
    handler = type("Handler", (_SmartGitHandler,), {"project_root": str(served)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/ascend-migration.git"
    server.shutdown()


def _fresh_cli(claude_cli, tmp_path: Path, name: str):
    """The pinned CLI with a HOME of its own: a user who has installed nothing yet."""
    home = tmp_path / name
    home.mkdir()
    return type(claude_cli)(claude_cli.binary, home)


def _install(cli, source: str) -> Path:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())["name"]
    proc = cli.run("plugin", "marketplace", "add", source, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = cli.run("plugin", "install", f"ascend-migration@{market}", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = cli.run("plugin", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    entry = {e["id"]: e for e in json.loads(proc.stdout)}[f"ascend-migration@{market}"]
    assert entry["enabled"] is True
    return Path(entry["installPath"])


def _files(root: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(root.rglob("*")):
        assert not path.is_symlink(), f"link in the installed plugin: {path}"
        if path.is_file():
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def _validate_directory_profile(cli, plugin: Path) -> None:
    proc = cli.run("plugin", "validate", str(plugin), "--strict", "--profile", "directory")
    assert proc.returncode == 0 and "Validation passed" in proc.stdout, proc.stdout + proc.stderr
    proc = cli.run("plugin", "validate", str(plugin / ".claude-plugin" / "plugin.json"), "--strict", "--json")
    report = json.loads(proc.stdout)
    assert report["success"], proc.stdout
    assert sorted(report["provides"]["skills"]) == [f"ascend-migration:{s}" for s in SKILLS]


def _scripts_run(plugin: Path, cwd: Path) -> None:
    """Every script answers --help from the copy, with the package inside the copy."""
    for script in SCRIPTS:
        proc = subprocess.run([sys.executable, str(plugin / "scripts" / script), "--help"],
                              capture_output=True, text=True, timeout=120, cwd=cwd,
                              env={**os.environ, "PYTHONPATH": ""})
        assert proc.returncode == 0, (script, proc.stderr)
    sample = cwd / "sample"
    sample.mkdir(exist_ok=True)
    (sample / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    proc = subprocess.run([sys.executable, str(plugin / "scripts" / "scan_cuda_apis.py"), str(sample),
                           "--format", "json", "--no-cache"], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": ""})
    assert proc.returncode in (0, 1), proc.stderr
    assert any(f["path"].endswith("train.py") for f in json.loads(proc.stdout)["findings"])


def test_local_folder_and_git_url_install_the_same_real_files(claude_cli, published, git_url, tmp_path,
                                                              agentskills):
    from_folder = _install(_fresh_cli(claude_cli, tmp_path, "home-folder"), str(published))
    from_git = _install(_fresh_cli(claude_cli, tmp_path, "home-git"), git_url)
    folder_files, git_files = _files(from_folder), _files(from_git)
    assert folder_files.keys() == git_files.keys(), folder_files.keys() ^ git_files.keys()
    assert [k for k in folder_files if folder_files[k] != git_files[k]] == []
    for part in (".claude-plugin/plugin.json", "skills/cuda-to-npu/SKILL.md", "scripts/scan_cuda_apis.py",
                 "references/rules.md", "templates/README.md", "src/ascend_migrate/__init__.py"):
        assert part in folder_files, part
    assert sum(map(len, folder_files.values())) < MAX_INSTALL_BYTES
    _validate_directory_profile(claude_cli, from_folder)
    for name in SKILLS:
        proc = subprocess.run([agentskills, "validate", str(from_folder / "skills" / name)],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    _scripts_run(from_folder, tmp_path)


def test_copies_that_keep_links_and_checkouts_without_links_load_every_skill(claude_cli, published, tmp_path):
    kept = tmp_path / "cp-a"
    shutil.copytree(published, kept, symlinks=True)  # what `cp -a` does with links
    no_links = tmp_path / "no-symlinks"
    _git("clone", "-q", "-c", "core.symlinks=false", str(published), str(no_links), cwd=tmp_path)
    for copy in (kept, no_links):
        _validate_directory_profile(claude_cli, copy)
        _scripts_run(copy, tmp_path)


def test_developer_state_stays_outside_the_checkout():
    """`make` keeps virtual environments, test downloads and byte-code outside the checkout, so a
    local-folder install of a working checkout copies only the project's files."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    proc = subprocess.run([make, "-s", "-C", str(REPO), "where"], capture_output=True, text=True, timeout=60,
                          # the user's cache folder, not the one the suite points XDG_CACHE_HOME at
                          env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS",
                                                                                  "XDG_CACHE_HOME")})
    assert proc.returncode == 0, proc.stderr
    dev_dir = Path(proc.stdout.strip())
    assert dev_dir.is_absolute() and REPO.resolve() not in [dev_dir, *dev_dir.parents], dev_dir
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    for variable in ("VENV ?= $(DEV_DIR)", "OLDEST_VENV ?= $(DEV_DIR)", "ASCEND_MIGRATE_TEST_CACHE ?= $(DEV_DIR)",
                     "PYTHONPYCACHEPREFIX ?= $(DEV_DIR)"):
        assert variable in makefile, variable


# ------------------------------------------------------------- a skill copied on its own

FIRST_STEP = {
    # skill: (heading of the step after the install, what it must print, its exit status)
    "cuda-to-npu": ("1. Check the host (needs: an NPU; without one it says so in seconds)", "No NPU", 1),
    "npu-troubleshooting": ("Triage loop", "No NPU", 1),
    "npu-training": ("The tools (needs: Python 3.9+, the package index)", "No NPU", 1),
}


@pytest.fixture(scope="module")
def pip_env() -> dict[str, str]:
    """pip settings for the installs a skill runs: a shared download cache only."""
    cache = cache_dir() / "pip"
    cache.mkdir(parents=True, exist_ok=True)
    return {"PIP_CACHE_DIR": str(cache), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


@pytest.mark.parametrize("name", SKILLS)
def test_skill_folder_alone_runs_its_first_step(name, tmp_path, pip_env):
    home = tmp_path / "home"
    skill_dir = home / ".claude" / "skills" / name
    shutil.copytree(REPO / "skills" / name, skill_dir)
    env = agent_env(home, pip_env)
    blocks = shell_blocks(skill_dir / "SKILL.md")
    install = blocks[0]
    assert "pip install" in install.code and "${CLAUDE_SKILL_DIR}/tools/" in install.code, install
    proc = run_block(install, cwd=tmp_path, env=env, skill_dir=skill_dir, timeout=600)
    if proc.returncode != 0 and "No matching distribution" in proc.stderr:
        unavailable(f"package index unreachable for the skill's install step:\n{proc.stderr[-1500:]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    heading, expected, status = FIRST_STEP[name]
    step = next(b for b in blocks[1:] if "ascend-migrate check" in b.code)
    assert step.heading == heading, step.heading
    proc = run_block(step, cwd=tmp_path, env=env, skill_dir=skill_dir, timeout=300)
    assert proc.returncode == status, proc.stdout + proc.stderr
    assert expected in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
