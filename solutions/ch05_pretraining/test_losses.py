"""Public tests for sections 5.1.2-5.1.3: the loss of a batch and of a loader (listing 5.2), perplexity.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import math

import torch

from losses import calc_loss_batch, calc_loss_loader, perplexity
from public_tests import expect_close, expect_equal
from stand_ins import TinyGPT

CFG = {"vocab_size": 11, "context_length": 6, "emb_dim": 4, "drop_rate": 0.0}


def tiny(seed=0):
    torch.manual_seed(seed)
    return TinyGPT(CFG)


def batches(n, batch_size=2, num_tokens=5, seed=1):
    """``n`` (input, target) pairs of token ids, the targets shifted by one as chapter 2's loader makes them."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, CFG["vocab_size"], (n, batch_size, num_tokens + 1), generator=g)
    return [(row[:, :-1].contiguous(), row[:, 1:].contiguous()) for row in ids]  # as a DataLoader stacks them


def cross_entropy(model, pairs):
    """The mean over the tokens of each batch, then over the batches: written out."""
    losses = []
    with torch.no_grad():
        for x, y in pairs:
            logp = torch.log_softmax(model(x), dim=-1)
            losses.append(-logp.gather(-1, y.unsqueeze(-1)).mean().item())
    return losses


def test_book_initial_loss_and_perplexity(book_gpt):
    inputs = torch.tensor([[16833, 3626, 6100], [40, 1107, 588]])   # "every effort moves", "I really like"
    targets = torch.tensor([[3626, 6100, 345], [1107, 588, 11311]])  # " effort moves you", " really like chocolate"
    expect_close(perplexity(torch.tensor(10.7940)), torch.tensor(48725.8203), "perplexity(tensor(10.7940))",
                 atol=0.0, rtol=1e-4)
    with torch.no_grad():
        loss = calc_loss_batch(inputs, targets, book_gpt(), "cpu")
    expect_close(loss, torch.tensor(10.7940), "the untrained GPT's loss on the book's two texts", atol=1e-3)


def test_loss_of_a_batch_is_the_mean_cross_entropy():
    model = tiny()
    (x, y), = batches(1)
    loss = calc_loss_batch(x, y, model, "cpu")
    expect_equal(loss.shape, torch.Size([]), "the loss's shape (a scalar tensor)")
    expect_close(loss, torch.tensor(cross_entropy(model, [(x, y)])[0]), "calc_loss_batch(...)")
    loss.backward()
    assert model.out_head.weight.grad is not None, "gradients must flow back to the model's parameters"


def test_perplexity_is_exp_of_the_loss():
    expect_close(perplexity(torch.tensor(2.0)), torch.tensor(math.exp(2.0)), "perplexity(torch.tensor(2.0))")


def test_loss_of_a_loader():
    model = tiny()
    pairs = batches(4)
    each = cross_entropy(model, pairs)
    for num_batches, expected in ((None, sum(each) / 4), (2, sum(each[:2]) / 2), (9, sum(each) / 4)):
        loss = calc_loss_loader(pairs, model, "cpu", num_batches=num_batches)
        expect_close(torch.tensor(float(loss)), torch.tensor(expected),
                     f"calc_loss_loader(4 batches, num_batches={num_batches})")
    expect_equal(type(calc_loss_loader(pairs, model, "cpu")), float, "the type of calc_loss_loader's answer")
    assert math.isnan(calc_loss_loader([], model, "cpu")), "an empty loader gives float('nan')"
