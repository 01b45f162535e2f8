"""A small network with dropout, and files as text, for appendix A's public tests and grader alike.

The training loop, the accuracy and saving and loading take any model: the checks hand your
functions ``StandInNetwork`` (the grader's weights, dropout on) instead of your own
``NeuralNetwork``, so a mistake in the network costs nothing there. ``file_hex`` and
``write_hex`` carry a file's bytes as text, and ``state_dict_from_hex`` reads a state dict from
them with ``torch.load(..., weights_only=True)``: the grader reads the file you saved, and writes
the file you load, itself.
"""
import io
import os

import torch


class StandInNetwork(torch.nn.Module):
    """``layers``: ``Linear(num_inputs, num_hidden)``, ``ReLU()``, ``Dropout(drop_rate)``,
    ``Linear(num_hidden, num_outputs)``; ``forward(x)`` returns the logits."""

    def __init__(self, num_inputs, num_hidden, num_outputs, drop_rate):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(num_inputs, num_hidden), torch.nn.ReLU(),
                                          torch.nn.Dropout(drop_rate), torch.nn.Linear(num_hidden, num_outputs))

    def forward(self, x):
        return self.layers(x)


def file_hex(path) -> str:
    """The bytes of the file at ``path`` as hexadecimal text; the file is removed."""
    with open(path, "rb") as f:
        data = f.read()
    os.remove(path)
    return data.hex()


def write_hex(path, text) -> None:
    """Write the bytes of the hexadecimal ``text`` to ``path``."""
    with open(path, "wb") as f:
        f.write(bytes.fromhex(text))


def state_dict_from_hex(text) -> dict:
    """The state dict whose ``torch.save`` file has the bytes of ``text``, read with
    ``weights_only=True``: {name: tensor}."""
    loaded = torch.load(io.BytesIO(bytes.fromhex(text)), weights_only=True)
    if not isinstance(loaded, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                               for k, v in loaded.items()):
        raise TypeError(f"the file holds a {type(loaded).__name__}, not a state dict of named tensors")
    return {k: v.detach().clone() for k, v in loaded.items()}
