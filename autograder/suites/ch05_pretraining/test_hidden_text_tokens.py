"""Hidden checks for section 5.1.1: text to token ids and back (10 points).

The tokenizer is tiktoken's GPT-2 encoding in the child, reached through text_tokens.py's
``import tiktoken``; every expected id and text is the grader's own tiktoken's."""
import pytest
import torch

from _pretraining import ran, gpt2, tokenizer_step
from autograder.grading.compare import expect_close, value, yours_vs_expected
from autograder.grading.result import failure

points = pytest.mark.points
TEXTS = ["Every effort moves you", "The end.<|endoftext|>Once upon a time", "naïve café — 東京 🙂",
         "   many   spaces\n\n\ttabs  ", "<|endoftext|>", "Akwirw ier"]
NOT_ALLOWED = ("tokenizer.encode(text) without allowed_special={'<|endoftext|>'}: tiktoken refuses a text that "
               "holds the special token")
NO_BATCH = "the ids returned without the batch dimension (torch.tensor(encoded).unsqueeze(0) is (1, num_tokens))"
NOT_SQUEEZED = ("the (1, num_tokens) tensor decoded without removing the batch dimension "
                "(token_ids.squeeze(0).tolist() is the list of ids)")
FLOAT_IDS = "the ids as floating-point numbers (torch.tensor of Python ints is int64: leave the dtype alone)"
NO_TIKTOKEN = ("text_tokens.py has no `import tiktoken` at the top (the stub's first lines): keep it, the grader "
               "hands your functions tiktoken's GPT-2 tokenizer through it")


@points(6)
def test_text_to_token_ids(student):
    """text_to_token_ids: GPT-2's ids as a (1, num_tokens) int64 tensor, <|endoftext|> allowed as 50256"""
    plan = student.plan([tokenizer_step("text_tokens")] + [
        {"let": f"e{i}", "call": "text_tokens.text_to_token_ids", "args": [text, {"$ref": "tk"}], "return": True}
        for i, text in enumerate(TEXTS)], needs="text_tokens.text_to_token_ids")
    ran(plan, "tk", "tiktoken.get_encoding('gpt2')", [(r"defines no tiktoken", NO_TIKTOKEN)])
    for i, text in enumerate(TEXTS):
        what = f"text_to_token_ids({text!r}, tokenizer)"
        ids = value(plan, f"e{i}", what, [(r"disallowed special token|allowed_special", NOT_ALLOWED)])
        expected = torch.tensor([gpt2().encode(text, allowed_special={"<|endoftext|>"})])
        if isinstance(ids, torch.Tensor) and ids.shape == expected.shape[1:] and torch.equal(ids, expected[0]):
            raise failure(f"{what}: " + yours_vs_expected(yours=list(ids.shape), yours_are="shape",
                                                           expected=list(expected.shape)) + ".", NO_BATCH)
        if isinstance(ids, torch.Tensor) and ids.dtype != torch.int64:
            same = ids.shape == expected.shape and bool((ids.double() == expected.double()).all())
            raise failure(f"{what}: " + yours_vs_expected(yours=ids.dtype, yours_are="dtype",
                                                           expected="torch.int64 (embeddings take int64 ids)") + ".",
                          FLOAT_IDS if same and ids.is_floating_point() else None)
        expect_close(ids, expected, what)


@points(4)
def test_token_ids_to_text(student):
    """token_ids_to_text: the text of a (1, num_tokens) tensor of ids, and of a 1-D one"""
    ids = [torch.tensor([gpt2().encode(text, allowed_special={"<|endoftext|>"})]) for text in TEXTS]
    steps = [tokenizer_step("text_tokens")]
    for i, t in enumerate(ids):
        steps.append({"let": f"d{i}", "call": "text_tokens.token_ids_to_text", "args": [t, {"$ref": "tk"}],
                      "return": True})
    steps.append({"let": "flat", "call": "text_tokens.token_ids_to_text", "args": [ids[0][0], {"$ref": "tk"}],
                  "return": True})
    plan = student.plan(steps, needs="text_tokens.token_ids_to_text")
    ran(plan, "tk", "tiktoken.get_encoding('gpt2')", [(r"defines no tiktoken", NO_TIKTOKEN)])
    for i, (t, text) in enumerate(zip(ids, TEXTS)):
        what = f"token_ids_to_text(the ids of {text!r} as shape {list(t.shape)}, tokenizer)"
        got = value(plan, f"d{i}", what, [(r"list|unhashable|integer|TypeError", NOT_SQUEEZED)])
        if got != text:
            raise AssertionError(f"{what}: " + yours_vs_expected(yours=repr(got)[:200], expected=repr(text)))
    got = value(plan, "flat", f"token_ids_to_text(a 1-D tensor of {len(ids[0][0])} ids, tokenizer)")
    if got != TEXTS[0]:
        raise AssertionError("token_ids_to_text(a 1-D tensor of ids, tokenizer): " + yours_vs_expected(
            yours=repr(got)[:200], expected=repr(TEXTS[0])) + " (squeeze(0) leaves a 1-D tensor as it is)")
