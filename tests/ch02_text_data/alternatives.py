'''A bank of correct chapter-2 submissions written in other students' styles.

Each alternative is a whole submission (the six student modules), written from the stubs'
docstrings the way different students would: ``re.findall`` or a hand-written scanner
instead of ``re.split``, ``dict(zip(...))`` vocabularies, the specials appended or merged in,
``SimpleTokenizerV2`` as a subclass of V1, listing 2.4's printed split and each of the book's
decode punctuation sets, ``encoding_for_model``, ``allowed_special="all"``, windows from
``Tensor.unfold`` or computed lazily in ``__getitem__`` (no bounds check: a ``DataLoader``
never asks past ``len``), positional ``DataLoader`` arguments, embedding tables as plain
parameters indexed by the ids, ``F.embedding``, files saved on Windows. Every one must score
full marks (``tests/test_alternatives.py``).

Module variants are written once (``SIMPLE``, ``SPECIAL``, ... : style -> source) and combined
into ``ALTERNATIVES``; "plain" is a straightforward student's own code.
'''
from functools import partial

import banks


# The given part of simple_tokenizer.py, as students keep it (the stub's own lines).
VERDICT_HELPER = '''import hashlib
from pathlib import Path

VERDICT = Path(__file__).with_name("the-verdict.txt")
VERDICT_SHA256 = "b41e41a68f0398a3154ae69e2e4c0e2694e17fe0d66730536837f1b01935b31f"


def read_verdict(path=VERDICT):
    data = Path(path).read_bytes()
    if hashlib.sha256(data).hexdigest() != VERDICT_SHA256:
        raise ValueError(f"{path}: not the course's The Verdict (sha256 differs)")
    return data.decode("utf-8")
'''

# ------------------------------------------------------------------ 2.2-2.3
SIMPLE = {
    "plain": '''"""My tokenizer, sections 2.2-2.3."""
import re
''' + VERDICT_HELPER + '''
PATTERN = r'([,.:;?_!"()\\']|--|\\s)'


def preprocess(text):
    pieces = re.split(PATTERN, text)
    tokens = []
    for piece in pieces:
        piece = piece.strip()
        if piece:
            tokens.append(piece)
    return tokens


def build_vocab(preprocessed):
    words = sorted(set(preprocessed))
    return dict(zip(words, range(len(words))))


class SimpleTokenizerV1:
    def __init__(self, vocab):
        self.str_to_int = dict(vocab)
        self.int_to_str = {}
        for token, token_id in vocab.items():
            self.int_to_str[token_id] = token

    def encode(self, text):
        return [self.str_to_int[token] for token in preprocess(text)]

    def decode(self, ids):
        words = [self.int_to_str[i] for i in ids]
        text = " ".join(words)
        return re.sub(r'\\s+([,.?!"()\\'])', r'\\1', text)
''',

    "findall": '''import re
''' + VERDICT_HELPER + '''
# a token is a double dash, one mark, or a run of other non-space characters (no "--" inside)
TOKEN = re.compile(r"""--|[,.:;?_!"()']|(?:(?!--)[^\\s,.:;?_!"()'])+""")


def preprocess(text):
    return TOKEN.findall(text)


def build_vocab(preprocessed):
    vocab = {}
    for i, word in enumerate(sorted(set(preprocessed))):
        vocab[word] = i
    return vocab


class SimpleTokenizerV1:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = dict((i, s) for s, i in vocab.items())

    def encode(self, text):
        ids = []
        for token in TOKEN.findall(text):
            ids.append(self.str_to_int[token])
        return ids

    def decode(self, ids):
        # listing 2.4's companion code: also no space before : and ;
        text = " ".join(self.int_to_str[i] for i in ids)
        return re.sub(r'\\s+([,.:;?!"()\\'])', r'\\1', text)
''',

    "scanner": '''import re
''' + VERDICT_HELPER.replace('data.decode("utf-8")', 'str(data, "utf-8")') + '''
MARKS = set(',.:;?_!"()\\'')


def preprocess(text):
    """A hand-written scanner: no regular expression."""
    tokens, word, i = [], "", 0
    while i < len(text):
        if text.startswith("--", i):
            token, step = "--", 2
        elif text[i] in MARKS:
            token, step = text[i], 1
        elif text[i].isspace():
            token, step = "", 1
        else:
            word += text[i]
            i += 1
            continue
        if word:
            tokens.append(word)
            word = ""
        if token:
            tokens.append(token)
        i += step
    if word:
        tokens.append(word)
    return tokens


def build_vocab(preprocessed):
    return {word: n for n, word in enumerate(sorted({*preprocessed}))}


class SimpleTokenizerV1:
    def __init__(self, vocab):
        self.vocab = vocab
        self.inverse = {v: k for k, v in vocab.items()}

    def encode(self, text):
        return list(map(self.vocab.__getitem__, preprocess(text)))

    def decode(self, ids):
        out = ""
        for i in ids:
            token = self.inverse[i]
            if out and token not in ',.?!"()\\'':
                out += " "
            out += token
        return out
''',

    "printed_decode": '''import re
''' + VERDICT_HELPER + '''

def preprocess(text):
    return [t.strip() for t in re.split(r"""([,.:;?_!"()']|--|\\s)""", text) if t.strip()]


def build_vocab(preprocessed):
    return {token: integer for integer, token in enumerate(sorted(list(set(preprocessed))))}


class SimpleTokenizerV1:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        return [self.str_to_int[s] for s in preprocess(text)]

    def decode(self, ids):
        # the punctuation of listing 2.4 as printed
        return re.sub(r'\\s+([.,;?!"])', r'\\1', " ".join(self.int_to_str[i] for i in ids))
''',
}

# ------------------------------------------------------------------ 2.4
SPECIAL = {
    "plain": '''import re

ENDOFTEXT = "<|endoftext|>"
UNK = "<|unk|>"


def build_vocab_with_special_tokens(preprocessed):
    words = sorted(set(preprocessed))
    vocab = {w: i for i, w in enumerate(words)}
    vocab[ENDOFTEXT] = len(vocab)
    vocab[UNK] = len(vocab)
    return vocab


class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text):
        # listing 2.4 exactly as the book prints it
        preprocessed = re.split(r'([.,;?!"]|--|\\s)', text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        preprocessed = [item if item in self.str_to_int else "<|unk|>" for item in preprocessed]
        return [self.str_to_int[s] for s in preprocessed]

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        return re.sub(r'\\s+([.,;?!"])', r'\\1', text)
''',

    "subclass": '''import re

from simple_tokenizer import SimpleTokenizerV1, build_vocab, preprocess


def build_vocab_with_special_tokens(preprocessed):
    vocab = build_vocab(preprocessed)
    return {**vocab, "<|endoftext|>": len(vocab), "<|unk|>": len(vocab) + 1}


class SimpleTokenizerV2(SimpleTokenizerV1):
    unknown = "<|unk|>"

    def encode(self, text):
        unk = self.str_to_int[self.unknown]
        return [self.str_to_int.get(token, unk) for token in preprocess(text)]

    def decode(self, ids):
        text = " ".join(self.int_to_str[i] for i in ids)
        return re.sub(r'\\s+([,.:;?!"()\\'])', r'\\1', text)
''',

    "extend": '''import re

SPECIALS = ["<|endoftext|>", "<|unk|>"]


def build_vocab_with_special_tokens(preprocessed):
    all_tokens = sorted(list(set(preprocessed)))
    all_tokens.extend(SPECIALS)
    return dict(zip(all_tokens, range(len(all_tokens))))


class SimpleTokenizerV2:
    def __init__(self, vocab):
        self.vocab = vocab
        self.lookup = {token_id: token for token, token_id in vocab.items()}

    def encode(self, text):
        tokens = re.findall(r"""--|[,.:;?_!"()']|(?:(?!--)[^\\s,.:;?_!"()'])+""", text)
        return [self.vocab[t] if t in self.vocab else self.vocab["<|unk|>"] for t in tokens]

    def decode(self, ids):
        pieces = []
        for i in ids:
            token = self.lookup[i]
            if pieces and token in ",.?!\\"()'":
                pieces[-1] += token   # listing 2.3's punctuation set
            else:
                pieces.append(token)
        return " ".join(pieces)
''',
}

# ------------------------------------------------------------------ 2.5
BPE = {
    "plain": '''import tiktoken

tokenizer = tiktoken.get_encoding("gpt2")


def bpe_encode(text):
    return tokenizer.encode(text, allowed_special={"<|endoftext|>"})


def bpe_decode(ids):
    return tokenizer.decode(ids)
''',

    "for_model": '''import tiktoken


def _gpt2():
    return tiktoken.encoding_for_model("gpt2")


def bpe_encode(text):
    # GPT-2 has one special token: "all" allows exactly <|endoftext|>
    return list(_gpt2().encode(text, allowed_special="all"))


def bpe_decode(ids):
    return _gpt2().decode_bytes(list(ids)).decode("utf-8", errors="replace")
''',
}

# ------------------------------------------------------------------ 2.6
DATA = {
    "plain": '''import tiktoken
import torch
from torch.utils.data import DataLoader, Dataset


def input_target_pair(token_ids, context_size):
    inputs = list(token_ids[0:context_size])
    targets = list(token_ids[1:1 + context_size])
    return inputs, targets


def next_word_pairs(token_ids, context_size):
    return [(token_ids[:n], token_ids[n]) for n in range(1, context_size + 1)]


class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        starts = range(0, len(ids) - max_length, stride)
        self.inputs = torch.tensor([ids[s:s + max_length] for s in starts], dtype=torch.long).reshape(-1, max_length)
        self.targets = torch.tensor([ids[s + 1:s + 1 + max_length] for s in starts],
                                    dtype=torch.long).reshape(-1, max_length)

    def __len__(self):
        return self.inputs.shape[0]

    def __getitem__(self, idx):
        return self.inputs[idx], self.targets[idx]


def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True,
                         num_workers=0):
    dataset = GPTDatasetV1(txt, tiktoken.get_encoding("gpt2"), max_length, stride)
    return DataLoader(dataset, batch_size, shuffle, drop_last=drop_last, num_workers=num_workers)
''',

    "unfold": '''import tiktoken
import torch
from torch.utils.data import DataLoader, Dataset


def input_target_pair(token_ids, context_size):
    window = token_ids[:context_size + 1]
    return window[:-1], window[1:]


def next_word_pairs(token_ids, context_size):
    pairs = []
    i = 1
    while i <= context_size:
        pairs.append((list(token_ids[:i]), token_ids[i]))
        i += 1
    return pairs


class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        ids = torch.tensor(tokenizer.encode(txt, allowed_special={"<|endoftext|>"}), dtype=torch.int64)
        if len(ids) <= max_length:
            self.input_ids = self.target_ids = torch.empty(0, max_length, dtype=torch.int64)
        else:
            # windows of the ids without the last (inputs) and without the first (targets)
            self.input_ids = ids[:-1].unfold(0, max_length, stride)
            self.target_ids = ids[1:].unfold(0, max_length, stride)

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx].clone(), self.target_ids[idx].clone()


def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True,
                         num_workers=0):
    tokenizer = tiktoken.encoding_for_model("gpt2")
    return DataLoader(GPTDatasetV1(txt, tokenizer, max_length=max_length, stride=stride), batch_size=batch_size,
                      shuffle=shuffle, num_workers=num_workers, drop_last=drop_last)
''',

    "lazy": '''import math

import tiktoken
import torch
from torch.utils.data import DataLoader, Dataset


def input_target_pair(token_ids, context_size):
    return token_ids[:context_size], token_ids[1:][:context_size]


def next_word_pairs(token_ids, context_size):
    return list(zip((token_ids[:i] for i in range(1, context_size + 1)), token_ids[1:context_size + 1]))


class GPTDatasetV1(Dataset):
    """Windows cut when asked for: the DataLoader never asks past len()."""

    def __init__(self, txt, tokenizer, max_length, stride):
        self.ids = torch.tensor(tokenizer.encode(txt, allowed_special={"<|endoftext|>"}))
        self.max_length, self.stride = max_length, stride
        self.count = max(0, math.ceil((len(self.ids) - max_length) / stride))

    def __len__(self):
        return self.count

    def __getitem__(self, idx):
        start = idx * self.stride
        return self.ids[start:start + self.max_length], self.ids[start + 1:start + self.max_length + 1]


def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True,
                         num_workers=0):
    tokenizer = tiktoken.get_encoding("gpt2")
    loader = DataLoader(dataset=GPTDatasetV1(txt, tokenizer, max_length, stride), batch_size=batch_size,
                        shuffle=shuffle, drop_last=drop_last, num_workers=num_workers)
    return loader
''',
}

# ------------------------------------------------------------------ 2.7-2.8
EMBED = {
    "plain": '''import torch
from torch import nn


def create_embedding_layer(vocab_size, output_dim, seed=123):
    torch.manual_seed(seed)
    layer = nn.Embedding(num_embeddings=vocab_size, embedding_dim=output_dim)
    return layer


class InputEmbeddings(nn.Module):
    def __init__(self, vocab_size, output_dim, context_length):
        super().__init__()
        self.token_embedding_layer = nn.Embedding(vocab_size, output_dim)
        self.pos_embedding_layer = nn.Embedding(context_length, output_dim)

    def forward(self, inputs):
        batch_size, seq_len = inputs.shape
        positions = torch.arange(seq_len).unsqueeze(0).expand(batch_size, seq_len)
        return self.token_embedding_layer(inputs) + self.pos_embedding_layer(positions)
''',

    "parameters": '''import torch
import torch.nn as nn
import torch.nn.functional as F


def create_embedding_layer(vocab_size, output_dim, seed=123):
    torch.manual_seed(seed)
    return nn.Embedding.from_pretrained(torch.randn(vocab_size, output_dim), freeze=False)


class InputEmbeddings(nn.Module):
    """The tables as plain parameters, indexed by the ids."""

    def __init__(self, vocab_size, output_dim, context_length):
        super().__init__()
        self.token_embedding_layer = nn.Parameter(torch.randn(vocab_size, output_dim))
        self.pos_embedding_layer = nn.Parameter(torch.randn(context_length, output_dim))

    def forward(self, inputs):
        token_embeddings = F.embedding(inputs, self.token_embedding_layer)
        return token_embeddings + self.pos_embedding_layer[: inputs.size(1)]
''',

    "sliced": '''import torch
import torch.nn as nn


def create_embedding_layer(vocab_size, output_dim, seed=123):
    generator_state = torch.manual_seed(seed)
    assert generator_state is not None
    return torch.nn.Embedding(vocab_size, output_dim)


class InputEmbeddings(nn.Module):
    def __init__(self, vocab_size, output_dim, context_length):
        super().__init__()
        self.context_length = context_length
        self.token_embedding_layer = nn.Embedding(vocab_size, output_dim)
        self.pos_embedding_layer = nn.Embedding(context_length, output_dim)

    def forward(self, inputs):
        num_tokens = inputs.shape[-1]
        if num_tokens > self.context_length:
            raise ValueError("more tokens than the context length")
        # every position's vector, then the first num_tokens of them
        pos_embeddings = self.pos_embedding_layer(torch.arange(self.context_length))[:num_tokens]
        return self.token_embedding_layer.weight[inputs] + pos_embeddings
''',
}

# ------------------------------------------------------------------ exercises
EXERCISES = {
    "plain": '''import tiktoken

import data_sampling


def bpe_pieces(text):
    enc = tiktoken.get_encoding("gpt2")
    ids = enc.encode(text)
    pieces = []
    for token_id in ids:
        pieces.append(enc.decode([token_id]))
    text_back = enc.decode(ids)
    return ids, pieces, text_back


def first_batch(txt, batch_size, max_length, stride):
    loader = data_sampling.create_dataloader_v1(txt, batch_size=batch_size, max_length=max_length,
                                                stride=stride, shuffle=False, drop_last=True)
    for inputs, targets in loader:
        return inputs, targets
''',

    "bytes": '''import tiktoken

from data_sampling import create_dataloader_v1

GPT2 = tiktoken.get_encoding("gpt2")


def bpe_pieces(text):
    integers = GPT2.encode(text, allowed_special="all")
    pieces = [GPT2.decode_single_token_bytes(i).decode("utf-8", errors="replace") for i in integers]
    return list(integers), pieces, GPT2.decode(integers)


def first_batch(txt, batch_size, max_length, stride):
    batch = next(iter(create_dataloader_v1(txt, batch_size, max_length, stride, False)))
    return tuple(batch)
''',
}

VARIANTS = {"simple_tokenizer": SIMPLE, "special_tokens": SPECIAL, "bpe": BPE, "data_sampling": DATA,
            "embeddings": EMBED, "exercises": EXERCISES}


Alternative = partial(banks.Alternative, VARIANTS)


ALTERNATIVES = [
    Alternative("plain student: own names, loops, dict(zip(...)), listing 2.4's printed split in V2"),
    Alternative("re.findall tokens; V1 decode with the companion's : and ;", {"simple_tokenizer": "findall"}),
    Alternative("a hand-written scanner, no regular expression; decode by a loop",
                {"simple_tokenizer": "scanner"}),
    Alternative("listing 2.4's printed punctuation in V1's decode", {"simple_tokenizer": "printed_decode"}),
    Alternative("SimpleTokenizerV2 as a subclass of V1 with dict.get; specials merged into the vocabulary",
                {"special_tokens": "subclass"}),
    Alternative("V2 by findall, decode gluing marks onto the previous word; specials by extend",
                {"special_tokens": "extend"}),
    Alternative("encoding_for_model, allowed_special='all', decode_bytes", {"bpe": "for_model"}),
    Alternative("windows by Tensor.unfold; keyword DataLoader arguments", {"data_sampling": "unfold"}),
    Alternative("windows cut lazily in __getitem__, no bounds check", {"data_sampling": "lazy"}),
    Alternative("embedding tables as plain parameters; F.embedding; from_pretrained layer",
                {"embeddings": "parameters"}),
    Alternative("positions of the whole context sliced; the weight indexed by the ids", {"embeddings": "sliced"}),
    Alternative("exercise 2.1 by decode_single_token_bytes; 2.2 with positional arguments",
                {"exercises": "bytes"}),
    Alternative("mixed: findall tokens, subclass V2, unfold windows, parameter tables",
                {"simple_tokenizer": "findall", "special_tokens": "subclass", "data_sampling": "unfold",
                 "embeddings": "parameters", "exercises": "bytes"}),
    Alternative("saved on Windows: UTF-8 with a byte-order mark and CRLF line endings",
                {"bpe": "for_model", "data_sampling": "lazy"}, newline="\r\n", encoding="utf-8-sig"),
    Alternative("indented with tabs, old Mac CR line endings", {"simple_tokenizer": "findall",
                                                                "special_tokens": "extend"}, newline="\r", tabs=True),
]
