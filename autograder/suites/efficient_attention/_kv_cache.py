"""The KV cache's helpers: the reference run the way the child runs the student's model, and
the cache's mistakes, written once with switches.

The model runs with the grader's linear maps in place of its norms and feed forward networks
(the plan's ``stand_in``; the reference gets the same maps), so a mistake in chapter 4's
pieces costs nothing here. The attention is what is judged.

Every answer credited is one the reference computed here, on the grader's inputs and weights.
A cache is proved by a witness, never by a count the child keeps: between the calls of one
sequence the grader draws W_key and W_value anew (``rekeyed``; the plan's ``params`` and
``reload``). A real cache keeps the keys and values computed when each token was fed, so its
next outputs follow the old weights for the old tokens; a model that recomputes them follows
the new ones, and the reference, run through the same calls, says which was right.

Where the student's attention without the cache makes a chapter-3 mistake the grader can name
(``BASE_MISTAKES``: ch03's own names), the cache is judged against the reference with that same
mistake, computed here: a chapter-3 mistake is charged once. One the grader cannot model costs
the cache's checks too; the student's own answers never become the truth.
"""
import copy

import torch

from autograder.grading import probes
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
    if spec:  # chapter 4's pieces stood in for while built too: a blank or wrong one costs nothing here
        step.update(probes.on_stand_ins(spec, CHAPTER_4))
    return step


# the chapter-4 classes the cached block is built from, by the names it calls, per piece
CHAPTER_4 = {"ff": "feed_forward.FeedForward", "norm1": "layer_norm.LayerNorm", "norm2": "layer_norm.LayerNorm",
             "final_norm": "layer_norm.LayerNorm"}


# -- the cache's mistakes: the reference's maths, with switches ----------------------------------
def fresh_state(n_layers=1):
    return {"pos": 0, "att": [{"k": None, "v": None, "x": None, "pos": 0} for _ in range(n_layers)]}


# Chapter 3's mistakes the cached attention may repeat, by ch03's names: {name: switches of ``attention``}
BASE_MISTAKES = {
    "no 1/sqrt(d_k) scaling of the scores": {"scale": "none"},
    "scores divided by d_k instead of sqrt(d_k)": {"scale": "d_k"},
    "scores scaled by sqrt(d_out) instead of sqrt(head_dim)": {"scale": "d_out"},
    "scores scaled by sqrt(d_in), the input size, instead of sqrt(d_k) (keys.shape[-1])": {"scale": "d_in"},
    "softmax over the wrong dimension (use dim=-1)": {"softmax_dim": -2},
    "softmax over the wrong dimension (dim=1, the heads; use dim=-1)": {"softmax_dim": 1},
    "the keys projected with W_query (copy-paste: keys = self.W_query(x))": {"keys_from": "query"},
    "the mask also hides the diagonal (use triu(..., diagonal=1))": {"mask_diagonal": 0},
    "masked scores filled with 0 instead of -inf": {"fill": 0.0},
    "no causal mask": {"causal": False},
    "weights zeroed after the softmax without renormalising": {"post_mask": True},
    "heads split without the transpose (view to (b, num_tokens, num_heads, head_dim), then transpose(1, 2))":
        {"split": "reshape"},
    "heads merged without transposing back (transpose(1, 2) before the final view)": {"merge": "reshape"},
    "out_proj is not applied to the merged heads": {"out_proj": False},
}
WHOLE_SEQUENCE = ("the whole sequence fed at every step (each step then redoes the work of all the tokens before "
                  "it, and the grader's W_key and W_value, changed between steps, reach the earlier tokens too; feed "
                  "only the new token)")
RECOMPUTED = ("the keys and values of the earlier tokens recomputed at every call instead of kept (the grader "
              "changed W_key and W_value between calls: a cache keeps the keys and values each token got when it "
              "was fed, and your outputs follow the new weights for the earlier tokens too)")


def attention(att, x, state, variant=None, use_cache=True, base=None, drop=None):
    """The reference attention ``att`` (its weights) on x, with its cache in ``state``
    ({"k", "v", "x", "pos"}, changed in place), made with the cache mistake ``variant`` and the
    chapter-3 mistake ``base`` (switches: ``BASE_MISTAKES``); ``drop``: (rate, seed), the dropout
    of training mode on the attention weights, drawn after that seed (the first draw of the call)."""
    base = base or {}
    b, n, d_in = x.shape
    h, hd = att.num_heads, att.head_dim
    queries = att.W_query(x)
    W_key = att.W_query if base.get("keys_from") == "query" else att.W_key
    keys, values = W_key(x), att.W_value(x)  # (b, n, d_out): split below
    cached = use_cache and variant != "no cache"
    if cached and variant == "recompute":  # the inputs kept, their keys made again with today's weights
        state["x"] = x if state["x"] is None else torch.cat([state["x"], x], dim=1)
        keys, values = W_key(state["x"]), att.W_value(state["x"])
    elif cached:
        appended = keys if variant == "keys appended as values" else values
        state["k"] = keys if state["k"] is None else torch.cat([state["k"], keys], dim=1)
        state["v"] = values if state["v"] is None else torch.cat([state["v"], appended], dim=1)
        keys, values = state["k"], state["v"]
    t = keys.shape[1]

    def split(z, m):
        return z.reshape(b, h, m, hd) if base.get("split") == "reshape" else z.view(b, m, h, hd).transpose(1, 2)
    queries, keys, values = split(queries, n), split(keys, t), split(values, t)
    if cached and variant == "split wrong":
        keys = state["k"].view(b, h, t, hd)
    start = state["pos"] if cached and variant != "mask not offset" else 0
    if cached:
        state["pos"] += 1 if variant == "mask pointer by one" else n
    # row i is token start + i of the sequence: it sees keys 0..start + i
    mask = torch.ones(n, t, dtype=torch.bool).triu(diagonal=start + base.get("mask_diagonal", 1))
    causal, post = base.get("causal", True), base.get("post_mask", False)
    scores = queries @ keys.transpose(2, 3)
    if causal and not post:
        scores = scores.masked_fill(mask, base.get("fill", -torch.inf))
    divisor = {"head": hd**0.5, "none": 1.0, "d_k": float(hd), "d_out": (h * hd)**0.5,
               "d_in": d_in**0.5}[base.get("scale", "head")]
    weights = torch.softmax(scores / divisor, dim=base.get("softmax_dim", -1))
    if causal and post:
        weights = weights.masked_fill(mask, 0.0)
    if drop is not None:
        set_seed(drop[1])
        weights = torch.nn.functional.dropout(weights, drop[0])
    context = weights @ values
    context = (context.reshape(b, n, h * hd) if base.get("merge") == "reshape"
               else context.transpose(1, 2).reshape(b, n, h * hd))
    return att.out_proj(context) if base.get("out_proj", True) else context


# -- the witness: W_key and W_value drawn anew between the calls of one sequence ------------------
def rekeyed(module, seed, count):
    """``count`` parameter sets of ``module``: its own, with every attention's W_key and W_value
    (weights and biases) drawn anew, one draw per set (the plan's ``params`` or ``reload``)."""
    def make():
        own, sets = params(module), []
        for k in range(count):
            new = dict(own)
            for j, (name, value) in enumerate(own.items()):
                if ".W_key." in f".{name}" or ".W_value." in f".{name}":
                    new[name] = seeded(*value.shape, seed=seed + 1000 * k + j, scale=2.0 / value.shape[-1]**0.5)
            sets.append(new)
        return sets
    return once(("rekeyed", id(module), seed, count), make)


def load(module, weights):
    """``weights`` copied into ``module`` (a private copy of a reference module) by name."""
    with torch.no_grad():
        for name, param in module.named_parameters():
            param.copy_(weights[name])


def base_mistake(att, x, got):
    """(name, switches) of the chapter-3 mistake whose output, computed here with the reference's
    weights on the grader's input, the student's attention without the cache gave; (None, None)
    where it gave the reference's answer, or one the grader cannot name."""
    with torch.no_grad():
        right = attention(att, x, fresh_state()["att"][0], use_cache=False)
        if not isinstance(got, torch.Tensor) or close(got, right):
            return None, None
        models = {name: (lambda sw=sw: attention(att, x, fresh_state()["att"][0], use_cache=False, base=sw))
                  for name, sw in BASE_MISTAKES.items()}
        name = known_mistake(got, models, lambda a, m: 0.0 if close(a, m) else None)
    if name is None or " or " in name:  # two models fit alike: the evidence cannot choose which to judge with
        return None, None
    return name, BASE_MISTAKES[name]


def block(blk, x, state, variant=None, use_cache=True, base=None):
    """A reference block (with its stand-ins) and the cache mistakes of its attention."""
    x = x + attention(blk.att, blk.norm1(x), state, variant, use_cache, base)
    return x + blk.ff(blk.norm2(x))


def gpt(model, idx, state, variant=None, base=None, use_cache=True):
    """The reference GPTModel (with its stand-ins) fed ``idx`` with the cache in ``state``."""
    n = idx.shape[1]
    start = 0 if variant == "positions restart" or not use_cache else state["pos"]
    if use_cache:
        state["pos"] += 1 if variant == "positions by one" else n
    x = model.tok_emb(idx) + model.pos_emb(torch.arange(start, start + n))
    for blk, att_state in zip(model.trf_blocks, state["att"]):
        x = block(blk, x, att_state, variant, use_cache, base)
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


def pieces_output(fn, x, sizes, state, variant, module=None, sets=()):
    """``fn`` fed x's tokens in pieces of ``sizes`` with one cache; the outputs concatenated.
    ``sets[j - 1]`` is loaded into ``module`` before piece j (j >= 1), as the plan's ``params`` do."""
    outs, start = [], 0
    for j, size in enumerate(sizes):
        if 1 <= j <= len(sets):
            load(module, sets[j - 1])
        outs.append(fn(x[:, start:start + size], state, variant))
        start += size
    return torch.cat(outs, dim=1)


def generate(model, idx, max_new_tokens, state, variant=None, base=None, sets=()):
    """The book's cached generation on a private copy of a reference model, with the cache in
    ``state``; ``sets[k - 1]`` is loaded before the model's call k (k >= 1), as ``reload`` does.
    The variant "recomputed" is chapter 4's generation: the whole sequence every step."""
    logits = gpt(model, idx, state, variant, base, use_cache=variant != "recomputed")
    last = 0 if variant == "first position" else -1
    for k in range(1, max_new_tokens + 1):
        next_idx = logits[:, last].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, next_idx], dim=1)
        if k <= len(sets):  # the last token is fed too, as the book does: no weights before it
            load(model, sets[k - 1])
        if variant == "recomputed":
            logits = gpt(model, idx, fresh_state(len(state["att"])), None, base, use_cache=False)
        else:
            logits = gpt(model, next_idx, state, variant, base)
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


def close(a, b):
    return isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and torch.allclose(
        a, b, atol=1e-5, rtol=1e-4)


# -- the chapter-3 mistake the cached attention repeats, judged here -----------------------------
def base_steps(ref, cfg, seed, prefix="probe"):
    """Plan steps running the student's attention without a cache on the grader's input, with
    the weights of a reference attention of ``cfg``'s sizes; and what ``base_of`` needs."""
    args = (cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], 0.0, cfg["n_heads"], cfg["qkv_bias"])
    att = built(ref.kv_cache.MultiHeadAttention, args, seed)
    x = seeded(2, min(5, cfg["context_length"]), cfg["emb_dim"], seed=seed + 1)
    return [build_step(f"{prefix}_kv", ATT, args, att),
            {"let": f"{prefix}_out", "call": f"{prefix}_kv", "args": [x], "return": True}], (att, x, f"{prefix}_out")


def base_of(student, plan, probe, what):
    """The switches of the chapter-3 mistake the student's attention without the cache makes
    (``probe``: the reference attention, the input, the step that ran the student's on it),
    with a note (the cache is judged with it); or None."""
    att, x, step = probe
    try:
        got = plan.values[step]
    except StudentFailure:
        return None
    name, switches = base_mistake(att, x, got)
    if name is not None:
        student.notes.append(BASE_NOTE.format(what=what, name=name))
    return switches


BASE_NOTE = ("{what} was judged against the book's cache with the mistake your attention makes without the cache "
             "({name}): that mistake is charged where your attention is checked without the cache, not again here.")


def tokens_mistake(actual, mistakes):
    """The name of the mistake whose generated tokens are exactly ``actual``, or None."""
    return known_mistake(actual, mistakes, lambda got, model: 0.0 if isinstance(model, torch.Tensor)
                         and got.shape == model.shape and torch.equal(got, model) else None)
