#!/bin/bash
pip install torch torchvision --index-url https://download.pytorch.org/whl/cu121  # expect: PK003
pip install "torch==2.2.0+cu121" -f https://download.pytorch.org/whl/torch_stable.html  # expect: PK003
pip install torch==2.2.0 --index-url https://download.pytorch.org/whl/cpu  # expect: none
pip install torch_npu==2.2.0  # expect: none
pip install deepspeed  # expect: none
