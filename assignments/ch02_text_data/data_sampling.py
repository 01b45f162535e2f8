"""Section 2.6: input-target pairs with a sliding window, a ``Dataset`` and a ``DataLoader``.

Keep ``import tiktoken`` here: ``create_dataloader_v1`` needs it, and the grader hands your
``GPTDatasetV1`` tiktoken's GPT-2 tokenizer through it.
"""
import tiktoken
import torch
from torch.utils.data import DataLoader, Dataset


def input_target_pair(token_ids, context_size):
    """``(x, y)``: the first ``context_size`` ids and the same window shifted by one (the
    targets), as lists. The Verdict's BPE ids from token 50 on with context 4 give
    ``x = [290, 4920, 2241, 287]`` and ``y = [4920, 2241, 287, 257]``."""
    raise NotImplementedError("input_target_pair: replace this line with your code")


def next_word_pairs(token_ids, context_size):
    """The next-word prediction tasks of the first ``context_size + 1`` ids: a list of
    ``(context, desired)`` for ``i = 1 .. context_size``, where ``context`` is the list of the
    first ``i`` ids and ``desired`` the id that follows them (``[290] ----> 4920`` first)."""
    raise NotImplementedError("next_word_pairs: replace this line with your code")


class GPTDatasetV1(Dataset):
    """Listing 2.5: windows of ``max_length`` token ids and their targets.

    Tokenizes ``txt`` once with ``tokenizer.encode(txt, allowed_special={"<|endoftext|>"})``
    (so a text holding ``<|endoftext|>`` gets the special id), then takes a window every
    ``stride`` ids: window k starts at ``k * stride``; its input is the ``max_length`` ids from
    there and its target the same window shifted by one. Every window whose target fits in
    the text is kept, the last full one included, and none past it (a text of ``max_length``
    ids or fewer gives none). ``len(dataset)`` is the number of windows and ``dataset[k]`` is
    ``(input_ids, target_ids)``, two int64 tensors of shape ``(max_length,)``.
    """

    def __init__(self, txt, tokenizer, max_length, stride):
        raise NotImplementedError("GPTDatasetV1.__init__: replace this line with your code")

    def __len__(self):
        raise NotImplementedError("GPTDatasetV1.__len__: replace this line with your code")

    def __getitem__(self, idx):
        raise NotImplementedError("GPTDatasetV1.__getitem__: replace this line with your code")


def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True,
                         num_workers=0):
    """Listing 2.6: a ``DataLoader`` over ``GPTDatasetV1(txt, <GPT-2 tokenizer>, max_length,
    stride)`` that passes ``batch_size``, ``shuffle``, ``drop_last`` and ``num_workers`` on.
    Each batch is ``[inputs, targets]``, two tensors of shape ``(batch_size, max_length)``.
    Shuffled batches follow ``torch.manual_seed`` (the ``DataLoader``'s own sampler: no
    generator of your own)."""
    raise NotImplementedError("create_dataloader_v1: replace this line with your code")
