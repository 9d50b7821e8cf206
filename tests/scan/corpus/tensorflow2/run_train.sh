#!/bin/bash
export TF_FORCE_GPU_ALLOW_GROWTH=true  # expect: TF015
export TF_XLA_FLAGS=--tf_xla_auto_jit=2  # expect: TF015
python train_keras.py
