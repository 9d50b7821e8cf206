"""Device notes for a PyTorch trainer. TensorFlow users would write "/gpu:0" for the first card;
here the same card is chosen with torch.device. No TensorFlow import: the names below are text."""
import torch  # expect: none

TF_STYLE = "/gpu:0"  # expect: none
LABELS = {"/gpu:1": "second card"}  # expect: none


def label(index):
    return "/gpu:%d" % index  # expect: none


def device(index):
    return torch.device("cpu", index)  # expect: none
