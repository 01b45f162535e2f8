"""Public tests for section 5.3: temperature scaling, top-k sampling and listing 5.4's generate.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from decoding import generate, print_sampled_tokens, softmax_with_temperature
from public_tests import expect_close, expect_equal

VOCAB = ["closer", "every", "effort", "forward", "inches", "moves", "pizza", "toward", "you"]
NEXT_TOKEN_LOGITS = torch.tensor([4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79])


class Table(torch.nn.Module):
    """A stand-in language model: logits from a fixed table of (last token, number of tokens),
    and a record of every input it was given."""

    def __init__(self, vocab_size=9, context_length=8):
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.randn(context_length + 1, vocab_size, vocab_size) * 3
        self.inputs = []

    def forward(self, idx):
        self.inputs.append(idx.clone())
        return self.table[idx.shape[1]][idx]   # (batch, num_tokens, vocab_size)


def test_book_temperatures():
    for t in (1.0, 0.1, 5.0):
        expect_close(softmax_with_temperature(NEXT_TOKEN_LOGITS, t), torch.softmax(NEXT_TOKEN_LOGITS / t, dim=0),
                     f"softmax_with_temperature(the book's logits, {t})")


def test_book_sampled_tokens(capsys):
    probas = torch.softmax(NEXT_TOKEN_LOGITS, dim=0)
    counts = print_sampled_tokens(probas, VOCAB)
    torch.manual_seed(123)   # what this machine draws the book's way (the book printed 73, 0, 0, 582, 2, 0, 0, 343)
    drawn = torch.bincount(torch.tensor([torch.multinomial(probas, num_samples=1).item() for _ in range(1_000)]),
                           minlength=9)
    expect_equal(counts, drawn, "the counts print_sampled_tokens returns")
    expect_equal(capsys.readouterr().out.splitlines()[3], f"{drawn[3]} x forward", "its fourth printed line")


def test_greedy_crops_and_leaves_idx():
    model = Table()
    idx = torch.tensor([[1, 2, 3, 4, 5]])
    out = generate(model, idx, max_new_tokens=3, context_size=4)
    expect_equal(idx, torch.tensor([[1, 2, 3, 4, 5]]), "idx after generate (left unchanged)")
    expected = idx
    for given in model.inputs:
        expect_equal(given, expected[:, -4:], "what the model was given (the last context_size tokens)")
        expected = torch.cat([expected, model.table[given.shape[1]][given[:, -1]].argmax(-1, keepdim=True)], dim=1)
    expect_equal(out, expected, "generate(..., temperature=0.0): the greedy tokens")


def test_top_k_and_temperature_sampling():
    model = Table()
    for prompt in (2, 7):   # a batch of one, as the book's listing samples
        idx = torch.tensor([[prompt]])
        torch.manual_seed(123)
        out = generate(model, idx, max_new_tokens=4, context_size=8, temperature=1.4, top_k=3)
        torch.manual_seed(123)
        expected = idx
        for _ in range(4):
            logits = model.table[expected.shape[1]][expected[:, -1]]
            kth = logits.topk(3).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
            expected = torch.cat([expected, torch.multinomial(torch.softmax(logits / 1.4, dim=-1), 1)], dim=1)
        expect_equal(out, expected, f"generate(idx=[[{prompt}]], ..., temperature=1.4, top_k=3) after "
                                    "torch.manual_seed(123)")


def test_eos_stops_generation():
    model = Table()
    idx = torch.tensor([[4]])
    greedy = generate(model, idx, max_new_tokens=5, context_size=8)
    eos = greedy[0, 2].item()
    out = generate(model, idx, max_new_tokens=5, context_size=8, eos_id=eos)
    first = greedy[0, 1:].tolist().index(eos) + 1
    expect_equal(out, greedy[:, :first], f"generate(..., eos_id={eos}): stops before the first {eos}")
    never = next(t for t in range(9) if t not in greedy[0].tolist())
    expect_equal(generate(model, idx, max_new_tokens=5, context_size=8, eos_id=never), greedy,
                 f"generate(..., eos_id={never}): {never} never comes, so all 5 new tokens")
