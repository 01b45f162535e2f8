"""Chapter 4's helpers: stand-ins for lower pieces, the reference run the same way, and the
mistakes students make, written once with switches.

A TransformerBlock or a GPTModel is judged as wiring: the child swaps the student's attention,
feed forward network and norms (or blocks and final norm) for linear maps the grader chooses
(the plan's ``stand_in``), and the grader runs the reference with the same maps. So a mistake
in a lower piece, chapter 3's attention included, costs nothing here: it is charged where it
lives. Where a check can only see through a lower piece (a generation through the student's
GPTModel, the block's attention built with the book's arguments, the example network's GELUs),
its expected answer is still computed here: the book's, or the book's with the mistake the lower
part was charged with by name (``kit.charged``), or, for chapter 3's attention, which chapter 4
does not grade, the chapter-3 mistake the student's own class makes on the grader's weights. No
answer of the child's, nor a traceback's text, ever becomes the truth; a lower mistake the grader
cannot model costs the check above it too.
"""
import copy
import math

import torch
import torch.nn.functional as F

from autograder.grading.compare import expect_close, seeded, set_seed, yours_vs_expected
from autograder.grading.kit import by_value, keep, kept, once
from autograder.grading import probes
from autograder.grading.probes import calls_made, stood_in
from autograder.sandbox.session import StudentFailure

# Small configurations: several vocabularies, heads, depths; qkv_bias both ways.
CFGS = [
    {"vocab_size": 37, "context_length": 8, "emb_dim": 12, "n_heads": 3, "n_layers": 2, "drop_rate": 0.0,
     "qkv_bias": False},
    {"vocab_size": 53, "context_length": 10, "emb_dim": 8, "n_heads": 2, "n_layers": 3, "drop_rate": 0.0,
     "qkv_bias": True},
    {"vocab_size": 29, "context_length": 6, "emb_dim": 16, "n_heads": 4, "n_layers": 1, "drop_rate": 0.0,
     "qkv_bias": False},
]
BLOCK_PIECES = ("att", "ff", "norm1", "norm2")


# Parameters a module may hold beyond those copied in: a causal mask registered as a parameter
# (the book's is a buffer) is left as the module made it, for its own check to charge once.
KEEP = ["mask"]


def params(module):
    return {k: v.detach() for k, v in module.named_parameters()}


def linear_map(d, seed):
    """A stand-in: {"weight", "bias"} of a d -> d linear map that keeps values of order one."""
    return {"weight": seeded(d, d, seed=seed) / d**0.5, "bias": seeded(d, seed=seed + 1) * 0.5}


def stand_ins(names, d, seed):
    return {name: linear_map(d, seed + 10 * i) for i, name in enumerate(names)}


# The class each stand-in's piece is built from, by the name the student's module calls: a plan's
# ``inject`` puts the piece's linear map in its place while the module is built, so the module
# builds whatever that class does (right, wrong, blank or not importable); ``stand_in`` then gives
# each piece its own map.
BUILT_FROM = {"att": "multihead_attention.MultiHeadAttention", "ff": "feed_forward.FeedForward",
              "norm1": "layer_norm.LayerNorm", "norm2": "layer_norm.LayerNorm", "final_norm": "layer_norm.LayerNorm",
              "trf_blocks": "transformer_block.TransformerBlock"}


def on_stand_ins(spec, block=BUILT_FROM["trf_blocks"]):
    """The options of a plan's step that builds a block or a model on ``spec``'s stand-ins, its
    lower classes never run (``block``: the class its blocks are made of)."""
    return probes.on_stand_ins(spec, {**BUILT_FROM, "trf_blocks": block})


def drawn_pieces(d, block=BUILT_FROM["trf_blocks"]):
    """A plan's ``inject`` that builds a block or a model on stand-ins torch draws as it draws its
    own: each lower class the student's module calls (attention, feed forward, block) an
    ``nn.Linear(d, d)``, each LayerNorm torch's ``LayerNorm(d)`` (which draws nothing, as the book's).
    The reference built the same way (``built_on``) draws what the book's order of pieces draws, and
    each call the student's module makes is recorded (``Plan.injected``)."""
    linear = {"torch": "Linear", "kwargs": {"in_features": d, "out_features": d}}
    return {**{name: linear for name in (BUILT_FROM["att"], BUILT_FROM["ff"], block)},
            BUILT_FROM["norm1"]: {"torch": "LayerNorm", "kwargs": {"normalized_shape": d}}}


def built_on(ref, factory, cfg, seed, inject):
    """The reference ``factory(cfg)`` built after ``set_seed(seed)`` on ``inject``'s stand-ins (as
    the child builds the student's), once per process; callers copy it."""
    def build():
        with stood_in(ref, inject):
            set_seed(seed)
            return factory(cfg)
    return once(("built on stand-ins", factory, repr(cfg), seed, repr(sorted(inject.items()))), build)


def calls_to(plan, step, name, ref):
    """What the student's module passed the stand-in for ``name`` in ``step``, per call
    (probes.calls_made)."""
    return [given for called, given in calls_made(plan, step, ref) if called == name]


def block_names(cfg):
    return [f"trf_blocks.{i}" for i in range(cfg["n_layers"])] + ["final_norm"]


def swapped(module, spec):
    """A copy of a reference module (one ``once`` keeps) with its submodules swapped for the stand-ins,
    once per process for the same spec (callers never mutate it, as ``once``'s values): the repair
    search runs a failed check again for every candidate, and this copy was most of its cost."""
    key = tuple((dotted, *(None if w.get(k) is None else by_value(w[k]) for k in ("weight", "bias")))
                for dotted, w in spec.items())
    # the module itself in the value: its id() stays its own while the entry lives
    return once(("swapped", id(module), key), lambda: (module, keep(_swapped(module, spec))))[1]


def _swapped(module, spec):
    module = copy.deepcopy(module)
    for dotted, weights in spec.items():
        owner_name, _, leaf = dotted.rpartition(".")
        owner = module.get_submodule(owner_name) if owner_name else module
        bias = weights.get("bias")
        linear = torch.nn.Linear(weights["weight"].shape[1], weights["weight"].shape[0], bias=bias is not None)
        with torch.no_grad():
            linear.weight.copy_(weights["weight"])
            if bias is not None:
                linear.bias.copy_(bias)
        setattr(owner, leaf, linear)
    return module


def built(factory, cfg, seed):
    """The reference ``factory(cfg)`` built after ``set_seed(seed)``, once per process; callers copy it."""
    def build():
        set_seed(seed)
        return keep(factory(cfg))
    return once(("built", factory, tuple(sorted(cfg.items())), seed), build)


def run(module, x, train=False, seed=None, grad_weight=None, cache=True):
    """The module's output (and with ``grad_weight`` its parameters' gradients after backward of
    sum(output * grad_weight)), in train or eval mode, after ``set_seed(seed)``; once per process
    for a module ``once`` keeps (callers never mutate the answer). ``cache=False`` where ``x``
    comes from the student's answer: every submission (and every candidate of a repair search)
    would add answers of its own for good."""
    if not cache or not kept(module):
        return _run(module, x, train, seed, grad_weight)
    key = ("run", id(module), by_value(x), train, seed, None if grad_weight is None else by_value(grad_weight))
    return once(key, lambda: _run(module, x, train, seed, grad_weight))


def _run(module, x, train, seed, grad_weight):
    module = copy.deepcopy(module).train(train)
    if seed is not None:
        set_seed(seed)
    if grad_weight is None:
        with torch.no_grad():
            return module(x)
    out = module(x)
    (out * grad_weight).sum().backward()
    return out.detach(), {k: v.grad for k, v in module.named_parameters()}


# -- GELU and its mistakes (charged in feed_forward; the example network may repeat them) ------
# torch's tanh GELU: what a part built on the student's GELU gets in its place (a plan's inject)
TORCH_GELU = {"torch": "GELU", "kwargs": {"approximate": "tanh"}}


def gelu(x, c=0.044715, k=math.sqrt(2.0 / math.pi), half=0.5, power=3):
    return half * x * (1 + torch.tanh(k * (x + c * x**power)))


GELU_MISTAKES = {
    "the exact GELU (erf; the book's is the tanh approximation)": lambda x: F.gelu(x),
    "ReLU instead of GELU": torch.relu,
    "GELU without the factor 0.5": lambda x: gelu(x, half=1.0),
    "GELU with 0.044715 * x instead of 0.044715 * x**3": lambda x: gelu(x, power=1),
    "GELU with 2 / pi instead of sqrt(2 / pi)": lambda x: gelu(x, k=2.0 / math.pi),
    "GELU's constant 0.044715 mistyped as 0.44715": lambda x: gelu(x, c=0.44715),
    "the sigmoid approximation x * sigmoid(1.702 x)": lambda x: x * torch.sigmoid(1.702 * x),
}


# -- chapter 3's attention and its mistakes, for the block's att ---------------------------------
# The block's attention is the student's own chapter-3 MultiHeadAttention, which chapter 4 does not
# grade: what the block passes it is judged by what it answers with the grader's weights, against
# the book's answer computed here, or the answer of the chapter-3 mistake (chapter 3's names) that
# the student's MultiHeadAttention makes on its own with the same weights, also computed here.
LAYERS = ("W_query", "W_key", "W_value", "out_proj")


def attention_weights(names, d, seed):
    """The grader's weights for an attention of size ``d`` holding the parameters ``names`` (of
    W_query, W_key, W_value and out_proj: a weight each, a bias where it has one); None where it
    holds another."""
    known = {f"{layer}.{kind}" for layer in LAYERS for kind in ("weight", "bias")}
    names = {name for name in names if name.rsplit(".", 1)[-1] not in KEEP}  # left as the module made them
    if not {f"{layer}.weight" for layer in LAYERS} <= names <= known:
        return None
    return {name: (seeded(d, d, seed=seed + k) / d**0.5 if name.endswith(".weight") else seeded(d, seed=seed + k) * 0.5)
            for k, name in enumerate(sorted(names))}


def mha_forward(x, w, *, num_heads, dropout=0.0, seed=None, scale="head", softmax_dim=-1, mask_diagonal=1,
                fill=-torch.inf, post_mask=False, causal=True, split="transpose", merge="transpose", out_proj=True,
                dropout_on="weights", swap_qk=False, keys_from="W_key", values_from="W_value"):
    """Chapter 3's MultiHeadAttention with the weights ``w`` (by parameter name; a bias ``w`` lacks
    is none) on x of shape (b, T, d), made with the switched mistakes; dropout after ``set_seed(seed)``."""
    def linear(t, layer):
        return F.linear(t, w[f"{layer}.weight"], w.get(f"{layer}.bias"))

    q, k, v = linear(x, "W_query"), linear(x, keys_from), linear(x, values_from)
    b, T, d_out = q.shape
    hd = d_out // num_heads

    def heads(t):
        return t.view(b, T, num_heads, hd).transpose(1, 2) if split == "transpose" else t.reshape(b, num_heads, T, hd)

    q, k, v = heads(q), heads(k), heads(v)
    scores = k @ q.transpose(-2, -1) if swap_qk else q @ k.transpose(-2, -1)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=mask_diagonal)
    places = dropout_on.split(" + ")
    if seed is not None:
        set_seed(seed)
    if dropout and "scores before the mask" in places:
        scores = F.dropout(scores, dropout)
    if causal and not post_mask:
        scores = scores.masked_fill(mask, fill)
    if dropout and "scores" in places:
        scores = F.dropout(scores, dropout)
    divisor = {"head": hd**0.5, "none": 1.0, "d_out": d_out**0.5, "d_k": float(hd), "d_in": x.shape[-1]**0.5}[scale]
    weights = torch.softmax(scores / divisor, dim=softmax_dim)
    if causal and post_mask:
        weights = weights.masked_fill(mask, 0.0)
    if dropout and "weights" in places:
        weights = F.dropout(weights, dropout)
    context = weights @ v
    if dropout and "context" in places:
        context = F.dropout(context, dropout)
    context = context.transpose(1, 2).contiguous().view(b, T, d_out) if merge == "transpose" else \
        context.reshape(b, T, d_out)
    return linear(context, "out_proj") if out_proj else context


def attention_mistakes(num_heads, dropout):
    """{chapter 3's name of a mistake: the switches of ``mha_forward`` that make it}, in training
    mode with dropout ``dropout``."""
    found = {
        "no 1/sqrt(d_k) scaling of the scores": dict(scale="none"),
        "scores divided by d_k instead of sqrt(d_k)": dict(scale="d_k"),
        "softmax over the wrong dimension (use dim=-1)": dict(softmax_dim=-2),
        "softmax over the wrong dimension (dim=0, the batch; use dim=-1)": dict(softmax_dim=0),
        "keys @ queries.T instead of queries @ keys.T (the scores transposed)": dict(swap_qk=True),
        "the keys projected with W_query (copy-paste: keys = self.W_query(x))": dict(keys_from="W_query"),
        "the values projected with W_key (copy-paste: values = self.W_key(x))": dict(values_from="W_key"),
        "the mask also hides the diagonal (use triu(..., diagonal=1))": dict(mask_diagonal=0),
        "masked scores filled with 0 instead of -inf": dict(fill=0.0),
        "no causal mask": dict(causal=False),
        "weights zeroed after the softmax without renormalising": dict(post_mask=True),
        "out_proj is not applied to the merged heads": dict(out_proj=False),
    }
    if num_heads > 1:
        found.update({
            "softmax over the wrong dimension (dim=1, the heads; use dim=-1)": dict(softmax_dim=1),
            "scores scaled by sqrt(d_out) instead of sqrt(head_dim)": dict(scale="d_out"),
            "heads split without the transpose (view to (b, num_tokens, num_heads, head_dim), then transpose(1, 2))":
                dict(split="reshape"),
            "heads merged without transposing back (transpose(1, 2) before the final view)": dict(merge="reshape"),
        })
    if dropout:
        found.update({
            "dropout applied to the attention scores instead of the weights": dict(dropout_on="scores"),
            "dropout applied to the attention scores (before the mask) instead of the weights":
                dict(dropout_on="scores before the mask"),
            "dropout applied to the attention scores (before the mask) as well as to the weights":
                dict(dropout_on="scores before the mask + weights"),
            "dropout applied to the context vectors instead of the weights": dict(dropout_on="context"),
            "no dropout in training mode": dict(dropout=0.0),
        })
        for rate in {0.5, 0.1} - {dropout}:  # the book's, GPT-2's
            found[f"a dropout rate written into the module ({rate}) instead of the dropout argument"] = \
                dict(dropout=rate)
    return found


def attention_answers(x, w, num_heads, dropout, seed):
    """{None: the book's attention with the weights ``w`` on x (training mode, dropout after
    ``seed``); chapter 3's name of each mistake: that mistake's answer}, all computed here."""
    def answer(**switches):
        with torch.no_grad():
            return mha_forward(x, w, **{"num_heads": num_heads, "dropout": dropout, "seed": seed, **switches})

    return {None: answer(), **{name: answer(**switches)
                               for name, switches in attention_mistakes(num_heads, dropout).items()}}


def close(actual, expected, atol=1e-5):
    """``actual`` is a tensor equal to ``expected`` within rounding (NaN where it is NaN: a row the
    mask hides entirely, in a mistake's answer)."""
    return isinstance(actual, torch.Tensor) and actual.shape == expected.shape and actual.dtype == expected.dtype \
        and torch.allclose(actual, expected, atol=atol, rtol=1e-4, equal_nan=True)


# -- the transformer block's mistakes, on the stand-ins -------------------------------------------
def block_forward(x, pieces, *, variant="pre", drop=0.0, seed=None, drop_on="both"):
    """The block with ``pieces`` = {att, ff, norm1, norm2} (callables), wired as ``variant``."""
    att, ff, n1, n2 = (pieces[k] for k in BLOCK_PIECES)
    if seed is not None:
        set_seed(seed)

    def d(t, where):
        return F.dropout(t, drop) if drop and drop_on in ("both", where) else t

    if variant == "pre":
        h = x + d(att(n1(x)), "att")
        return h + d(ff(n2(h)), "ff")
    if variant == "post":
        h = n1(x + d(att(x), "att"))
        return n2(h + d(ff(h), "ff"))
    if variant == "no shortcut 1":
        h = d(att(n1(x)), "att")
        return h + d(ff(n2(h)), "ff")
    if variant == "no shortcut 2":
        h = x + d(att(n1(x)), "att")
        return d(ff(n2(h)), "ff")
    if variant == "parallel":
        return x + d(att(n1(x)), "att") + d(ff(n2(x)), "ff")
    if variant == "norm1 twice":
        h = x + d(att(n1(x)), "att")
        return h + d(ff(n1(h)), "ff")
    if variant == "shortcut after norm":
        s = n1(x)
        h = s + d(att(s), "att")
        s = n2(h)
        return s + d(ff(s), "ff")
    if variant == "no norms":
        h = x + d(att(x), "att")
        return h + d(ff(h), "ff")
    if variant == "dropout after the shortcut":
        h = d(x + att(n1(x)), "att")
        return d(h + ff(n2(h)), "ff")
    raise ValueError(variant)


BLOCK_MISTAKES = {
    "post-LayerNorm (the norms after the shortcuts; the book normalises first: x + att(norm1(x)))": "post",
    "the first shortcut missing (x = att(norm1(x)) without + x)": "no shortcut 1",
    "the second shortcut missing (x = ff(norm2(x)) without + x)": "no shortcut 2",
    "both branches fed the block's input (ff(norm2(x)) with the x from before the attention)": "parallel",
    "norm1 used twice (the feed forward branch needs norm2)": "norm1 twice",
    "the shortcut taken after the norm (shortcut = norm1(x) instead of x)": "shortcut after norm",
    "no layer norms in the block": "no norms",
}


def block_mistakes(x, pieces, *, drop=0.0, seed=None, train=False):
    found = {name: (lambda v=v: block_forward(x, pieces, variant=v)) for name, v in BLOCK_MISTAKES.items()}
    if train and drop:
        found = {name: (lambda v=v: block_forward(x, pieces, variant=v, drop=drop, seed=seed))
                 for name, v in BLOCK_MISTAKES.items()}
        found.update({
            "no dropout on the shortcut branches in training mode": lambda: block_forward(x, pieces),
            "dropout after adding the shortcut (drop_shortcut(x + att(...)) instead of x + drop_shortcut(att(...)))":
                lambda: block_forward(x, pieces, variant="dropout after the shortcut", drop=drop, seed=seed),
            "dropout only after the attention (the feed forward branch needs it too)":
                lambda: block_forward(x, pieces, drop=drop, seed=seed, drop_on="att"),
            "dropout only after the feed forward network (the attention branch needs it too)":
                lambda: block_forward(x, pieces, drop=drop, seed=seed, drop_on="ff"),
        })
    elif drop:  # eval mode with a dropout rate: it must be off
        found["dropout applied in eval mode too (nn.Dropout follows .eval(); F.dropout needs "
              "training=self.training)"] = lambda: block_forward(x, pieces, drop=drop, seed=seed)
    return found


def pieces_of(spec):
    """The stand-ins as callables, for the mistake models."""
    return {name.rpartition(".")[2]: (lambda t, w=w: F.linear(t, w["weight"], w.get("bias"))) for name, w in spec.items()}


# -- the GPT model's mistakes, on the stand-ins ----------------------------------------------------
def gpt_forward(idx, ref_model, spec, *, variant="book", drop=0.0, seed=None, weights=None):
    """The GPT with its blocks and final norm (and out_head, where ``spec`` names it) replaced by
    ``spec``'s maps, wired as ``variant``. ``weights``: every parameter by the model's own name
    (tensors that may require grad), instead of ``ref_model``'s and ``spec``'s."""
    if weights is None:
        weights = {**{f"{n}.weight": getattr(ref_model, n).weight.detach() for n in ("tok_emb", "pos_emb", "out_head")},
                   **{f"{name}.{k}": v for name, w in spec.items() for k, v in w.items()}}
    tok, pos = weights["tok_emb.weight"], weights["pos_emb.weight"]

    def linear(name, t):
        return F.linear(t, weights[f"{name}.weight"], weights.get(f"{name}.bias"))

    blocks = sorted({k.rsplit(".", 1)[0] for k in weights if k.startswith("trf_blocks.")}, key=lambda k: int(k[11:]))
    n = idx.shape[1]
    if seed is not None:
        set_seed(seed)
    if variant == "positions of the token ids":
        x = tok[idx] + pos[idx]
    elif variant == "no positions":
        x = tok[idx]
    else:
        x = tok[idx] + pos[:n]
    if drop and variant != "no dropout":
        x = F.dropout(x, drop)
    for block in (reversed(blocks) if variant == "blocks in reverse" else blocks):
        x = linear(block, x)
    if variant != "no final norm":
        x = linear("final_norm", x)
    if variant == "tied":
        return x @ tok.T
    return linear("out_head", x)


TIED = "the output head tied to the token embedding (the book's GPTModel has its own out_head)"
GPT_MISTAKES = {
    "no position embeddings added": "no positions",
    "position embeddings looked up with the token ids (pos_emb(in_idx) instead of pos_emb(torch.arange(num_tokens)))":
        "positions of the token ids",
    "no final norm (final_norm before out_head)": "no final norm",
    "the blocks run in reverse order": "blocks in reverse",
    TIED: "tied",
}


def gpt_mistakes(idx, ref_model, spec, *, drop=0.0, seed=None, train=False):
    found = {name: (lambda v=v: gpt_forward(idx, ref_model, spec, variant=v, drop=drop if train else 0.0,
                                             seed=seed)) for name, v in GPT_MISTAKES.items()}
    if train and drop:
        found["no dropout after the embeddings in training mode"] = lambda: gpt_forward(idx, ref_model, spec)
    elif drop:
        found["dropout applied in eval mode too"] = lambda: gpt_forward(idx, ref_model, spec, drop=drop, seed=seed)
    return found


def with_grads(module_params, forward, grad_weight):
    """(output, {name: gradient}) of ``forward(params)`` on copies of ``module_params`` that
    require grad, after backward of sum(output * grad_weight): a model's gradients, computed here."""
    copies = {k: v.detach().clone().requires_grad_() for k, v in module_params.items()}
    out = forward(copies)
    (out * grad_weight).sum().backward()
    return out.detach(), {k: v.grad for k, v in copies.items()}


def expected_gradients(out, models, what):
    """The gradients the child's must equal: those of the model whose output, computed here, the
    child's ``out`` is (``models``: {None for the book's, or a mistake's name: () -> (output,
    {name: gradient})}, the book's first). Fails where none fits: the output is wrong in a way the
    grader cannot model, so the gradients cannot be judged (the forward check says what is wrong)."""
    for model in models.values():
        try:
            output, grads = model()
        except (IndexError, RuntimeError):  # a model that cannot run on these inputs is not this one
            continue
        if close(out, output):
            return grads
    raise AssertionError(f"{what}: the output is neither the book's nor one of a known mistake's, so its gradients "
                         "cannot be judged against the grader's (the forward check says what is wrong)")


def gradient_steps(module, data, g):
    """Steps: ``module`` run with autograd on the live input of the step ``data``, backward of
    sum(out * g), its gradients by name, and that input as the call left it."""
    return [{"let": "out", "call": module, "args": [{"$ref": data}], "grad": True, "return": True},
            {"let": "back", "backward": "out", "weight": g},
            {"let": "grads", "grads": module, "return": True},
            {"let": f"{data}_after", "attr": data, "return": True}]


def judge_gradients(plan, data, sent, names, models, *, in_place, no_gradient, what, gradient_of):
    """A plan of ``gradient_steps``: the input left as it was ``sent`` (else ``in_place``), every
    parameter in ``names`` given a gradient (else ``no_gradient.format(key)``), each equal to the
    gradient, computed here, of the model whose output the child's is (``expected_gradients``;
    ``gradient_of.format(key)`` names it)."""
    if not torch.equal(plan.values[f"{data}_after"], sent):
        raise AssertionError(in_place)
    out = plan.values["out"]  # a forward that raised says so first
    grads = plan.values["grads"]
    for key in names:
        if not isinstance(grads.get(key), torch.Tensor):
            raise AssertionError(no_gradient.format(key))
    for key, want in expected_gradients(out, models, what).items():
        expect_close(grads[key], want, gradient_of.format(key))


def named_parameters_steps(let, target):
    """Plan steps returning ``target``'s parameters as [[name, tensor], ...] (small modules only)."""
    return [{"let": f"{let}_gen", "call": f"{target}.named_parameters"},
            {"let": let, "iterate": f"{let}_gen", "return": True}]


def as_dict(pairs, what):
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                                              and isinstance(p[1], torch.Tensor) for p in pairs):
        raise StudentFailure(f"{what}.named_parameters() did not give (name, parameter) pairs")
    return dict(pairs)


def expect_same_state(mine, theirs, what, why):
    """Two {name: tensor} dicts hold the same names and values."""
    if sorted(mine) != sorted(theirs):
        raise AssertionError(f"{what}: " + yours_vs_expected(yours=sorted(mine), yours_are="has parameters",
                                                              expected=sorted(theirs)))
    for key, value in theirs.items():
        if mine[key].shape != value.shape or not torch.equal(mine[key], value):
            raise AssertionError(f"{what}: {key} differs from {why}")


def live_tensor(let, module_step, x):
    """A plan step making ``x`` an object in the child (a copy through ``module_step``'s
    ``weight``-like tensor), so a later step can pass it by reference and a check can read it
    back afterwards: a forward that changes its input in place shows."""
    return {"let": let, "call": f"{module_step}.new_tensor", "args": [x]}


def live_ids(let, module_step, idx):
    """``live_tensor`` for token ids (new_tensor would make them floats)."""
    return [live_tensor(f"{let}_float", module_step, idx), {"let": let, "call": f"{let}_float.long"}]


def gpt_case(ref, cfg, seed):
    """The reference GPTModel built after ``seed`` with stand-ins for its blocks and final norm."""
    spec = stand_ins(block_names(cfg), cfg["emb_dim"], seed + 1)
    return swapped(built(ref.gpt_model.GPTModel, cfg, seed), spec), spec


def token_ids(b, n, vocab, seed):
    return torch.randint(0, vocab, (b, n), generator=torch.Generator().manual_seed(seed))
