"""Section 2.4: special context tokens, ``<|unk|>`` and ``<|endoftext|>``, and ``SimpleTokenizerV2``."""
import re

ENDOFTEXT = "<|endoftext|>"
UNK = "<|unk|>"


def build_vocab_with_special_tokens(preprocessed):
    """The vocabulary of ``build_vocab`` (the distinct tokens sorted, numbered from 0) with
    ``<|endoftext|>`` and then ``<|unk|>`` added at the end. The Verdict gives 1,132 entries,
    ``<|endoftext|>`` 1,130 and ``<|unk|>`` 1,131."""
    raise NotImplementedError("build_vocab_with_special_tokens: replace this line with your code")


class SimpleTokenizerV2:
    """Listing 2.4: ``SimpleTokenizerV1`` that replaces unknown words with ``<|unk|>``.

    ``encode(text)`` splits ``text`` with the rule of ``simple_tokenizer.preprocess`` (listing
    2.4's shorter character class ``[.,;?!"]`` is accepted too), turns every token that is not
    in the vocabulary into ``<|unk|>`` and returns the ids; ``<|endoftext|>`` between spaces
    stays one token. ``decode(ids)`` joins the tokens with single spaces and removes the spaces
    before ``, . : ; ? ! " ( ) '`` (the set of listing 2.3, ``, . ? ! " ( ) '``, or of listing 2.4
    as printed, ``. , ; ? ! "``, is accepted too). The vocabulary holds ``<|unk|>``; its ids may
    be in any order.
    """

    def __init__(self, vocab):
        raise NotImplementedError("SimpleTokenizerV2.__init__: replace this line with your code")

    def encode(self, text):
        raise NotImplementedError("SimpleTokenizerV2.encode: replace this line with your code")

    def decode(self, ids):
        raise NotImplementedError("SimpleTokenizerV2.decode: replace this line with your code")
