"""A script users run that other files also import gets the transfer imports under a `__name__`
test: started as a program (and in its spawned workers) it loads transfer_to_npu; imported, it
needs no torch_npu. Plain entry points keep the unconditional imports.

The behaviour is checked by running the port with stand-in `torch` / `torch_npu` packages that
record what was imported, so the test needs neither torch nor an NPU.
"""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from ascend_migrate.cli import cli

TREE = {
    # launched by the README and imported by train.py: a script that is also a library
    "evaluate.py": (
        "import multiprocessing as mp\n"
        "import sys\n"
        "import torch\n"
        "\n"
        "\n"
        "def score(model):\n"
        "    return model.cuda()\n"
        "\n"
        "\n"
        "def worker(path):\n"
        "    with open(path, 'a') as fh:\n"
        "        fh.write('worker ' + str('torch_npu.contrib.transfer_to_npu' in sys.modules) + '\\n')\n"
        "\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    out = sys.argv[1]\n"
        "    with open(out, 'a') as fh:\n"
        "        fh.write('main ' + str('torch_npu.contrib.transfer_to_npu' in sys.modules) + '\\n')\n"
        "    p = mp.get_context('spawn').Process(target=worker, args=(out,))\n"
        "    p.start()\n"
        "    p.join()\n"
    ),
    "train.py": (
        "import torch\n"
        "import evaluate\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    evaluate.score(torch.nn.Linear(2, 2).cuda())\n"
    ),
    "README.md": "Run:\n\n```sh\npython train.py\npython evaluate.py\n```\n",
}

STUBS = {
    "torch/__init__.py": "",
    "torch_npu/__init__.py": "",
    "torch_npu/contrib/__init__.py": "",
    "torch_npu/contrib/transfer_to_npu.py": "",
}


def _write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _port(tmp_path: Path) -> Path:
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, TREE)
    res = CliRunner().invoke(cli, ["migrate", str(src), "--output", str(out), "-q"])
    assert res.exit_code == 0, res.output
    return out


def _transfer_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "torch_npu.contrib"]


def test_the_scan_marks_the_imported_entry_point(tmp_path):
    _write(tmp_path, TREE)
    res = CliRunner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "--no-cache"])
    data = json.loads(res.output)
    assert {e["path"]: e["guarded"] for e in data["entry_points"]} == {"evaluate.py": True, "train.py": False}
    assert "also imported by train.py" in next(e["reason"] for e in data["entry_points"] if e["path"] == "evaluate.py")


def test_imports_go_under_a_name_test_only_where_others_import_the_file(tmp_path):
    out = _port(tmp_path)
    evaluate = ast.parse((out / "evaluate.py").read_text())
    [guarded] = [s for s in evaluate.body if isinstance(s, ast.If) and _transfer_imports(s)]
    assert ast.unparse(guarded.test) == "__name__ in ('__main__', '__mp_main__')"
    assert len(_transfer_imports(evaluate)) == 1
    train = ast.parse((out / "train.py").read_text())
    assert [type(s).__name__ for s in train.body[:2]] == ["Import", "ImportFrom"]  # unconditional, first


def test_run_as_a_program_and_in_spawned_workers_but_not_on_import(tmp_path):
    out = _port(tmp_path)
    stubs = tmp_path / "stubs"
    _write(stubs, STUBS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stubs), str(out)])}
    log = tmp_path / "log.txt"
    subprocess.run([sys.executable, str(out / "evaluate.py"), str(log)], env=env, check=True, cwd=out, timeout=120)
    assert log.read_text().splitlines() == ["main True", "worker True"]
    probe = ("import sys, evaluate; print('torch_npu' in sys.modules, "
             "'torch_npu.contrib.transfer_to_npu' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=out, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "False"]


def test_a_second_migrate_changes_nothing(tmp_path):
    out = _port(tmp_path)
    changes = tmp_path / "again"
    res = CliRunner().invoke(cli, ["migrate", str(out), "-q", "--changes", str(changes)])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "again.json").read_text())
    assert data["changes"] == []


def _entries(tmp_path: Path, files: dict) -> dict:
    _write(tmp_path, files)
    res = CliRunner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "--no-cache"])
    return {e["path"]: e for e in json.loads(res.output)["entry_points"]}


LAUNCHED = "import torch\n\ndef build():\n    return torch.nn.Linear(2, 2).cuda()\n\nif __name__ == '__main__':\n    build()\n"


def test_an_importer_that_is_not_an_entry_point_keeps_the_imports_unconditional(tmp_path):
    """A test or a validation entry imports the script and runs its CUDA calls: without the
    imports at import time they would run unpatched, so nothing is guarded."""
    got = _entries(tmp_path, {
        "train.py": LAUNCHED,
        "validation_entry.py": "from train import build\n\ndef validation_entry():\n    return build(), ()\n",
        "tests/test_train.py": "from train import build\n\ndef test_build():\n    build()\n",
        "README.md": "```sh\npython train.py\n```\n",
    })
    assert got["train.py"]["guarded"] is False
    assert "imports unconditional: tests/test_train.py, validation_entry.py import it" in got["train.py"]["reason"]


def test_a_script_a_package_main_imports_keeps_the_imports_unconditional(tmp_path):
    """`python -m pkg` runs pkg/__main__.py; spawn workers do not re-run a package __main__, so
    a guard in the module it imports would be false there."""
    got = _entries(tmp_path, {
        "pyproject.toml": '[project]\nname = "pkg"\n',
        "pkg/__init__.py": "",
        "pkg/__main__.py": "from pkg.train import main\nmain()\n",
        "pkg/train.py": "import argparse\nimport torch\n\ndef main():\n    argparse.ArgumentParser().parse_args()\n"
                        "    torch.ones(1).cuda()\n\nif __name__ == '__main__':\n    main()\n",
        "README.md": "```sh\npython -m pkg\npython -m pkg.train --help\n```\n",
    })
    assert got["pkg/__main__.py"]["guarded"] is False
    assert got["pkg/train.py"]["guarded"] is False
    assert "pkg/__main__.py import it" in got["pkg/train.py"]["reason"]


def test_a_package_init_chosen_as_an_entry_point_is_never_guarded(tmp_path):
    got = _entries(tmp_path, {
        "pyproject.toml": '[project]\nname = "pkg"\n',
        "pkg/__init__.py": "import torch\n\ndef setup():\n    torch.zeros(1).cuda()\n\nsetup()\n",
    })
    assert got["pkg/__init__.py"]["guarded"] is False


# A package whose __init__ imports a helper users also run (`python -m shapes.publish`), and a flat
# project whose data module (also run on its own) is imported by the loader module the trainer uses.
LIBRARY_TREE = {
    "pyproject.toml": '[project]\nname = "shapes"\n',
    "shapes/__init__.py": "from shapes.publish import publish\n",
    "shapes/publish.py": (
        "import argparse\n"
        "import sys\n"
        "import torch\n"
        "\n"
        "\n"
        "def publish(t):\n"
        "    return t.cuda()\n"
        "\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    argparse.ArgumentParser().parse_args()\n"
        "    print('publish', 'torch_npu.contrib.transfer_to_npu' in sys.modules)\n"
    ),
    "data.py": (
        "import argparse\n"
        "import sys\n"
        "import torch\n"
        "\n"
        "\n"
        "def load_shard(path):\n"
        "    with open(path, 'a') as fh:\n"
        "        fh.write('worker ' + str('torch_npu.contrib.transfer_to_npu' in sys.modules) + '\\n')\n"
        "\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    argparse.ArgumentParser().parse_args()\n"
        "    torch.ones(1).cuda()\n"
    ),
    "loader.py": "from data import load_shard\n\n\ndef shard_loader():\n    return load_shard\n",
    "train.py": (
        "import multiprocessing as mp\n"
        "import sys\n"
        "import torch\n"
        "from loader import shard_loader\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    out = sys.argv[1]\n"
        "    with open(out, 'a') as fh:\n"
        "        fh.write('main ' + str('torch_npu.contrib.transfer_to_npu' in sys.modules) + '\\n')\n"
        "    p = mp.get_context('spawn').Process(target=shard_loader(), args=(out,))\n"
        "    p.start()\n"
        "    p.join()\n"
    ),
    "README.md": "```sh\npython -m shapes.publish\npython data.py\npython train.py log.txt\n```\n",
}


def test_an_entry_point_a_library_module_imports_keeps_the_guard(tmp_path):
    got = _entries(tmp_path, LIBRARY_TREE)
    assert got["shapes/publish.py"]["guarded"] is True
    assert "library module(s) shapes/__init__.py import it" in got["shapes/publish.py"]["reason"]
    assert got["data.py"]["guarded"] is True
    assert "library module(s) loader.py import it" in got["data.py"]["reason"]
    assert got["train.py"]["guarded"] is False


def test_importing_a_library_loads_no_torch_npu_and_every_program_does(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    _write(src, LIBRARY_TREE)
    res = CliRunner().invoke(cli, ["migrate", str(src), "--output", str(out), "-q"])
    assert res.exit_code == 0, res.output
    stubs = tmp_path / "stubs"
    _write(stubs, STUBS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stubs), str(out)])}
    probe = ("import sys, shapes, loader; print('torch_npu' in sys.modules, "
             "'torch_npu.contrib.transfer_to_npu' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=out, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "False"]
    res = subprocess.run([sys.executable, "-m", "shapes.publish"], env=env, capture_output=True, text=True,
                         cwd=out, timeout=60)
    assert res.stdout.split() == ["publish", "True"], res.stderr
    log = tmp_path / "log.txt"
    subprocess.run([sys.executable, str(out / "train.py"), str(log)], env=env, check=True, cwd=out, timeout=120)
    assert log.read_text().splitlines() == ["main True", "worker True"]


def test_a_validation_module_inside_the_package_is_a_program_not_a_library(tmp_path):
    """`pkg/validation.py` that nothing imports is run by `validate`, like a test: the script it
    imports keeps unconditional imports; `pkg/__init__.py` importing the script would guard it."""
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\n',
        "pkg/__init__.py": '"""pkg."""\n',
        "pkg/train.py": "import argparse\nimport torch\n\ndef train():\n    return torch.ones(1).cuda()\n\n"
                        "if __name__ == '__main__':\n    argparse.ArgumentParser().parse_args()\n    train()\n",
        "pkg/validation.py": "from pkg.train import train\n\ndef train_steps():\n    return {'losses': [float(train())]}\n",
        "README.md": "```sh\npython -m pkg.train\n```\n",
    }
    got = _entries(tmp_path / "a", files)
    assert got["pkg/train.py"]["guarded"] is False
    assert "pkg/validation.py import it and get none of their own" in got["pkg/train.py"]["reason"]
    got = _entries(tmp_path / "b", {**files, "pkg/__init__.py": "from pkg.train import train\n"})
    assert got["pkg/train.py"]["guarded"] is True


CONSOLE_FIXTURE = Path(__file__).parents[1] / "scan" / "entry_fixtures" / "console_module_imported_by_package_init"


def test_a_console_script_module_the_package_imports_gets_the_imports_in_its_command_function(tmp_path):
    """`import speechkit` imports the module behind the `speechkit` command: module-level imports
    there would load torch_npu for every user of the library. They go into the function the
    command calls instead, so the command loads transfer_to_npu first and the import loads none."""
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["migrate", str(CONSOLE_FIXTURE), "--output", str(out), "-q"])
    assert res.exit_code == 0, res.output
    module = ast.parse((out / "speechkit" / "transcribe.py").read_text())
    command = next(s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == "command")
    assert len(_transfer_imports(module)) == 1 and len(_transfer_imports(command)) == 1
    assert [type(s).__name__ for s in command.body[1:3]] == ["Import", "ImportFrom"]  # after the docstring
    stubs = tmp_path / "stubs"
    _write(stubs, {**STUBS, "torch/__init__.py": "class cuda:\n    is_available = staticmethod(lambda: False)\n"
                                                 "def as_tensor(x, device=None):\n    return x\n"})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stubs), str(out)])}
    probe = "import sys, speechkit; print('torch_npu' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=out, timeout=60)
    assert res.stdout.split() == ["False"], res.stderr
    # what the generated `speechkit` wrapper does: import the module, call the function
    wrapper = ("import sys\nfrom speechkit.transcribe import command\nsys.argv = ['speechkit']\n"
               "try:\n    command()\nexcept Exception:\n    pass\n"
               "print('torch_npu.contrib.transfer_to_npu' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", wrapper], env=env, capture_output=True, text=True, cwd=out, timeout=60)
    assert res.stdout.split()[-1] == "True", res.stderr
    again = tmp_path / "again"
    res = CliRunner().invoke(cli, ["migrate", str(out), "-q", "--changes", str(again)])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "again.json").read_text())["changes"] == []
