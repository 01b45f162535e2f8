"""Section 5.1.2-5.1.3: the loss of a batch, of a data loader, and perplexity."""
import torch


def calc_loss_batch(input_batch, target_batch, model, device):
    """Listing 5.2's first function: the cross entropy of ``model``'s logits for ``input_batch``
    against ``target_batch`` (both (batch, num_tokens) token ids, moved to ``device``).

    The logits, (batch, num_tokens, vocab_size), are flattened to (batch * num_tokens,
    vocab_size) and the targets to (batch * num_tokens,): the mean over every token of the
    batch. Returns the loss as a scalar tensor that gradients flow back through (training calls
    ``backward()`` on it).
    """
    ### BEGIN SOLUTION
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
    ### END SOLUTION


def calc_loss_loader(data_loader, model, device, num_batches=None):
    """Listing 5.2: the mean of ``calc_loss_batch`` over the first ``num_batches`` batches of
    ``data_loader`` (all of them where ``num_batches`` is None or larger than ``len(data_loader)``),
    as a Python float. An empty loader gives ``float("nan")``. ``data_loader``: anything with a
    ``len`` that yields (input_batch, target_batch) pairs, in order (a DataLoader, a list).
    """
    ### BEGIN SOLUTION
    total_loss = 0.0
    if len(data_loader) == 0:
        return float("nan")
    if num_batches is None:
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        total_loss += calc_loss_batch(input_batch, target_batch, model, device).item()
    return total_loss / num_batches
    ### END SOLUTION


def perplexity(loss):
    """Section 5.1.2: the perplexity of a cross-entropy ``loss`` (a scalar tensor): exp(loss),
    as a tensor."""
    ### BEGIN SOLUTION
    return torch.exp(loss)
    ### END SOLUTION
