"""Tests of a library's bitsandbytes integration: they run only where bitsandbytes is installed."""
import pytest
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

from testing_utils import is_bnb_available, require_bitsandbytes


@require_bitsandbytes
class TestFourBitAdapters:
    def test_load(self):
        config = BitsAndBytesConfig(load_in_4bit=True)  # expect: none
        return AutoModelForCausalLM.from_pretrained("org/tiny", quantization_config=config)


@pytest.mark.skipif(not is_bnb_available(), reason="bitsandbytes is not installed")
def test_eight_bit_load():
    return AutoModelForCausalLM.from_pretrained("org/tiny", load_in_8bit=True)  # expect: none


@pytest.mark.single_gpu_tests
def test_eight_bit_without_the_marker():
    return AutoModelForCausalLM.from_pretrained("org/tiny", load_in_8bit=True)  # expect: HF001
