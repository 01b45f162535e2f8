"""Public tests for section 4.7: generating text (listing 4.8).

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import tiktoken
import torch

from generate import generate_text_simple
from public_tests import expect_equal


class Recorder(torch.nn.Module):
    """A stand-in language model: logits from a fixed table for each token and position, and a
    record of every input it was given."""

    def __init__(self, vocab_size=11, context_length=8):
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.randn(context_length, vocab_size, vocab_size)
        self.inputs = []

    def forward(self, idx):
        self.inputs.append(idx.clone())
        positions = torch.arange(idx.shape[1])
        return self.table[positions, idx] + idx.shape[1]  # (batch, num_tokens, vocab_size)


def test_book_hello_i_am(gpt_124m):
    model, _ = gpt_124m()
    tokenizer = tiktoken.get_encoding("gpt2")
    encoded = tokenizer.encode("Hello, I am")
    expect_equal(encoded, [15496, 11, 314, 716], 'the ids of "Hello, I am"')
    encoded_tensor = torch.tensor(encoded).unsqueeze(0)
    model.eval()
    out = generate_text_simple(model=model, idx=encoded_tensor, max_new_tokens=6, context_size=1024)
    expect_equal(out.tolist(), [[15496, 11, 314, 716, 27018, 24086, 47843, 30961, 42348, 7267]], 'the generated ids')
    expect_equal(tokenizer.decode(out.squeeze(0).tolist()), "Hello, I am Featureiman Byeswickattribute argue", 'the generated text')


def test_greedy_from_the_last_position():
    model = Recorder()
    idx = torch.tensor([[1, 2], [3, 4]])
    out = generate_text_simple(model, idx, max_new_tokens=3, context_size=8)
    expect_equal(idx, torch.tensor([[1, 2], [3, 4]]), "idx itself must be left unchanged")
    expect_equal(len(model.inputs), 3, "one model call per new token")
    expected = idx
    for given in model.inputs:
        expect_equal(given, expected, 'what the model was given at this step')
        with torch.no_grad():
            nxt = model.table[given.shape[1] - 1, given[:, -1]].argmax(dim=-1, keepdim=True)
        expected = torch.cat([expected, nxt], dim=1)
    expect_equal(out, expected, 'the generated ids (greedy, from the last position)')


def test_crops_to_the_last_context_size_tokens():
    model = Recorder()
    idx = torch.tensor([[5, 6, 7, 8, 9, 10]])
    out = generate_text_simple(model, idx, max_new_tokens=2, context_size=4)
    expect_equal([given.tolist() for given in model.inputs], [[[7, 8, 9, 10]], [[8, 9, 10, out[0, 6].item()]]], 'what the model was given (context_size=4)')
    assert out.shape == (1, 8) and out[0, :6].tolist() == [5, 6, 7, 8, 9, 10], "the output is the whole input followed by the new tokens"
