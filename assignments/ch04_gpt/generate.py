"""Section 4.7: generating text, one greedily chosen token at a time."""
import torch


def generate_text_simple(model, idx, max_new_tokens, context_size):
    """Listing 4.8: append ``max_new_tokens`` tokens to ``idx``, each the most likely next one.

    ``idx``: (batch, num_tokens) token ids. In each of ``max_new_tokens`` steps: feed the
    model the last ``context_size`` tokens of the sequence so far (all of them if there are
    fewer), without gradients; take the logits of the *last* position, (batch, vocab_size);
    the next token is their argmax (softmax first, as the book does, changes nothing);
    append it. Returns a new (batch, num_tokens + max_new_tokens) tensor of ids that starts
    with ``idx``; ``idx`` itself is left unchanged. The model is called exactly
    ``max_new_tokens`` times; putting it in eval mode is the caller's job, as in the book.
    """
    raise NotImplementedError("generate_text_simple: replace this line with your code")
