"""The efficient-attention suites' helpers: one functional multi-head attention with switches
for the mistakes students make, the weights each class holds, and the reference run.

Every variant of attention in this assignment is chapter 3's computation reorganised, so the
mistake models are written once here, as edits of that computation, on weights in chapter 3's
layout: W = {"wq", "wk", "wv", "bq", "bk", "bv", "wo", "bo"} (nn.Linear's (out, in) weights;
a bias None where qkv_bias is False).
"""
import copy

import torch
import torch.nn.functional as F

from autograder.grading.compare import ATOL, RTOL, seeded, set_seed, yours_vs_expected
from autograder.grading.kit import by_value, kept, once


def weights(d_in, d_out, qkv_bias, seed, kv_out=None):
    """Chapter 3's weights, seeded; keys and values ``kv_out`` wide (grouped-query attention)."""
    kv_out = d_out if kv_out is None else kv_out
    shapes = {"wq": (d_out, d_in), "wk": (kv_out, d_in), "wv": (kv_out, d_in), "wo": (d_out, d_out),
              "bq": (d_out,), "bk": (kv_out,), "bv": (kv_out,), "bo": (d_out,)}
    W = {name: seeded(*shape, seed=seed + i) / shape[-1]**0.5 for i, (name, shape) in enumerate(shapes.items())}
    if not qkv_bias:
        W["bq"] = W["bk"] = W["bv"] = None
    return W


def ch03_params(W):
    """W by chapter 3's MultiHeadAttention names (and GroupedQueryAttention's, SlidingWindowAttention's)."""
    out = {"W_query.weight": W["wq"], "W_key.weight": W["wk"], "W_value.weight": W["wv"],
           "out_proj.weight": W["wo"], "out_proj.bias": W["bo"]}
    if W["bq"] is not None:
        out.update({"W_query.bias": W["bq"], "W_key.bias": W["bk"], "W_value.bias": W["bv"]})
    return out


def ch03_stand_ins(W):
    """A chapter-3 MultiHeadAttention's four linear layers as the plan's stand-ins for W."""
    return {"W_query": {"weight": W["wq"], "bias": W["bq"]}, "W_key": {"weight": W["wk"], "bias": W["bk"]},
            "W_value": {"weight": W["wv"], "bias": W["bv"]}, "out_proj": {"weight": W["wo"], "bias": W["bo"]}}


def loaded(cls, args, params, train=False):
    """A reference module built with ``args`` and ``params`` copied in by name (strictly)."""
    set_seed(0)
    module = cls(*args).train(train)
    own = dict(module.named_parameters())
    if sorted(own) != sorted(params):
        raise AssertionError(f"{cls.__name__}: " + yours_vs_expected(yours=sorted(params), yours_are="parameters",
                                                                      expected=sorted(own)))
    with torch.no_grad():
        for name, value in params.items():
            if own[name].shape != value.shape:
                raise AssertionError(f"{cls.__name__}: {name}: " + yours_vs_expected(
                    yours=tuple(value.shape), yours_are="has shape", expected=tuple(own[name].shape)))
            own[name].copy_(value)
    return module


def run(module, x, seed=None):
    """The module's output on ``x`` in its mode, after ``set_seed(seed)``; once per process for a
    module ``once`` keeps (callers never mutate the answer)."""
    if kept(module):
        return once(("efficient run", id(module), by_value(x), seed), lambda: _run(module, x, seed))
    return _run(module, x, seed)


def _run(module, x, seed):
    module = copy.deepcopy(module)
    if seed is not None:
        set_seed(seed)
    with torch.no_grad():
        return module(x)


def state(module):
    return {k: v.detach().clone() for k, v in module.named_parameters()}


# -- attention, written once with switches -----------------------------------------------------------
def split(t, heads):
    """(b, n, heads * hd) -> (b, heads, n, hd)"""
    b, n, d = t.shape
    return t.view(b, n, heads, d // heads).transpose(1, 2)


def hidden_mask(n, window=None, variant="causal"):
    """(n, n) bool, True where query i may not see key j: the future, and with ``window`` the
    keys ``window`` or more back (query i sees keys i - window + 1 .. i)."""
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    if variant == "none":
        return torch.zeros(n, n, dtype=torch.bool)
    if variant == "inverted":  # only the strict future may be seen: SDPA's True read as "hide"
        return j <= i
    if variant == "diagonal hidden":
        return j >= i
    hidden = j > i
    if window is not None:
        if variant == "window + 1":
            hidden = hidden | (j < i - window)
        elif variant == "window - 1":
            hidden = hidden | (j <= i - window + 1)
        elif variant == "window only":
            hidden = j <= i - window
        elif variant == "window both ways":
            hidden = (j - i).abs() >= window
        else:
            hidden = hidden | (j <= i - window)
    return hidden


def attention(x, W, heads, *, variant="book", groups=None, window=None, drop=0.0, seed=None, rope=None,
              core="manual"):
    """Chapter 3's multi-head attention on weights W, with one mistake (``variant``).

    ``groups``: key/value heads (grouped-query attention); ``window``: sliding window; ``rope``:
    (cos, sin, apply) rotating queries and keys; ``core`` "sdpa" runs the attention itself
    through F.scaled_dot_product_attention (whose dropout draws differ in layout from none)."""
    groups = heads if groups is None else groups
    q, k, v = (F.linear(x, W[w], W[b]) for w, b in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
    swaps = {"keys and queries swapped": (k, q, v), "values and keys swapped": (q, v, k),
             "queries and values swapped": (v, k, q)}
    q, k, v = swaps.get(variant, (q, k, v))
    if variant == "heads split before q, k, v":  # qkv viewed as (b, n, heads, 3, head_dim)
        b, n, _ = x.shape
        qkv = torch.cat([q, k, v], dim=-1).view(b, n, heads, 3, -1)
        q, k, v = (t.transpose(1, 2) for t in qkv.unbind(3))
    else:
        q, k, v = split(q, heads), split(k, groups), split(v, groups)
    if groups != heads:
        if variant == "repeat":
            k, v = k.repeat(1, heads // groups, 1, 1), v.repeat(1, heads // groups, 1, 1)
        else:
            k, v = k.repeat_interleave(heads // groups, dim=1), v.repeat_interleave(heads // groups, dim=1)
    if rope is not None:
        q = rope(q)
        if variant == "rope on values too":
            v = rope(v)
        if variant != "rope on queries only":
            k = rope(k)
    n, hd = q.shape[-2], q.shape[-1]
    mask_variant = {"no mask": "none", "mask inverted": "inverted", "window + 1": "window + 1",
                    "window - 1": "window - 1", "window both ways": "window both ways", "window only": "window only",
                    "diagonal hidden": "diagonal hidden"}.get(variant, "causal")
    hidden = hidden_mask(n, None if variant == "no window" else window, mask_variant)
    if core == "sdpa":
        p = drop if variant == "dropout in eval" else 0.0
        if variant == "dropout in eval":
            set_seed(seed)
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=~hidden, dropout_p=p)
    else:
        scores = (q @ k.transpose(-2, -1)).masked_fill(hidden, -torch.inf)
        scale = {"no scaling": 1.0, "scaled by d_out": (hd * heads)**0.5}.get(variant, hd**0.5)
        attn = torch.softmax(scores / scale, dim=-1)
        if variant == "dropout in eval" or (drop and variant == "book"):
            set_seed(seed)
            attn = F.dropout(attn, drop)
        context = attn @ v
    b, _, n, _ = context.shape
    if variant == "heads not moved back before merging":
        merged = context.reshape(b, n, -1)
    else:
        merged = context.transpose(1, 2).reshape(b, n, -1)
    if variant == "no output projection":
        return merged
    return F.linear(merged, W["wo"], W["bo"])


LAYOUT_MISTAKES = {
    "queries and keys swapped (the first d_out outputs of qkv are the queries, then the keys, then the values)":
        "keys and queries swapped",
    "keys and values swapped (the first d_out outputs of qkv are the queries, then the keys, then the values)":
        "values and keys swapped",
    "queries and values swapped (the first d_out outputs of qkv are the queries, then the keys, then the values)":
        "queries and values swapped",
    "the heads split before queries, keys and values (qkv viewed as (b, n, num_heads, 3, head_dim); it holds "
    "(b, n, 3, num_heads, head_dim))": "heads split before q, k, v",
}
COMMON_MISTAKES = {
    "no causal mask": "no mask",
    "the causal mask inverted (only later tokens seen)": "mask inverted",
    "scores not scaled by sqrt(head_dim)": "no scaling",
    "scores scaled by sqrt(d_out) instead of sqrt(head_dim)": "scaled by d_out",
    "the heads merged without moving them back first (transpose(1, 2) before the reshape)":
        "heads not moved back before merging",
    "no output projection": "no output projection",
}


def first_match(actual, models):
    """The first of ``models`` ({name: the grader's answer, or a function computing it}) that ``actual`` is,
    within the comparisons' tolerance (a NaN where the model has one), or None: which of the grader's models
    an answer follows (that model is then the truth), never the answer itself taken as the truth."""
    if not isinstance(actual, torch.Tensor):
        return None
    for name, model in models.items():
        value = model() if callable(model) else model
        if (value.shape == actual.shape and value.dtype == actual.dtype
                and torch.allclose(actual, value, atol=ATOL, rtol=RTOL, equal_nan=True)):
            return name
    return None


def mistakes(x, W, heads, names, *, drop=0.0, seed=None, core="manual", **kw):
    """{mistake name: thunk} for the variants in ``names`` ({name: variant})."""
    return {name: (lambda v=v: attention(x, W, heads, variant=v, drop=drop, seed=seed, core=core, **kw))
            for name, v in names.items()}


# -- the plan's plumbing --------------------------------------------------------------------------
def named_parameters_steps(let, target):
    """Plan steps returning ``target``'s parameters as [[name, tensor], ...]."""
    return [{"let": f"{let}_gen", "call": f"{target}.named_parameters"},
            {"let": let, "iterate": f"{let}_gen", "return": True}]


def as_dict(pairs, what):
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                                              and isinstance(p[1], torch.Tensor) for p in pairs):
        raise AssertionError(f"{what}.named_parameters() did not give (name, parameter) pairs")
    return dict(pairs)


def build_and_run(let, target, args, params, x, *, train=False, seed=5, buffers=False):
    """Plan steps: ``target(*args)`` with ``params`` copied in, in train or eval mode, run on x;
    with ``buffers`` also its buffers' names (``{let}_buffers``)."""
    steps = [{"let": let, "call": target, "args": args, "params": params, "train": train},
             {"let": f"{let}_out", "call": let, "args": [x], "seed": seed, "return": True}]
    if buffers:
        steps += [{"let": f"{let}_buffers_gen", "call": f"{let}.named_buffers"},
                  {"let": f"{let}_buffers", "iterate": f"{let}_buffers_gen", "return": True}]
    return steps


def expect_buffers(plan, let, names, what):
    """The module of step ``let`` registered buffers ``names`` (a buffer moves with .to(device))."""
    found = plan.values[f"{let}_buffers"]
    have = {pair[0] for pair in found if isinstance(pair, list) and pair and isinstance(pair[0], str)}
    missing = [name for name in names if name not in have]
    if missing:
        raise AssertionError(f"{what} has no buffer {' or '.join(missing)} (register_buffer: a plain tensor "
                             f"attribute stays on the CPU when the module moves to a GPU); its buffers: {sorted(have)}")


# -- RoPE, written once with switches ---------------------------------------------------------------
def rope_params(head_dim, theta_base=10_000, context_length=4096, variant="book"):
    """(cos, sin) as compute_rope_params, or with one mistake."""
    if variant == "exponent over head_dim // 2 steps":
        inv_freq = 1.0 / theta_base ** (torch.arange(head_dim // 2, dtype=torch.float32) / head_dim)
    else:
        inv_freq = 1.0 / theta_base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    positions = torch.arange(context_length, dtype=torch.float32) + (variant == "positions from 1")
    angles = positions[:, None] * inv_freq[None, :]
    if variant == "interleaved":
        angles = angles.repeat_interleave(2, dim=1)
    else:
        angles = torch.cat([angles, angles], dim=1)
    if variant == "cos and sin swapped":
        return torch.sin(angles), torch.cos(angles)
    return torch.cos(angles), torch.sin(angles)


def rope_apply(x, cos, sin, offset=0, variant="book"):
    """apply_rope, or with one mistake."""
    n, hd = x.shape[-2], x.shape[-1]
    if variant != "no offset":
        cos, sin = cos[offset:offset + n], sin[offset:offset + n]
    else:
        cos, sin = cos[:n], sin[:n]
    if variant == "interleaved pairs":  # pairs (0, 1), (2, 3), ... with the halves' angles
        x1, x2 = x[..., 0::2], x[..., 1::2]
        rotated = torch.stack((-x2, x1), dim=-1).flatten(-2)
    else:
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        rotated = torch.cat((x2, -x1) if variant == "rotated the wrong way" else (-x2, x1), dim=-1)
    if variant == "x not scaled":
        return x + rotated * sin
    return x * cos + rotated * sin
