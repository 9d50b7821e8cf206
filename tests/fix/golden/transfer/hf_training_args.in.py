from dataclasses import dataclass, field

from transformers import TrainingArguments


@dataclass
class Args:
    tf32: bool = field(default=True)
    optim: str = field(default="paged_adamw_32bit")


def make_args():
    return TrainingArguments(output_dir="out", bf16=True, tf32=True, optim="adamw_torch")
