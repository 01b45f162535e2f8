"""Public tests for exercises 2.1 and 2.2."""
import torch

from exercises import bpe_pieces, first_batch
from simple_tokenizer import read_verdict


def test_2_1_unknown_words_become_subword_pieces(gpt2):
    integers, pieces, text_back = bpe_pieces("Akwirw ier")
    assert list(integers) == [33901, 86, 343, 86, 220, 959]
    assert list(pieces) == ["Ak", "w", "ir", "w", " ", "ier"]
    assert text_back == "Akwirw ier"


def test_2_2_other_strides_and_context_sizes(gpt2):
    inputs, targets = first_batch(read_verdict(), batch_size=4, max_length=2, stride=2)
    assert torch.equal(inputs, torch.tensor([[40, 367], [2885, 1464], [1807, 3619], [402, 271]]))
    assert torch.equal(targets, torch.tensor([[367, 2885], [1464, 1807], [3619, 402], [271, 10899]]))
    inputs, targets = first_batch(read_verdict(), batch_size=4, max_length=8, stride=2)
    assert torch.equal(inputs[0], torch.tensor([40, 367, 2885, 1464, 1807, 3619, 402, 271]))
    assert torch.equal(inputs[3], torch.tensor([402, 271, 10899, 2138, 257, 7026, 15632, 438]))
    assert torch.equal(targets[:, :-1], inputs[:, 1:])
