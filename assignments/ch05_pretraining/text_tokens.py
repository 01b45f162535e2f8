"""Section 5.1.1: from text to token ids and back, with tiktoken's GPT-2 tokenizer."""
import tiktoken  # noqa: F401  (keep it: the grader hands your functions GPT-2's tokenizer through it)
import torch


def text_to_token_ids(text, tokenizer):
    """Listing 5.1: the ids of ``text`` as a batch of one, a (1, num_tokens) tensor of int64.

    ``tokenizer``: tiktoken's GPT-2 encoding (``tiktoken.get_encoding("gpt2")``). The text may
    hold ``<|endoftext|>``, encoded as its one special token (id 50256), as the book allows it.
    """
    raise NotImplementedError("text_to_token_ids: replace this line with your code")


def token_ids_to_text(token_ids, tokenizer):
    """Listing 5.1: the text of a (1, num_tokens) tensor of ids (a batch of one; a 1-D tensor of
    ids reads the same), decoded with ``tokenizer``."""
    raise NotImplementedError("token_ids_to_text: replace this line with your code")
