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
    ### BEGIN SOLUTION
    x = token_ids[:context_size]
    y = token_ids[1:context_size + 1]
    return x, y
    ### END SOLUTION


def next_word_pairs(token_ids, context_size):
    """The next-word prediction tasks of the first ``context_size + 1`` ids: a list of
    ``(context, desired)`` for ``i = 1 .. context_size``, where ``context`` is the list of the
    first ``i`` ids and ``desired`` the id that follows them (``[290] ----> 4920`` first)."""
    ### BEGIN SOLUTION
    pairs = []
    for i in range(1, context_size + 1):
        context = token_ids[:i]
        desired = token_ids[i]
        pairs.append((context, desired))
    return pairs
    ### END SOLUTION


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
        ### BEGIN SOLUTION
        self.input_ids = []
        self.target_ids = []
        token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        for i in range(0, len(token_ids) - max_length, stride):
            input_chunk = token_ids[i:i + max_length]
            target_chunk = token_ids[i + 1:i + max_length + 1]
            self.input_ids.append(torch.tensor(input_chunk))
            self.target_ids.append(torch.tensor(target_chunk))
        ### END SOLUTION

    def __len__(self):
        ### BEGIN SOLUTION
        return len(self.input_ids)
        ### END SOLUTION

    def __getitem__(self, idx):
        ### BEGIN SOLUTION
        return self.input_ids[idx], self.target_ids[idx]
        ### END SOLUTION


def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True,
                         num_workers=0):
    """Listing 2.6: a ``DataLoader`` over ``GPTDatasetV1(txt, <GPT-2 tokenizer>, max_length,
    stride)`` that passes ``batch_size``, ``shuffle``, ``drop_last`` and ``num_workers`` on.
    Each batch is ``[inputs, targets]``, two tensors of shape ``(batch_size, max_length)``.
    Shuffled batches follow ``torch.manual_seed`` (the ``DataLoader``'s own sampler: no
    generator of your own)."""
    ### BEGIN SOLUTION
    tokenizer = tiktoken.get_encoding("gpt2")
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                      num_workers=num_workers)
    ### END SOLUTION
