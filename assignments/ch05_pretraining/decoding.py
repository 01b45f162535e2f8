"""Section 5.3: decoding strategies that control randomness: temperature scaling and top-k sampling."""
import torch


def softmax_with_temperature(logits, temperature):
    """Section 5.3.1: the softmax of ``logits / temperature`` over the last dimension.

    ``temperature`` > 0: above 1 flattens the distribution, below 1 sharpens it."""
    raise NotImplementedError("softmax_with_temperature: replace this line with your code")


def print_sampled_tokens(probas, inverse_vocab=None):
    """Section 5.3.1 (and exercise 5.1): how often each token is drawn in 1,000 samples from
    ``probas`` (a 1-D tensor of probabilities), drawn as the book does: ``torch.manual_seed(123)``,
    then 1,000 calls of ``torch.multinomial(probas, num_samples=1)``, one token each.

    Prints one line per token, ``{count} x {inverse_vocab[i]}`` (the id where ``inverse_vocab``
    is None), and returns the counts: an int64 tensor of ``len(probas)`` entries (zeros
    included) that sums to 1,000."""
    raise NotImplementedError("print_sampled_tokens: replace this line with your code")


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    """Listing 5.4: append up to ``max_new_tokens`` tokens to ``idx`` ((batch, num_tokens) ids).

    Each step, without gradients: the model's logits at the last position for the last
    ``context_size`` tokens; with ``top_k`` (used, and graded, on a batch of one, as the book's
    listing samples), every logit below the k-th largest becomes -inf;
    with ``temperature`` > 0, the next token is drawn with ``torch.multinomial(probs, num_samples=1)``
    from the softmax of the logits divided by the temperature; otherwise (temperature 0) it is
    the argmax. Where the next token is ``eos_id`` (a batch of one), generation stops before
    appending it. Returns a new tensor: ``idx`` followed by the new tokens (``idx`` itself is
    left unchanged). The model's mode is left as it is.
    """
    raise NotImplementedError("generate: replace this line with your code")
