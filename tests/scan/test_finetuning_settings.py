"""What fine-tuning projects switch on through library options, recipes and launch lines:
the transformers pin decides flash_attention_2, README install steps are read, the job
scheduler's scripts are shell scripts, and both migrate styles list the same manual items."""
from __future__ import annotations

from pathlib import Path

from ascend_migrate.fix.api import migrate
from ascend_migrate.scan.api import scan
from ascend_migrate.scan.engine import classify, pinned_ceiling

LOADER = '''from transformers import AutoModelForCausalLM


def load(name):
    return AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")
'''


def _rules(root: Path) -> list[tuple[str, int, str]]:
    return sorted((f.path, f.line, f.rule) for f in scan(root, use_cache=False).findings if f.rule != "FW001")


def _project(tmp_path: Path, pin: str | None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "load.py").write_text(LOADER)
    if pin is not None:
        (tmp_path / "requirements.txt").write_text(pin + "\naccelerate\n")
    return tmp_path


def test_flash_attention_2_reported_only_under_a_transformers_pin_without_the_npu_path(tmp_path):
    assert ("load.py", 5, "HF008") in _rules(_project(tmp_path / "old", "transformers==4.40.0"))
    assert ("load.py", 5, "HF008") in _rules(_project(tmp_path / "below", "transformers>=4.36,<4.48"))
    assert not [r for r in _rules(_project(tmp_path / "new", "transformers>=4.51.0")) if r[2] == "HF008"]
    assert not [r for r in _rules(_project(tmp_path / "none", None)) if r[2] == "HF008"]


def test_pinned_ceiling_reads_the_upper_bound():
    assert pinned_ceiling(["transformers==4.40.0"], "transformers") < (4, 51, 0, 0)
    assert pinned_ceiling(['    "transformers<4.51",'], "transformers") < (4, 51, 0, 0)
    assert pinned_ceiling(["transformers>=4.36"], "transformers") is None
    assert pinned_ceiling(["transformers @ git+https://example.org/t.git"], "transformers") is None


def test_manual_flash_attention_item_follows_the_scan(tmp_path):
    root = _project(tmp_path, None)
    for style in ("transfer", "agnostic"):
        assert not [c for c in migrate(root, style=style).manual if c.rule == "HF008"]


def test_readme_code_blocks_are_read_for_install_and_launch_steps(tmp_path):
    (tmp_path / "README.md").write_text(
        "# Fine-tune\n\n```bash\npip install -r requirements.txt\npip install flash-attn --no-build-isolation\n"
        "torchrun --nproc_per_node=8 train.py --tf32 True\n```\n\nPass --tf32 True on an A100.\n\n"
        "```python\nimport bitsandbytes\n```\n")
    found = [f for f in scan(tmp_path, use_cache=False).findings if f.path == "README.md"]
    assert sorted((f.line, f.rule) for f in found) == [(5, "HF010"), (6, "HF005")]
    assert all(f.confidence == "low" and f.severity == "warning" and not f.fixes for f in found)


def test_readme_launch_lines_are_read_for_bitsandbytes_and_liger_flags(tmp_path):
    (tmp_path / "README.md").write_text(
        "# Recipes\n\n```bash\naccelerate launch sft.py --use_liger_kernel true \\\n    --optim paged_adamw_32bit\n"
        "accelerate launch sft.py --use_liger_kernel false --optim adamw_torch\n```\n\n"
        "Pass `--optim paged_adamw_32bit` or `--use_liger_kernel true` to save memory.\n")
    found = [f for f in scan(tmp_path, use_cache=False).findings if f.path == "README.md"]
    assert sorted((f.line, f.rule) for f in found) == [(4, "HF007"), (5, "HF002")]
    assert all(f.confidence == "low" and f.severity == "warning" and not f.fixes for f in found)


def test_job_scheduler_scripts_are_shell_scripts(tmp_path):
    for name in ("run.slurm", "run.sbatch", "job.pbs"):
        job = classify(name)
        assert job is not None and job.kind == "config" and job.config_kind == "sh"
    (tmp_path / "run.sbatch").write_text("#!/bin/bash\n#SBATCH --gres=gpu:4\nsrun python train.py --tf32 True\n")
    assert _rules(tmp_path) == [("run.sbatch", 2, "HF009"), ("run.sbatch", 3, "HF005")]


def test_both_styles_list_the_same_manual_items(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\nfrom transformers import TrainingArguments\n\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
        "args = TrainingArguments(output_dir='o', optim='paged_adamw_32bit', tf32=True, use_liger_kernel=True)\n")
    manual = {style: sorted((c.file, c.start_line, c.rule) for c in migrate(tmp_path, style=style).manual)
              for style in ("transfer", "agnostic")}
    assert manual["transfer"] == manual["agnostic"]
    assert ("train.py", 4, "PR001") in manual["agnostic"]
    assert ("train.py", 5, "HF001") in manual["agnostic"] and ("train.py", 5, "HF006") in manual["agnostic"]
