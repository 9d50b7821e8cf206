"""torch_npu.contrib of the stand-in: only transfer_to_npu."""
