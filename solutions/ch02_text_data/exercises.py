"""The chapter's exercises 2.1 and 2.2."""
import tiktoken

from data_sampling import create_dataloader_v1


def bpe_pieces(text):
    """Exercise 2.1: ``(integers, pieces, text_back)`` for ``text`` under tiktoken's GPT-2
    encoding: its token ids, the decoded text of each id on its own (a list of str), and the
    decoding of all the ids together. ``"Akwirw ier"`` gives ``[33901, 86, 343, 86, 220, 959]``,
    ``['Ak', 'w', 'ir', 'w', ' ', 'ier']`` and ``"Akwirw ier"`` again."""
    ### BEGIN SOLUTION
    tokenizer = tiktoken.get_encoding("gpt2")
    integers = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    pieces = [tokenizer.decode([i]) for i in integers]
    return integers, pieces, tokenizer.decode(integers)
    ### END SOLUTION


def first_batch(txt, batch_size, max_length, stride):
    """Exercise 2.2: the first ``(inputs, targets)`` batch of your ``create_dataloader_v1`` on
    ``txt`` with these settings, not shuffled (try ``max_length=2, stride=2`` and
    ``max_length=8, stride=2`` with a batch of 4)."""
    ### BEGIN SOLUTION
    dataloader = create_dataloader_v1(txt, batch_size=batch_size, max_length=max_length, stride=stride,
                                      shuffle=False)
    inputs, targets = next(iter(dataloader))
    return inputs, targets
    ### END SOLUTION
