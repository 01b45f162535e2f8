'''A bank of correct submissions written in other students' styles.

Every alternative is a whole submission (all five student modules), written from the
stubs' docstrings the way different students would: einsum, bmm, F.linear, torch.where,
bool or float masks of other shapes, scaled_dot_product_attention, loops over heads,
keyword arguments, other internal names, files saved on Windows. Each one is correct per
the book: the same outputs, the same parameters under a seed (the book fixes the creation
order W_query, W_key, W_value, out_proj), and dropout on the attention weights drawing the
mask ``nn.Dropout`` draws. So each must score full marks; ``tests/test_alternatives.py``
grades them.

Module variants are written once below (``SIMPLE``, ``SELF``, ... : style -> source) and
combined into ``ALTERNATIVES``: the "plain" variant of each module is a straightforward
student's own code, and every other alternative swaps in the styles it is about, so a
failure points at the style that caused it.

Decisions worth knowing:
- ``persistent=False`` only for ``MultiHeadAttention``: ``CausalAttention``'s docstring
  says its mask "is saved in state_dict", the multi-head one's does not.
- ``F.scaled_dot_product_attention`` is used in training mode too, with
  ``dropout_p=self.dropout.p``: on the CPU (the grader's device, torch 2.13) it applies
  dropout to the softmax weights with the same draws as ``nn.Dropout`` under the same
  seed (checked when the bank was written). The "sdpa" styles pass the registered buffer as
  ``attn_mask``; the "sdpa_causal" styles pass ``is_causal=True`` instead (the decision is
  written next to them).
- An additive float mask (``-inf`` above the diagonal, added to the scores) only in
  ``MultiHeadAttention``, whose docstring does not say what the mask holds;
  ``CausalAttention``'s says "ones above the diagonal".
'''
import ast
from functools import partial

import banks
from pathlib import Path

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions" / "ch03_attention"


def _book_inputs():
    """The book's six embedded tokens, as the reference module writes them (students keep them)."""
    source = (SOLUTIONS / "simple_attention.py").read_text()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.Assign) and n.targets[0].id == "inputs")
    return "\n" + ast.get_source_segment(source, node) + "\n"


BOOK_INPUTS = _book_inputs()

# ------------------------------------------------------------------ section 3.3
SIMPLE = {
    "plain": '''"""My solutions for section 3.3."""
import torch
''' + BOOK_INPUTS + '''

def dot_product_loop(x, y):
    total = torch.tensor(0.0, dtype=x.dtype)
    for a, b in zip(x, y):
        total += a * b
    return total


def attn_scores_for_query(inputs, query):
    return torch.stack([torch.dot(token, query) for token in inputs])


def attn_scores_loop(inputs):
    rows = []
    for a in inputs:
        rows.append(torch.stack([torch.dot(a, b) for b in inputs]))
    return torch.stack(rows)


def attn_scores_matmul(inputs):
    return torch.matmul(inputs, inputs.T)


def normalize_by_sum(attn_scores):
    total = torch.sum(attn_scores)
    return attn_scores / total


def softmax_naive(x):
    exps = torch.exp(x)
    return exps / exps.sum()


def attn_weights_from_scores(attn_scores):
    return torch.softmax(attn_scores, dim=attn_scores.dim() - 1)


def context_vector_for_query(inputs, attn_weights):
    z = torch.zeros_like(inputs[0])
    for w, x_i in zip(attn_weights, inputs):
        z = z + w * x_i
    return z


def all_context_vectors(inputs):
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights @ inputs
''',

    "einsum": '''import torch
import torch.nn.functional as F
''' + BOOK_INPUTS + '''

def dot_product_loop(x, y):
    result = 0
    for i in range(len(x)):
        result = result + x[i] * y[i]
    return result


def attn_scores_for_query(inputs, query):
    scores = torch.empty(inputs.shape[0])
    for i in range(inputs.shape[0]):
        scores[i] = torch.dot(inputs[i], query)
    return scores


def attn_scores_loop(inputs):
    n = inputs.shape[0]
    scores = torch.zeros(n, n)
    for i in range(n):
        for j in range(n):
            scores[i, j] = dot_product_loop(inputs[i], inputs[j])
    return scores


def attn_scores_matmul(inputs):
    return torch.einsum("id,jd->ij", inputs, inputs)


def normalize_by_sum(attn_scores):
    return attn_scores / attn_scores.sum(dim=-1, keepdim=True)


def softmax_naive(x):
    return torch.exp(x) / torch.sum(torch.exp(x), dim=-1, keepdim=True)


def attn_weights_from_scores(attn_scores):
    return F.softmax(attn_scores, dim=-1)


def context_vector_for_query(inputs, attn_weights):
    return sum(attn_weights[i] * inputs[i] for i in range(inputs.shape[0]))


def all_context_vectors(inputs):
    scores = torch.einsum("id,jd->ij", inputs, inputs)
    return torch.einsum("ij,jd->id", F.softmax(scores, dim=1), inputs)
''',

    # softmax written by hand, subtracting the maximum first (numerically stable)
    "stable": '''import torch
''' + BOOK_INPUTS + '''

def dot_product_loop(x, y):
    # plain Python floats, back to a tensor at the end
    acc = sum(a * b for a, b in zip(x.tolist(), y.tolist()))
    return torch.tensor(acc, dtype=x.dtype)


def attn_scores_for_query(inputs, query):
    out = []
    for row in inputs:
        out.append(torch.dot(row, query))
    return torch.stack(out)


def attn_scores_loop(inputs):
    n = len(inputs)
    return torch.stack([torch.stack([torch.dot(inputs[i], inputs[j]) for j in range(n)]) for i in range(n)])


def attn_scores_matmul(inputs):
    return inputs.matmul(inputs.transpose(0, 1))


def normalize_by_sum(attn_scores):
    return attn_scores.div(attn_scores.sum())


def softmax_naive(x):
    shifted = x - x.max()
    e = shifted.exp()
    return e / e.sum()


def attn_weights_from_scores(attn_scores):
    largest = attn_scores.max(dim=-1, keepdim=True).values
    e = torch.exp(attn_scores - largest)
    return e / e.sum(dim=-1, keepdim=True)


def context_vector_for_query(inputs, attn_weights):
    context = torch.zeros(inputs.shape[-1], dtype=inputs.dtype)
    for idx in range(len(attn_weights)):
        context += attn_weights[idx] * inputs[idx]
    return context


def all_context_vectors(inputs):
    return attn_weights_from_scores(attn_scores_matmul(inputs)) @ inputs
''',
}

# ------------------------------------------------------------------ section 3.4
SELF = {
    "plain": '''"""Section 3.4, my version."""
import math

import torch
import torch.nn as nn


def compute_query_key_value(inputs, W_query, W_key, W_value):
    return inputs @ W_query, inputs @ W_key, inputs @ W_value


def scaled_attn_weights(query, keys):
    d_k = keys.shape[1]
    scores = keys @ query
    return torch.softmax(scores / math.sqrt(d_k), dim=-1)


def context_vector_for_query(x_query, inputs, W_query, W_key, W_value):
    query = x_query @ W_query
    keys, values = inputs @ W_key, inputs @ W_value
    weights = torch.softmax(query @ keys.T / math.sqrt(keys.shape[-1]), dim=-1)
    return weights @ values


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super(SelfAttention_v1, self).__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)
        return weights @ v


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super(SelfAttention_v2, self).__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        weights = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)
        return weights @ v
''',

    # einsum and matmul; the three weights drawn by one generator, still in the book's order
    "einsum": '''import torch
import torch.nn as nn
import torch.nn.functional as F


def compute_query_key_value(inputs, W_query, W_key, W_value):
    queries = torch.matmul(inputs, W_query)
    keys = torch.matmul(inputs, W_key)
    values = torch.matmul(inputs, W_value)
    return (queries, keys, values)


def scaled_attn_weights(query, keys):
    scores = torch.einsum("d,td->t", query, keys)
    return F.softmax(scores * keys.shape[-1] ** -0.5, dim=0)


def context_vector_for_query(x_query, inputs, W_query, W_key, W_value):
    query, _, _ = compute_query_key_value(x_query, W_query, W_key, W_value)
    _, keys, values = compute_query_key_value(inputs, W_query, W_key, W_value)
    return torch.einsum("t,td->d", scaled_attn_weights(query, keys), values)


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query, self.W_key, self.W_value = (nn.Parameter(torch.rand(d_in, d_out)) for _ in range(3))

    def forward(self, x):
        q = torch.einsum("ti,io->to", x, self.W_query)
        k = torch.einsum("ti,io->to", x, self.W_key)
        v = torch.einsum("ti,io->to", x, self.W_value)
        w = F.softmax(torch.einsum("qd,kd->qk", q, k) / k.shape[-1] ** 0.5, dim=-1)
        return torch.einsum("qk,kd->qd", w, v)


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query, self.W_key, self.W_value = [nn.Linear(d_in, d_out, qkv_bias) for _ in range(3)]

    def forward(self, x):
        q = F.linear(x, self.W_query.weight, self.W_query.bias)
        k = F.linear(x, self.W_key.weight, self.W_key.bias)
        v = F.linear(x, self.W_value.weight, self.W_value.bias)
        w = F.softmax(torch.einsum("qd,kd->qk", q, k) / k.shape[-1] ** 0.5, dim=-1)
        return torch.einsum("qk,kd->qd", w, v)
''',

    # attributes set in a loop over the book's names; a helper method; keyword arguments
    "setattr": '''import torch
from torch import nn

NAMES = ("W_query", "W_key", "W_value")


def compute_query_key_value(inputs, W_query, W_key, W_value):
    return tuple(inputs @ W for W in (W_query, W_key, W_value))


def scaled_attn_weights(query, keys):
    d_k = query.numel()
    return torch.softmax((query @ keys.mT) / d_k**0.5, dim=-1)


def context_vector_for_query(x_query, inputs, W_query, W_key, W_value):
    keys = inputs @ W_key
    values = inputs @ W_value
    weights = scaled_attn_weights(x_query @ W_query, keys)
    z = torch.zeros(values.shape[1], dtype=values.dtype)
    for w, v in zip(weights, values):
        z += w * v
    return z


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        for name in NAMES:
            setattr(self, name, nn.Parameter(torch.rand(d_in, d_out)))

    def project(self, x):
        return x @ self.W_query, x @ self.W_key, x @ self.W_value

    def forward(self, x):
        queries, keys, values = self.project(x)
        attn = torch.softmax(queries @ keys.mT / keys.size(-1) ** 0.5, dim=-1)
        return attn @ values


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        for name in NAMES:
            setattr(self, name, nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias))

    def project(self, x):
        return self.W_query(x), self.W_key(x), self.W_value(x)

    def forward(self, x):
        queries, keys, values = self.project(x)
        attn = torch.softmax(queries @ keys.mT / keys.size(-1) ** 0.5, dim=-1)
        return attn @ values
''',
}

# ------------------------------------------------------------------ section 3.5
_CAUSAL_FUNCTIONS = '''

def simple_causal_mask(context_length):
    return torch.ones(context_length, context_length).tril()


def masked_renormalized_weights(attn_weights):
    n = attn_weights.shape[0]
    masked = attn_weights * torch.tril(torch.ones(n, n))
    return masked / masked.sum(dim=1, keepdim=True)


def mask_future_scores(attn_scores):
    n = attn_scores.shape[-1]
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return attn_scores.masked_fill(future, float("-inf"))


def causal_attn_weights(attn_scores, d_k):
    masked = mask_future_scores(attn_scores)
    return torch.softmax(masked / d_k ** 0.5, dim=-1)


def dropout_attn_weights(attn_weights, p, seed):
    torch.manual_seed(seed)
    return nn.Dropout(p)(attn_weights)
'''


def _causal(init_mask, forward, imports="", functions=_CAUSAL_FUNCTIONS):
    """A causal_attention module: the plain functions and a CausalAttention with the given
    mask creation (the end of __init__) and forward body."""
    return f'''import torch
import torch.nn as nn
{imports}{functions}

class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.dropout = nn.Dropout(dropout)  # draws nothing at creation: its place does not matter
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.d_out = d_out
{init_mask}
    def forward(self, x):
{forward}'''


_FLOAT_MASK = '''        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
'''

CAUSAL = {
    "plain": _causal(_FLOAT_MASK, '''        num_tokens = x.shape[1]
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = q @ k.transpose(1, 2)
        scores = scores.masked_fill(self.mask[:num_tokens, :num_tokens].bool(), -torch.inf)
        weights = torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1)
        weights = self.dropout(weights)
        return weights @ v
'''),

    "einsum": _causal(_FLOAT_MASK, '''        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("bqd,bkd->bqk", q, k)
        scores.masked_fill_(self.mask[:n, :n] == 1, float("-inf"))
        weights = self.dropout(torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1))
        return torch.einsum("bqk,bkd->bqd", weights, v)
'''),

    "bmm": _causal(_FLOAT_MASK, '''        batch, num_tokens, _ = x.size()
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / keys.size(-1) ** 0.5
        # scaling before masking gives the same weights: -inf stays -inf
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(scores.softmax(dim=-1))
        return torch.bmm(weights, values)
'''),

    "flinear": _causal(_FLOAT_MASK, '''        n = x.shape[-2]
        q = F.linear(x, self.W_query.weight, self.W_query.bias)
        k = F.linear(x, self.W_key.weight, self.W_key.bias)
        v = F.linear(x, self.W_value.weight, self.W_value.bias)
        scores = torch.matmul(q, k.transpose(-2, -1))
        scores = scores.masked_fill(self.mask[:n, :n].bool(), -torch.inf)
        weights = F.softmax(scores / k.shape[-1] ** 0.5, dim=-1)
        return torch.matmul(self.dropout(weights), v)
''', imports="import torch.nn.functional as F\n"),

    # a bool buffer, and torch.where instead of masked_fill
    "bool_where": _causal('''        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))
''', '''        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(1, 2)
        scores = torch.where(self.mask[:n, :n], float("-inf"), scores)
        weights = torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1)
        return self.dropout(weights) @ v
''', functions=_CAUSAL_FUNCTIONS.replace(
        'return attn_scores.masked_fill(future, float("-inf"))',
        'return torch.where(future, -torch.inf, attn_scores)')),

    # a bool buffer with masked_fill
    "bool": _causal('''        causal = torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
        self.register_buffer("mask", causal)
''', '''        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values
'''),

    # the mask kept with a leading batch dimension, (1, T, T)
    "mask3d": _causal('''        ones = torch.ones(1, context_length, context_length)
        self.register_buffer("mask", torch.triu(ones, diagonal=1))
''', '''        num_tokens = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(1, 2)
        scores = scores.masked_fill(self.mask[:, :num_tokens, :num_tokens] == 1, -torch.inf)
        weights = self.dropout(torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1))
        return weights @ v
'''),

    # PyTorch's fused attention, given the module's own mask (True = may attend)
    "sdpa": _causal(_FLOAT_MASK, '''        n = x.size(1)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        allowed = self.mask[:n, :n] == 0
        p = self.dropout.p if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, dropout_p=p)
''', imports="import torch.nn.functional as F\n"),

    # Decision (issue 15, "sdpa_causal" here and in MHA): F.scaled_dot_product_attention(...,
    # is_causal=True) is correct and gets full marks. What the mask check protects is that the
    # module still masks right after it moves; PyTorch builds this mask itself on the input's
    # device, so it has that property. The check passes a forward that follows its transposed
    # buffer, or one that calls scaled_dot_product_attention with is_causal=True (the child notes
    # the call) and masks right after .to(torch.float64). The buffer stays registered, as the
    # docstrings ask. A mask forward builds on its own (torch.ones/triu, on the CPU whatever the
    # module's device) still fails: the mutant bank's "builds a CPU mask on every call".
    "sdpa_causal": _causal(_FLOAT_MASK, '''        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        p = self.dropout.p if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
''', imports="import torch.nn.functional as F\n"),

    # helper methods, math.sqrt, other names, functions written another way
    "helpers": _causal(_FLOAT_MASK, '''        q, k, v = self._project(x)
        return self._attend(q, k, v)

    def _project(self, x):
        return self.W_query(x), self.W_key(x), self.W_value(x)

    def _attend(self, q, k, v):
        T = q.shape[1]
        future = self.mask.bool()[:T, :T]
        scores = (q @ k.transpose(1, 2)).masked_fill(future, -math.inf)
        weights = torch.softmax(scores / math.sqrt(self.d_out), dim=-1)
        return self.dropout(weights) @ v
''', imports="import math\n", functions='''

def simple_causal_mask(context_length):
    mask = torch.zeros(context_length, context_length)
    for i in range(context_length):
        mask[i, : i + 1] = 1.0
    return mask


def masked_renormalized_weights(attn_weights):
    kept = torch.tril(attn_weights)
    return kept / kept.sum(dim=-1, keepdim=True)


def mask_future_scores(attn_scores):
    T = attn_scores.size(-1)
    upper = torch.ones(T, T, dtype=torch.bool, device=attn_scores.device).triu(diagonal=1)
    out = attn_scores.clone()
    out[..., upper] = -math.inf
    return out


def causal_attn_weights(attn_scores, d_k):
    # scaling first, then masking: the same weights, since -inf / c is still -inf
    scaled = attn_scores / math.sqrt(d_k)
    return torch.softmax(mask_future_scores(scaled), dim=-1)


def dropout_attn_weights(attn_weights, p, seed):
    torch.manual_seed(seed)
    return torch.nn.functional.dropout(attn_weights, p=p, training=True)
'''),
}

# ------------------------------------------------------------------ section 3.6
_WRAPPER_APPEND = '''

class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias))

    def forward(self, x):
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        return torch.cat(outputs, dim=-1)
'''

_WRAPPER_KEYWORDS = '''

class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        heads = [CausalAttention(d_in=d_in, d_out=d_out, context_length=context_length, dropout=dropout,
                                 qkv_bias=qkv_bias) for _ in range(num_heads)]
        self.heads = nn.ModuleList(heads)

    def forward(self, x):
        return torch.cat(tuple(map(lambda head: head(x), self.heads)), dim=2)
'''

_WRAPPER_DSTACK = '''

class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                   for _ in range(num_heads))

    def forward(self, x):
        # x is (b, num_tokens, d_in): dstack joins the heads' (b, num_tokens, d_out) on the last dim
        return torch.dstack([h(x) for h in self.heads])
'''


def _mha(init_mask, forward, wrapper=_WRAPPER_APPEND, imports="", init_head=None):
    """A multihead_attention module: a wrapper and a MultiHeadAttention with the given mask
    creation (the end of __init__) and forward body."""
    init_head = init_head or '''        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.dropout = nn.Dropout(dropout)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.d_out, self.num_heads = d_out, num_heads
        self.head_dim = d_out // num_heads
'''
    return f'''import torch
import torch.nn as nn
{imports}
from causal_attention import CausalAttention
{wrapper}

class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
{init_head}{init_mask}
    def forward(self, x):
{forward}'''


_MHA_SPLIT = '''        b, n, _ = x.shape

        def split(t):
            return t.reshape(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
'''
_MHA_MERGE = '''        context = (weights @ v).permute(0, 2, 1, 3).reshape(b, n, self.d_out)
        return self.out_proj(context)
'''

MHA = {
    "plain": _mha(_FLOAT_MASK, _MHA_SPLIT + '''        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
''' + _MHA_MERGE),

    "einsum": _mha(_FLOAT_MASK, '''        b, n, _ = x.shape
        h, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(b, n, h, hd)
        k = self.W_key(x).view(b, n, h, hd)
        v = self.W_value(x).view(b, n, h, hd)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k)
        scores = scores.masked_fill(self.mask[:n, :n] == 1, float("-inf"))
        weights = self.dropout(torch.softmax(scores / hd ** 0.5, dim=-1))
        context = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, n, self.d_out)
        return self.out_proj(context)
''', wrapper=_WRAPPER_KEYWORDS),

    # every head folded into the batch for torch.bmm
    "bmm": _mha(_FLOAT_MASK, '''        b, n, _ = x.shape
        h, hd = self.num_heads, self.head_dim

        def fold(t):  # (b, n, d_out) -> (b * h, n, hd)
            return t.view(b, n, h, hd).transpose(1, 2).reshape(b * h, n, hd)

        q, k, v = fold(self.W_query(x)), fold(self.W_key(x)), fold(self.W_value(x))
        scores = torch.bmm(q, k.transpose(1, 2)).view(b, h, n, n)
        scores = scores.masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / hd ** 0.5, dim=-1))
        context = torch.bmm(weights.reshape(b * h, n, n), v)
        context = context.view(b, h, n, hd).transpose(1, 2).contiguous().view(b, n, self.d_out)
        return self.out_proj(context)
''', wrapper=_WRAPPER_DSTACK),

    "flinear": _mha(_FLOAT_MASK, _MHA_SPLIT.replace("self.W_query(x)", "F.linear(x, self.W_query.weight, self.W_query.bias)")
                    .replace("self.W_key(x)", "F.linear(x, self.W_key.weight, self.W_key.bias)")
                    .replace("self.W_value(x)", "F.linear(x, self.W_value.weight, self.W_value.bias)") + '''        scores = torch.matmul(q, k.transpose(2, 3))
        scores = scores.masked_fill(self.mask[:n, :n].bool(), -torch.inf)
        weights = self.dropout(F.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = torch.matmul(weights, v).transpose(1, 2).flatten(2)
        return F.linear(context, self.out_proj.weight, self.out_proj.bias)
''', imports="import torch.nn.functional as F\n"),

    "where": _mha(_FLOAT_MASK, _MHA_SPLIT + '''        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        scores = torch.where(self.mask[:n, :n] == 1, float("-inf"), scores)
        weights = self.dropout(torch.softmax(scores, dim=-1))
''' + _MHA_MERGE),

    # a bool buffer of shape (1, 1, T, T), as GPT-2 code often keeps it
    "bool4d": _mha('''        causal = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", causal.view(1, 1, context_length, context_length))
''', _MHA_SPLIT + '''        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(self.mask[:, :, :n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
''' + _MHA_MERGE),

    # a float buffer of shape (1, 1, T, T)
    "mask4d": _mha('''        ones = torch.ones(context_length, context_length)
        self.register_buffer("mask", torch.triu(ones, diagonal=1)[None, None])
''', _MHA_SPLIT + '''        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(self.mask[:, :, :n, :n].bool(), -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
''' + _MHA_MERGE),

    # the mask is rebuilt from context_length, so it need not be saved
    "nonpersistent": _mha('''        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1),
                             persistent=False)
''', _MHA_SPLIT + '''        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
''' + _MHA_MERGE),

    # an additive mask: 0 where a token may look, -inf above the diagonal
    "additive": _mha('''        self.register_buffer("mask", torch.full((context_length, context_length), float("-inf")).triu(1))
''', _MHA_SPLIT + '''        scores = q @ k.transpose(-2, -1) + self.mask[:n, :n]
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
''' + _MHA_MERGE),

    # a Python loop over the heads for the scores; dropout once on all heads' weights
    "loop": _mha(_FLOAT_MASK, '''        b, n, _ = x.shape
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        future = self.mask.bool()[:n, :n]
        head_scores = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            s = q[:, :, cols] @ k[:, :, cols].transpose(1, 2)
            head_scores.append(s.masked_fill(future, -torch.inf))
        weights = torch.softmax(torch.stack(head_scores, dim=1) / self.head_dim ** 0.5, dim=-1)
        weights = self.dropout(weights)
        heads = [weights[:, h] @ v[:, :, h * self.head_dim:(h + 1) * self.head_dim] for h in range(self.num_heads)]
        return self.out_proj(torch.cat(heads, dim=-1))
'''),

    "sdpa": _mha(_FLOAT_MASK, _MHA_SPLIT + '''        allowed = ~self.mask.bool()[:n, :n]
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed,
                                                 dropout_p=self.dropout.p if self.training else 0.0)
        context = context.transpose(1, 2).contiguous().view(b, n, self.d_out)
        return self.out_proj(context)
''', imports="import torch.nn.functional as F\n"),

    # is_causal=True: PyTorch makes the mask; the buffer is kept (the decision: see CAUSAL["sdpa_causal"])
    "sdpa_causal": _mha(_FLOAT_MASK, _MHA_SPLIT + '''        context = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                 dropout_p=self.dropout.p if self.training else 0.0)
        return self.out_proj(context.transpose(1, 2).reshape(b, n, self.d_out))
''', imports="import torch.nn.functional as F\n"),

    # keyword arguments, a ValueError instead of assert, out_proj's bias spelled out,
    # helper methods to split and merge the heads
    "keywords": _mha(_FLOAT_MASK, '''        b, n, _ = x.shape
        q = self._split_heads(self.W_query(x))
        k = self._split_heads(self.W_key(x))
        v = self._split_heads(self.W_value(x))
        scores = q @ k.transpose(2, 3)
        scores.masked_fill_(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1))
        return self.out_proj(self._merge_heads(weights @ v))

    def _split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def _merge_heads(self, t):
        b, _, n, _ = t.shape
        return t.transpose(1, 2).contiguous().view(b, n, self.num_heads * self.head_dim)
''', wrapper=_WRAPPER_KEYWORDS, init_head='''        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(in_features=d_out, out_features=d_out, bias=True)
        self.dropout = nn.Dropout(p=dropout)
'''),
}

# ------------------------------------------------------------------ exercises
_EX_HEAD = '''import torch
import torch.nn as nn

from multihead_attention import MultiHeadAttention, MultiHeadAttentionWrapper
'''

EXERCISES = {
    "plain": _EX_HEAD + '''

def transfer_weights_v2_to_v1(sa_v2, sa_v1):
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(sa_v1, name).copy_(getattr(sa_v2, name).weight.t())
    return sa_v1


def build_2d_output_wrapper(d_in, context_length, dropout=0.0):
    # two heads of one output dimension each: 2-D context vectors
    return MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, 2)


def build_gpt2_small_mha(dropout=0.0):
    return MultiHeadAttention(768, 768, 1024, dropout, 12)
''',

    # the book's argument names as keywords, qkv_bias spelled out
    "keywords": _EX_HEAD + '''
GPT2_SMALL = {"emb_dim": 768, "n_heads": 12, "context_length": 1024}


def transfer_weights_v2_to_v1(sa_v2, sa_v1):
    sa_v1.W_query.data = sa_v2.W_query.weight.data.T.clone()
    sa_v1.W_key.data = sa_v2.W_key.weight.data.T.clone()
    sa_v1.W_value.data = sa_v2.W_value.weight.data.T.clone()
    return sa_v1


def build_2d_output_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in=d_in, d_out=1, context_length=context_length, dropout=dropout,
                                     num_heads=2, qkv_bias=False)


def build_gpt2_small_mha(dropout=0.0):
    return MultiHeadAttention(d_in=GPT2_SMALL["emb_dim"], d_out=GPT2_SMALL["emb_dim"],
                              context_length=GPT2_SMALL["context_length"], dropout=dropout,
                              num_heads=GPT2_SMALL["n_heads"], qkv_bias=False)
''',

    # new Parameters instead of copying in place; 3.3 as a subclass of MultiHeadAttention
    "subclass": _EX_HEAD + '''

def transfer_weights_v2_to_v1(sa_v2, sa_v1):
    sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.detach().T.clone())
    sa_v1.W_key = nn.Parameter(sa_v2.W_key.weight.detach().T.clone())
    sa_v1.W_value = nn.Parameter(sa_v2.W_value.weight.detach().T.clone())
    return sa_v1


def build_2d_output_wrapper(d_in, context_length, dropout=0.0):
    d_out = 2 // 2  # 2 dimensions in all, over 2 heads
    return MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads=2)


class GPT2SmallAttention(MultiHeadAttention):
    """MultiHeadAttention with GPT-2 small's sizes."""

    def __init__(self, dropout=0.0):
        super().__init__(d_in=768, d_out=768, context_length=1024, dropout=dropout, num_heads=12)


def build_gpt2_small_mha(dropout=0.0):
    return GPT2SmallAttention(dropout)
''',

    "state_dict": _EX_HEAD + '''

def transfer_weights_v2_to_v1(sa_v2, sa_v1):
    # v1 keeps (d_in, d_out), nn.Linear keeps (d_out, d_in)
    new_state = {name: layer.weight.T for name, layer in
                 (("W_query", sa_v2.W_query), ("W_key", sa_v2.W_key), ("W_value", sa_v2.W_value))}
    sa_v1.load_state_dict(new_state)
    return sa_v1


def build_2d_output_wrapper(d_in, context_length, dropout=0.0):
    num_heads, d_out = 2, 1
    return MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads)


def build_gpt2_small_mha(dropout=0.0):
    d_model, n_heads, n_ctx = 768, 12, 1024
    mha = MultiHeadAttention(d_model, d_model, n_ctx, dropout, num_heads=n_heads)
    return mha
''',
}

EXERCISES["partial"] = _EX_HEAD.replace("import torch.nn as nn\n", "from functools import partial\n") + '''
# GPT-2 small's attention with every size fixed; only the dropout rate is left open
GPT2SmallMHA = partial(MultiHeadAttention, d_in=768, d_out=768, context_length=1024, num_heads=12)


def transfer_weights_v2_to_v1(sa_v2, sa_v1):
    pairs = [(sa_v1.W_query, sa_v2.W_query), (sa_v1.W_key, sa_v2.W_key), (sa_v1.W_value, sa_v2.W_value)]
    with torch.no_grad():
        for target, layer in pairs:
            target[:] = layer.weight.transpose(0, 1)
    return sa_v1


def build_2d_output_wrapper(d_in, context_length, dropout=0.0):
    wrapper = MultiHeadAttentionWrapper(d_in, d_out=1, context_length=context_length, dropout=dropout, num_heads=2)
    return wrapper


def build_gpt2_small_mha(dropout=0.0):
    return GPT2SmallMHA(dropout=dropout)
'''

VARIANTS = {"simple_attention": SIMPLE, "self_attention": SELF, "causal_attention": CAUSAL,
            "multihead_attention": MHA, "exercises": EXERCISES}


Alternative = partial(banks.Alternative, VARIANTS)


def _all(style, *modules):
    return {m: style for m in modules}


ALTERNATIVES = [
    Alternative("plain student: own names, math.sqrt, torch.stack, append loops"),
    Alternative("einsum everywhere", _all("einsum", "simple_attention", "self_attention", "causal_attention",
                                          "multihead_attention")),
    Alternative("torch.bmm, heads folded into the batch; wrapper with torch.dstack",
                _all("bmm", "causal_attention", "multihead_attention")),
    Alternative("F.linear with the layers' weights; v2 from a list comprehension, bias positional",
                {"self_attention": "einsum", "causal_attention": "flinear", "multihead_attention": "flinear"}),
    Alternative("softmax by hand with the maximum subtracted", {"simple_attention": "stable"}),
    Alternative("attributes set in a loop over the book's names, helper methods",
                {"self_attention": "setattr", "causal_attention": "helpers"}),
    Alternative("torch.where instead of masked_fill; CausalAttention's mask a bool buffer",
                {"causal_attention": "bool_where", "multihead_attention": "where"}),
    Alternative("bool mask buffers: (T, T) in CausalAttention, (1, 1, T, T) in MultiHeadAttention",
                {"causal_attention": "bool", "multihead_attention": "bool4d"}),
    Alternative("float mask buffers with leading dims: (1, T, T) and (1, 1, T, T)",
                {"causal_attention": "mask3d", "multihead_attention": "mask4d"}),
    Alternative("MultiHeadAttention's mask registered with persistent=False",
                {"multihead_attention": "nonpersistent"}),
    Alternative("MultiHeadAttention with an additive -inf mask", {"multihead_attention": "additive"}),
    Alternative("scaled_dot_product_attention with the registered mask, dropout_p in training",
                _all("sdpa", "causal_attention", "multihead_attention")),
    Alternative("scaled_dot_product_attention with is_causal=True, the mask buffer kept but unused",
                _all("sdpa_causal", "causal_attention", "multihead_attention")),
    Alternative("MultiHeadAttention with a Python loop over the heads", {"multihead_attention": "loop"}),
    Alternative("keyword arguments everywhere, qkv_bias=False spelled out, ValueError instead of assert",
                {"self_attention": "setattr", "multihead_attention": "keywords", "exercises": "keywords"}),
    Alternative("exercise 3.3 as a subclass of MultiHeadAttention; 3.1 with new Parameters",
                {"exercises": "subclass"}),
    Alternative("exercise 3.1 with load_state_dict; sizes as named locals", {"exercises": "state_dict"}),
    Alternative("exercise 3.3 from functools.partial; 3.1 by slice assignment", {"exercises": "partial"}),
    Alternative("saved on Windows: UTF-8 with a byte-order mark and CRLF line endings",
                newline="\r\n", encoding="utf-8-sig"),
    Alternative("PEP 263 coding line, latin-1 file with accents in a comment",
                {"multihead_attention": "einsum"}, encoding="latin-1", coding_line="# -*- coding: latin-1 -*-"),
    Alternative("indented with tabs, old Mac CR line endings", {"causal_attention": "helpers"}, newline="\r",
                tabs=True),
    Alternative("mixed: einsum 3.3 functions, weights set in a loop, bool masks, keyword exercises",
                {"simple_attention": "einsum", "self_attention": "setattr", "causal_attention": "bool",
                 "multihead_attention": "bool4d", "exercises": "keywords"}),
]
