"""Section 2.5: byte pair encoding with tiktoken's GPT-2 encoding.

``tiktoken.get_encoding("gpt2")`` reads the encoding from the course's own copy (installed by
the README's set-up command): nothing is downloaded.
"""
import tiktoken


def bpe_encode(text):
    """The GPT-2 BPE token ids of ``text`` (a list of ints), with ``<|endoftext|>`` allowed as
    the special token 50256 (tiktoken refuses special tokens in a text unless they are allowed,
    and encoding it as plain text would give seven ids). Unknown words become subword pieces:
    no ``<|unk|>`` is needed."""
    raise NotImplementedError("bpe_encode: replace this line with your code")


def bpe_decode(ids):
    """The text of GPT-2 BPE token ids: ``bpe_decode(bpe_encode(text)) == text`` for any text."""
    raise NotImplementedError("bpe_decode: replace this line with your code")
