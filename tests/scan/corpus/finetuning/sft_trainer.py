"""A supervised fine-tuning script in the shape Hugging Face trainers take."""
from dataclasses import dataclass, field

import torch
import transformers
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments

try:
    from apex.optimizers import FusedAdam  # expect: PK002:warning
except ImportError:
    FusedAdam = torch.optim.AdamW


@dataclass
class TrainArgs(transformers.TrainingArguments):
    optim: str = field(default="paged_adamw_32bit")  # expect: HF001
    cache_dir: str = field(default=None)  # expect: none
    lr_scheduler_type: str = field(default="cosine")  # expect: none


@dataclass
class OtherArgs(transformers.TrainingArguments):
    optim: str = field(default="adamw_torch")  # expect: none
    use_liger_kernel: bool = field(default=False)  # expect: none


def build(name, bits):
    quant = BitsAndBytesConfig(  # expect: HF003
        load_in_4bit=True,  # expect: HF001
        bnb_4bit_compute_dtype=torch.bfloat16,  # expect: none
    )
    plain = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16)  # expect: none
    eightbit = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True)  # expect: HF001
    by_arg = AutoModelForCausalLM.from_pretrained(name, load_in_4bit=bits == 4)  # expect: none
    off = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=False)  # expect: none
    sdpa = AutoModelForCausalLM.from_pretrained(name, attn_implementation="sdpa")  # expect: none
    return quant, plain, eightbit, by_arg, off, sdpa


def arguments():
    fast = TrainingArguments(output_dir="out", bf16=True, tf32=True)  # expect: HF004
    slow = TrainingArguments(output_dir="out", fp16=True, tf32=False)  # expect: none
    bnb = TrainingArguments(output_dir="out", optim="adamw_bnb_8bit")  # expect: HF001
    torch_opt = TrainingArguments(output_dir="out", optim="adamw_torch_fused")  # expect: none
    liger = TrainingArguments(output_dir="out", use_liger_kernel=True)  # expect: HF006
    ddp = TrainingArguments(output_dir="out", ddp_backend=None)  # expect: none
    return fast, slow, bnb, torch_opt, liger, ddp


class Collator(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return model(**inputs).loss  # expect: none
