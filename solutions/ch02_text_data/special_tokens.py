"""Section 2.4: special context tokens, ``<|unk|>`` and ``<|endoftext|>``, and ``SimpleTokenizerV2``."""
import re

ENDOFTEXT = "<|endoftext|>"
UNK = "<|unk|>"


def build_vocab_with_special_tokens(preprocessed):
    """The vocabulary of ``build_vocab`` (the distinct tokens sorted, numbered from 0) with
    ``<|endoftext|>`` and then ``<|unk|>`` added at the end. The Verdict gives 1,132 entries,
    ``<|endoftext|>`` 1,130 and ``<|unk|>`` 1,131."""
    ### BEGIN SOLUTION
    all_tokens = sorted(list(set(preprocessed)))
    all_tokens.extend([ENDOFTEXT, UNK])
    return {token: integer for integer, token in enumerate(all_tokens)}
    ### END SOLUTION


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
        ### BEGIN SOLUTION
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}
        ### END SOLUTION

    def encode(self, text):
        ### BEGIN SOLUTION
        preprocessed = re.split(r'([,.:;?_!"()\']|--|\s)', text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        preprocessed = [item if item in self.str_to_int else UNK for item in preprocessed]
        return [self.str_to_int[s] for s in preprocessed]
        ### END SOLUTION

    def decode(self, ids):
        ### BEGIN SOLUTION
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
        ### END SOLUTION
