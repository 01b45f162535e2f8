"""The chapter's exercises 2.1 and 2.2."""
import tiktoken

from data_sampling import create_dataloader_v1


def bpe_pieces(text):
    """Exercise 2.1: ``(integers, pieces, text_back)`` for ``text`` under tiktoken's GPT-2
    encoding: its token ids, the decoded text of each id on its own (a list of str), and the
    decoding of all the ids together. ``"Akwirw ier"`` gives ``[33901, 86, 343, 86, 220, 959]``,
    ``['Ak', 'w', 'ir', 'w', ' ', 'ier']`` and ``"Akwirw ier"`` again."""
    raise NotImplementedError("bpe_pieces: replace this line with your code")


def first_batch(txt, batch_size, max_length, stride):
    """Exercise 2.2: the first ``(inputs, targets)`` batch of your ``create_dataloader_v1`` on
    ``txt`` with these settings, not shuffled (try ``max_length=2, stride=2`` and
    ``max_length=8, stride=2`` with a batch of 4)."""
    raise NotImplementedError("first_batch: replace this line with your code")
