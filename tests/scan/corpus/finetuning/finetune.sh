#!/bin/bash
# Alpaca-style launch lines, one option set per line
torchrun --nproc_per_node=4 train.py --model_name_or_path org/base-7b --bf16 True --tf32 True  # expect: HF005
torchrun --nproc_per_node=4 train.py --optim paged_adamw_32bit  # expect: HF002
python qlora.py --load_in_4bit True --model_name_or_path org/base-7b  # expect: HF002
python qlora.py --load_in_8bit --output_dir out  # expect: HF002
accelerate launch sft.py --use_liger_kernel True  # expect: HF007
python train.py --tf32 False --optim adamw_torch --load_in_8bit False --bf16 True --fp16 False  # expect: none
python train.py --optim adamw_torch_fused --ddp_backend hccl  # expect: none
python train.py --use_liger_kernel False  # expect: none
echo "add --tf32 True on an A100"  # expect: none
