"""Section 5.3: decoding strategies that control randomness: temperature scaling and top-k sampling."""
import torch


def softmax_with_temperature(logits, temperature):
    """Section 5.3.1: the softmax of ``logits / temperature`` over the last dimension.

    ``temperature`` > 0: above 1 flattens the distribution, below 1 sharpens it."""
    ### BEGIN SOLUTION
    return torch.softmax(logits / temperature, dim=-1)
    ### END SOLUTION


def print_sampled_tokens(probas, inverse_vocab=None):
    """Section 5.3.1 (and exercise 5.1): how often each token is drawn in 1,000 samples from
    ``probas`` (a 1-D tensor of probabilities), drawn as the book does: ``torch.manual_seed(123)``,
    then 1,000 calls of ``torch.multinomial(probas, num_samples=1)``, one token each.

    Prints one line per token, ``{count} x {inverse_vocab[i]}`` (the id where ``inverse_vocab``
    is None), and returns the counts: an int64 tensor of ``len(probas)`` entries (zeros
    included) that sums to 1,000."""
    ### BEGIN SOLUTION
    torch.manual_seed(123)  # as the book draws them
    sample = [torch.multinomial(probas, num_samples=1).item() for _ in range(1_000)]
    counts = torch.bincount(torch.tensor(sample), minlength=len(probas))
    for i, count in enumerate(counts.tolist()):
        print(f"{count} x {inverse_vocab[i] if inverse_vocab is not None else i}")
    return counts
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            min_val = top_logits[:, -1:]
            logits = torch.where(logits < min_val, torch.tensor(float("-inf"), device=logits.device), logits)
        if temperature > 0.0:
            probs = torch.softmax(logits / temperature, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if eos_id is not None and idx_next.numel() == 1 and idx_next.item() == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
    ### END SOLUTION
