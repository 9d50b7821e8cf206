"""Validation entries for ascend-migrate, added to an unmodified minGPT checkout.

The task: reverse a run of six digits. Each example is built from its index with its own
generator, so the data are the same on every host and need no download. The model is gpt-nano
with every dropout at 0, trained by minGPT's own Trainer (no loader workers)."""
import torch

from mingpt.model import GPT
from mingpt.trainer import Trainer

DIGITS, LENGTH = 10, 6


class ReverseDigits(torch.utils.data.Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        digits = torch.randint(DIGITS, (LENGTH,), generator=g)
        seq = torch.cat([digits, digits.flip(0)])
        x, y = seq[:-1].clone(), seq[1:].clone()
        y[:LENGTH - 1] = -1  # the prompt half is not scored
        return x, y

    def get_vocab_size(self):
        return DIGITS

    def get_block_size(self):
        return 2 * LENGTH - 1


def _model():
    data = ReverseDigits()
    config = GPT.get_default_config()
    config.model_type = "gpt-nano"
    config.vocab_size = data.get_vocab_size()
    config.block_size = data.get_block_size()
    config.embd_pdrop = config.resid_pdrop = config.attn_pdrop = 0.0
    return GPT(config), data


def _probe(data):
    return torch.stack([data[i][0] for i in range(4)])


def validation_entry(seed=0):
    model, data = _model()
    return model, (_probe(data),)


def train_steps(device="cpu", steps=4, seed=0):
    model, data = _model()
    config = Trainer.get_default_config()
    config.device, config.max_iters, config.batch_size, config.num_workers = device, steps, 16, 0
    trainer = Trainer(config, model, data)
    losses = []
    trainer.add_callback("on_batch_end", lambda t: losses.append(t.loss.item()))
    trainer.run()
    trainer.model.eval()
    with torch.no_grad():
        logits, _ = trainer.model(_probe(data).to(device))
    return {"losses": losses, "outputs": logits, "model": trainer.model}
