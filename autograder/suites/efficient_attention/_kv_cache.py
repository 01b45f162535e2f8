"""The KV cache's helpers: the reference run the way the child runs the student's model, and
the cache's mistakes, written once with switches.

The model runs with the grader's linear maps in place of its norms and feed forward networks
(the plan's ``stand_in``; the reference gets the same maps), so a mistake in chapter 4's
pieces costs nothing here. The attention is what is judged; where the student's attention
without a cache is their own chapter-3 attention, mistake included (``inherited``), the
cache is judged against their own model without a cache instead of the reference's: a
chapter-3 mistake is charged in chapter 3 only.
"""
import copy

import torch

from autograder.grading.compare import seeded, set_seed
from autograder.grading.kit import known_mistake, once
from autograder.sandbox.session import StudentFailure

# Small configurations: heads, depths and vocabularies of several sizes; qkv_bias both ways.
CFGS = [
    {"vocab_size": 37, "context_length": 12, "emb_dim": 12, "n_heads": 3, "n_layers": 2, "drop_rate": 0.0,
     "qkv_bias": False},
    {"vocab_size": 53, "context_length": 10, "emb_dim": 8, "n_heads": 2, "n_layers": 3, "drop_rate": 0.0,
     "qkv_bias": True},
    {"vocab_size": 29, "context_length": 9, "emb_dim": 16, "n_heads": 4, "n_layers": 1, "drop_rate": 0.0,
     "qkv_bias": False},
]
ATT = "kv_cache.MultiHeadAttention"
CH3 = "multihead_attention.MultiHeadAttention"
BLOCK = "kv_cache.TransformerBlock"
GPT = "kv_cache.GPTModel"
GEN = "kv_cache.generate_text_simple_cached"

def built(factory, args, seed):
    """The reference ``factory(*args)`` built after ``set_seed(seed)``, in eval mode, once per
    process; callers copy it before running it with a cache."""
    def build():
        set_seed(seed)
        return factory(*args).eval()
    return once(("built", factory, repr(args), seed), build)


def params(module):
    return {k: v.detach() for k, v in module.named_parameters()}


def token_ids(b, n, vocab, seed):
    return torch.randint(0, vocab, (b, n), generator=torch.Generator().manual_seed(seed))


# -- stand-ins for chapter 4's pieces ------------------------------------------------------------
def linear_map(d, seed):
    """{"weight", "bias"} of a d -> d linear map that keeps values of order one."""
    return {"weight": seeded(d, d, seed=seed) / d**0.5, "bias": seeded(d, seed=seed + 1) * 0.5}


def block_spec(d, seed, prefix=""):
    return {f"{prefix}{name}": linear_map(d, seed + 10 * i) for i, name in enumerate(("ff", "norm1", "norm2"))}


def gpt_spec(cfg, seed):
    spec = {"final_norm": linear_map(cfg["emb_dim"], seed)}
    for i in range(cfg["n_layers"]):
        spec.update(block_spec(cfg["emb_dim"], seed + 100 * (i + 1), f"trf_blocks.{i}."))
    return spec


def swapped(module, spec):
    """A private copy of a reference module with its submodules swapped for the stand-ins."""
    module = copy.deepcopy(module)
    for dotted, weights in spec.items():
        owner_name, _, leaf = dotted.rpartition(".")
        owner = module.get_submodule(owner_name) if owner_name else module
        linear = torch.nn.Linear(weights["weight"].shape[1], weights["weight"].shape[0])
        with torch.no_grad():
            linear.weight.copy_(weights["weight"])
            linear.bias.copy_(weights["bias"])
        setattr(owner, leaf, linear)
    return module


def gpt_case(ref, cfg, seed):
    """The reference GPTModel built after ``seed``, with stand-ins; and the spec of the stand-ins.
    Once per process: the grader runs it only without the cache, which changes nothing in it."""
    def make():
        spec = gpt_spec(cfg, seed + 1)
        return swapped(built(ref.kv_cache.GPTModel, (cfg,), seed), spec), spec
    return once(("gpt_case", repr(cfg), seed), make)


def build_step(let, call, args, module, spec=None):
    """A plan step building the student's ``call(*args)`` with ``module``'s weights, in eval mode."""
    step = {"let": let, "call": call, "args": list(args), "params": params(module), "train": False}
    if spec:
        step["stand_in"] = spec
    return step


# -- the cache's mistakes: the reference's maths, with switches ----------------------------------
def fresh_state(n_layers=1):
    return {"pos": 0, "att": [{"k": None, "v": None, "pos": 0} for _ in range(n_layers)]}


def attention(att, x, state, variant=None, use_cache=True):
    """The reference attention ``att`` (its weights) on x, with its cache in ``state``
    ({"k", "v", "pos"}, changed in place), made with the mistake ``variant``."""
    b, n, _ = x.shape
    h, hd = att.num_heads, att.head_dim
    queries = att.W_query(x).view(b, n, h, hd).transpose(1, 2)
    keys, values = att.W_key(x), att.W_value(x)  # (b, n, d_out): split below
    cached = use_cache and variant != "no cache"
    if cached:
        appended = keys if variant == "keys appended as values" else values
        state["k"] = keys if state["k"] is None else torch.cat([state["k"], keys], dim=1)
        state["v"] = values if state["v"] is None else torch.cat([state["v"], appended], dim=1)
        keys, values = state["k"], state["v"]
    t = keys.shape[1]
    keys, values = (z.view(b, t, h, hd).transpose(1, 2) for z in (keys, values))
    if cached and variant == "split wrong":
        keys = state["k"].view(b, h, t, hd)
    start = state["pos"] if cached and variant != "mask not offset" else 0
    if cached:
        state["pos"] += 1 if variant == "mask pointer by one" else n
    # row i is token start + i of the sequence: it sees keys 0..start + i
    mask = torch.ones(n, t, dtype=torch.bool).triu(diagonal=start + 1)
    scores = (queries @ keys.transpose(2, 3)).masked_fill(mask, -torch.inf)
    weights = torch.softmax(scores / hd**0.5, dim=-1)
    context = (weights @ values).transpose(1, 2).reshape(b, n, h * hd)
    return att.out_proj(context)


def block(blk, x, state, variant=None, use_cache=True):
    """A reference block (with its stand-ins) and the cache mistakes of its attention."""
    x = x + attention(blk.att, blk.norm1(x), state, variant, use_cache)
    return x + blk.ff(blk.norm2(x))


def gpt(model, idx, state, variant=None):
    """The reference GPTModel (with its stand-ins) fed ``idx`` with the cache in ``state``."""
    n = idx.shape[1]
    start = 0 if variant == "positions restart" else state["pos"]
    state["pos"] += 1 if variant == "positions by one" else n
    x = model.tok_emb(idx) + model.pos_emb(torch.arange(start, start + n))
    for blk, att_state in zip(model.trf_blocks, state["att"]):
        x = block(blk, x, att_state, variant)
    return model.out_head(model.final_norm(x))


RESET_MISTAKES = {
    "the cache not reset between calls (generate_text_simple_cached starts with model.reset_kv_cache())": "no reset",
    "reset_kv_cache not resetting current_pos (the positions go on from the last sequence)": "positions kept",
    "reset_cache not resetting the mask's position (ptr_current_pos)": "mask position kept",
    "reset_cache keeping the cached keys and values": "keys kept",
    "reset_kv_cache resetting only the first block's cache": "first block only",
}


def reset(state, variant=None):
    """The state after a reset made with the mistake ``variant``."""
    if variant == "no reset":
        return state
    new = fresh_state(len(state["att"]))
    if variant == "positions kept":
        new["pos"] = state["pos"]
    for i, (old, att) in enumerate(zip(state["att"], new["att"])):
        if variant == "first block only" and i > 0:
            new["att"][i] = old
        elif variant == "mask position kept":
            att["pos"] = old["pos"]
        elif variant == "keys kept":
            att["k"], att["v"] = old["k"], old["v"]
    return new


def pieces_output(fn, x, sizes, state, variant):
    """``fn`` fed x's tokens in pieces of ``sizes`` with one cache; the outputs concatenated."""
    outs, start = [], 0
    for size in sizes:
        outs.append(fn(x[:, start:start + size], state, variant))
        start += size
    return torch.cat(outs, dim=1)


def generate(model, idx, max_new_tokens, state, variant=None):
    """The book's cached generation on the reference model, with the cache in ``state``."""
    logits = gpt(model, idx, state, variant)
    last = 0 if variant == "first position" else -1
    for _ in range(max_new_tokens):
        next_idx = logits[:, last].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, next_idx], dim=1)
        logits = gpt(model, next_idx, state, variant)
    return idx


def generate_uncached(model, idx, max_new_tokens):
    """Chapter 4's generate_text_simple on the reference model: the whole sequence every step
    (once per process for each model and prompt: the models are the cached ones of ``gpt_case``,
    so an id stays theirs)."""
    def make(idx=idx):
        with torch.no_grad():
            for _ in range(max_new_tokens):
                idx = torch.cat([idx, model(idx)[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
        return idx
    return once(("generated", id(model), repr(idx.tolist()), max_new_tokens), make)


ATTENTION_MISTAKES = {
    "the mask not offset by the cache length (a new token's mask row is its position in the whole sequence, "
    "not its index in x: mask[start:start + num_tokens, :num_keys]; scaled_dot_product_attention's is_causal=True "
    "makes this mistake once keys are cached)": "mask not offset",
    "the cached keys split into heads the wrong way (view(b, num_heads, num_tokens, head_dim) instead of "
    "view(b, num_tokens, num_heads, head_dim), then .transpose(1, 2))": "split wrong",
    "the new keys appended to the values' cache (cache_v grows by values_new)": "keys appended as values",
    "the mask's position advanced by one per call instead of by the tokens fed": "mask pointer by one",
}
FIRST_POSITION = ("the next token read from the first position's logits (logits[:, 0]): the prediction for the "
                  "next token is at the last position, logits[:, -1]")
NO_CACHE = ("the cache not used (use_cache ignored by the attention, or not passed on to it: each piece then "
            "attends only to its own tokens)")
GPT_MISTAKES = {
    "the positions restarting at 0 at every call (with use_cache=True they go on from current_pos)":
        "positions restart",
    "current_pos advanced by one per call instead of by the tokens fed": "positions by one",
}


def no_grad(fn):
    def wrapped(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)
    return wrapped


# -- truths: the reference, or the student's own attention's mistake ------------------------------
def inherited_steps(ref, cfg, seed, prefix="probe"):
    """Plan steps running the student's attention without a cache and their chapter-3 attention,
    with the same weights, on the same input; and what ``inherited`` needs to judge them."""
    args = (cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], 0.0, cfg["n_heads"], cfg["qkv_bias"])
    att = built(ref.kv_cache.MultiHeadAttention, args, seed)
    x = seeded(2, min(5, cfg["context_length"]), cfg["emb_dim"], seed=seed + 1)
    return [build_step(f"{prefix}_kv", ATT, args, att), build_step(f"{prefix}_ch3", CH3, args, att),
            {"let": f"{prefix}_kv_out", "call": f"{prefix}_kv", "args": [x], "return": True},
            {"let": f"{prefix}_ch3_out", "call": f"{prefix}_ch3", "args": [x], "return": True}], (att, x, prefix)


def close(a, b):
    return isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and torch.allclose(
        a, b, atol=1e-5, rtol=1e-4)


def inherited(plan, probe):
    """Whether the student's attention without a cache differs from the reference's only as their
    own chapter-3 attention does (a mistake charged in chapter 3, never here)."""
    att, x, prefix = probe
    try:
        mine, theirs = plan.values[f"{prefix}_kv_out"], plan.values[f"{prefix}_ch3_out"]
    except StudentFailure:  # either did not run: no evidence of an inherited mistake
        return False
    with torch.no_grad():
        right = att(x)
    return not close(mine, right) and close(mine, theirs)


INHERITED_NOTE = ("{what} was judged against your own model without the cache: your attention without the cache "
                  "repeats your chapter-3 MultiHeadAttention's answer, which differs from the book's (charged in "
                  "chapter 3, not here).")


def tokens_mistake(actual, mistakes):
    """The name of the mistake whose generated tokens are exactly ``actual``, or None."""
    return known_mistake(actual, mistakes, lambda got, model: 0.0 if isinstance(model, torch.Tensor)
                         and got.shape == model.shape and torch.equal(got, model) else None)
