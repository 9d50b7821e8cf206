"""torch_npu.contrib of the emulated npu: only transfer_to_npu."""
