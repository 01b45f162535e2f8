"""Hidden checks for section 2.5: byte pair encoding with tiktoken's GPT-2 encoding (10 points)."""
import pytest
import torch

from autograder.grading.compare import value
from _text_data import ENDOFTEXT, STORY, TEXTS, encode, expect, gpt2
from autograder.grading.kit import Case

points = pytest.mark.points
BPE_TEXTS = ["Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace.",
             "Akwirw ier", STORY, *TEXTS, "naïve café — 東京 🙂", "<|endoftext|><|endoftext|>the end<|endoftext|>",
             "   many   spaces\n\n\ttabs  "]
NOT_ALLOWED = ("tokenizer.encode(text) without allowed_special={'<|endoftext|>'}: tiktoken refuses a text that "
               "holds the special token")
AS_TEXT = ("<|endoftext|> encoded as plain text (encode_ordinary or disallowed_special=()) instead of the special "
           "token 50256: allow it with allowed_special={'<|endoftext|>'}")
PER_ID = ("each id decoded on its own and the pieces joined (a character whose bytes are spread over several ids "
          "breaks into \ufffd): decode the whole list at once")


@points(6)
def test_bpe_encode(student):
    """bpe_encode: GPT-2 ids with <|endoftext|> allowed as 50256; unknown words as subword pieces"""
    reply = student.plan([{"let": f"e{i}", "call": "bpe.bpe_encode", "args": [text], "return": True}
                          for i, text in enumerate(BPE_TEXTS)])
    for i, text in enumerate(BPE_TEXTS):
        what = f"bpe_encode({text[:50]!r})"
        answer = value(reply, f"e{i}", what, [(r"disallowed special token|allowed_special", NOT_ALLOWED)])
        expect(answer, encode(text), what, {AS_TEXT: gpt2().encode_ordinary(text)} if ENDOFTEXT in text else None)


@points(3)
def test_bpe_decode(student):
    """bpe_decode gives the text back: bpe_decode(bpe_encode(text)) == text"""
    id_lists = [encode(text) for text in BPE_TEXTS] + [[50256], [33901, 86, 343, 86, 220, 959]]
    reply = student.plan([{"let": f"d{i}", "call": "bpe.bpe_decode", "args": [ids], "return": True}
                          for i, ids in enumerate(id_lists)])
    for i, ids in enumerate(id_lists):
        expected, per_id = gpt2().decode(ids), "".join(gpt2().decode([t]) for t in ids)
        expect(value(reply, f"d{i}", f"bpe_decode({ids[:8]}...)"), expected, f"bpe_decode({ids[:8]}...)",
               {PER_ID: per_id} if per_id != expected else None)


@points(1)
def test_bpe_round_trip(student, seeds):
    """bpe_decode(bpe_encode(text)) == text for any text: words, accents, CJK and emoji in a seeded order"""
    # the ids are the grader's (tiktoken's) encoding: a wrong bpe_encode is charged by its own check
    words = ["naïve", "café", "東京", "🙂", "Akwirw", "ier", " ", "--", "\n", "<|endoftext|>", "the", "Ölçü"]
    cases = []
    for i in range(3):
        order = torch.randint(len(words), (12,), generator=torch.Generator().manual_seed(seeds(i)))
        text = " ".join(words[k] for k in order)
        cases.append(Case((encode(text),), text, f"bpe_decode(the GPT-2 ids of {text!r})",
                          {PER_ID: "".join(gpt2().decode([t]) for t in encode(text))}))
    reply = student.plan([{"let": f"d{i}", "call": "bpe.bpe_decode", "args": list(case.args), "return": True}
                          for i, case in enumerate(cases)])
    for i, case in enumerate(cases):
        expect(value(reply, f"d{i}", case.what), case.expected, case.what, case.mistakes)
