"""Sections 2.2 and 2.3: splitting a text into tokens, a vocabulary, and ``SimpleTokenizerV1``.

The chapter's text is Edith Wharton's short story *The Verdict*, shipped beside this file
(the book downloads it; this course never touches the network).
"""
import hashlib
import re
from pathlib import Path

VERDICT = Path(__file__).with_name("the-verdict.txt")
# The 20,479 characters the book's numbers come from (4,690 tokens, 1,130 vocabulary entries).
VERDICT_SHA256 = "b41e41a68f0398a3154ae69e2e4c0e2694e17fe0d66730536837f1b01935b31f"


def read_verdict(path=VERDICT):
    """The Verdict as the book reads it (UTF-8), after checking that the file is byte for byte
    the one the book's numbers come from. Given: nothing to write here."""
    data = Path(path).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != VERDICT_SHA256:
        raise ValueError(f"{path} is not the course's copy of The Verdict (sha256 {digest}, expected "
                         f"{VERDICT_SHA256}): its line endings or text were changed. Restore it from the "
                         "release (git: the file is marked -text, so no checkout converts it)")
    return data.decode("utf-8")


def preprocess(text):
    """Split ``text`` into the book's tokens (the list the book calls ``preprocessed``).

    The split rule that gives the book's numbers: split on each of the characters
    ``, . : ; ? _ ! " ( ) '``, on the double dash ``--`` and on whitespace, keep the
    punctuation and the dashes as tokens of their own, and drop the whitespace and empty
    strings. ``'Hello, world. Is this-- a test?'`` gives
    ``['Hello', ',', 'world', '.', 'Is', 'this', '--', 'a', 'test', '?']``; The Verdict gives
    4,690 tokens. (Listing 2.4 as printed splits on fewer characters, ``[.,;?!"]``: that leaves
    ``'``, ``:``, ``_``, ``(`` and ``)`` attached to words and is not this rule.)
    """
    ### BEGIN SOLUTION
    preprocessed = re.split(r'([,.:;?_!"()\']|--|\s)', text)
    return [item.strip() for item in preprocessed if item.strip()]
    ### END SOLUTION


def build_vocab(preprocessed):
    """The vocabulary: each distinct token mapped to its integer id, the tokens sorted
    (Python's string order) and numbered from 0. The Verdict's 4,690 tokens give 1,130 entries."""
    ### BEGIN SOLUTION
    all_words = sorted(set(preprocessed))
    return {token: integer for integer, token in enumerate(all_words)}
    ### END SOLUTION


class SimpleTokenizerV1:
    """Listing 2.3: a tokenizer over a fixed vocabulary ``{token: id}``.

    ``encode(text)`` splits ``text`` with the rule of ``preprocess`` and returns each token's
    id (a word missing from the vocabulary raises ``KeyError``: that is version 2's job).
    ``decode(ids)`` joins the tokens of ``ids`` with single spaces, then removes the spaces
    before the punctuation marks ``, . ? ! " ( ) '`` (listing 2.3). The book's listings remove
    them before slightly different marks (listing 2.4 as printed: ``. , ; ? ! "``; its companion
    code: ``, . : ; ? ! " ( ) '``): any of the three is accepted. The vocabulary's ids need not
    be 0, 1, 2, ... in token order: use the ids it holds.
    """

    def __init__(self, vocab):
        ### BEGIN SOLUTION
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}
        ### END SOLUTION

    def encode(self, text):
        ### BEGIN SOLUTION
        preprocessed = re.split(r'([,.:;?_!"()\']|--|\s)', text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        return [self.str_to_int[s] for s in preprocessed]
        ### END SOLUTION

    def decode(self, ids):
        ### BEGIN SOLUTION
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.?!"()\'])', r'\1', text)
        ### END SOLUTION
