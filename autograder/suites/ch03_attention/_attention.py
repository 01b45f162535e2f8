"""Attention written once with switches, to reproduce the mistakes students make.

``attention_forward`` with its defaults is the book's (multi-head) causal attention; each
entry of ``mistakes`` flips one switch. The suites compare a wrong answer with these to
name the mistake in the feedback.
"""
import ast
import copy
import itertools

import torch
import torch.nn.functional as F

from autograder.grading import probes
from autograder.grading.compare import expect_close, seeded, set_seed, yours_vs_expected
from autograder.grading.diagnose import IN_PLACE, book_sizes, concat_models, picture, shown, sized
from autograder.grading.kit import charged, lower_part_wrong, naming, once, seed_of
from autograder.grading.result import KnownMistake, failure
from autograder.sandbox.session import StudentFailure


# What the chapter asks the child about a module: its sizes, heads, dropout and causal mask.
DESCRIBED = ("num_heads", "head_dim", "d_out", "heads", "dropout", "dropout.p", "mask")
KEEP = ["mask"]  # a mask registered as a parameter is left as it is, for check_mask_buffer to charge once
# The arguments the chapter's classes share, in the book's order, and the size the book derives from
# them: a parameter of the wrong shape is read against these (diagnose.from_failure)
CLASS_ARGS = ("d_in", "d_out", "context_length", "dropout", "num_heads")
CLASSES = ("SelfAttention_v1", "SelfAttention_v2", "CausalAttention", "MultiHeadAttentionWrapper", "MultiHeadAttention")
HEADS = "causal_attention.CausalAttention"   # the class of the wrapper's heads, where the wrapper calls it
DERIVED = {"d_out // num_heads": lambda s: s["d_out"] // s["num_heads"]}


def probe_module(student, *args, transpose_masks=False, **kwargs):
    """``probes.module`` with this chapter's description: ``info`` holds type, params, buffers,
    state_keys, attrs (num_heads, head_dim, d_out where ints), tensors (unregistered), and where
    the module has them heads (an nn.ModuleList's class names), dropout (an nn.Dropout's p) and
    mask (a plain tensor's shape and dtype). ``transpose_masks``: forward with every buffer named
    mask transposed."""
    reply, = probe_modules(student, [(args, dict(kwargs, transpose_masks=transpose_masks))])
    if isinstance(reply, StudentFailure):
        raise reply
    return reply


def probe_modules(student, calls):
    """``probe_module(student, *args, **kwargs)`` for each (args, kwargs) of ``calls``, in one
    round trip (probes.modules): yields per call its reply, or the StudentFailure it would raise."""
    batch = []
    for args, kwargs in calls:
        kwargs = dict(kwargs)
        transpose = kwargs.pop("transpose_masks", False)
        batch.append((args[0], args[1], args[2:], dict(kwargs, describe=DESCRIBED, params_keep=KEEP,
                                                       transpose_buffers="mask" if transpose else None)))
    for (args, kwargs), reply in zip(calls, probes.modules(student, batch)):
        if isinstance(reply, StudentFailure) and args[1] in CLASSES:
            book_kwargs = {k: v for k, v in kwargs.items() if k in ("qkv_bias",)}
            reply = sized(reply, book_sizes(CLASS_ARGS, args[2:], book_kwargs, DERIVED))
        elif not isinstance(reply, StudentFailure):
            reply["info"] = _info(reply["info"])
        yield reply


def _info(described):
    attrs = described["attrs"]
    info = {key: described[key] for key in ("type", "params", "buffers", "state_keys")}
    info["attrs"] = {key: attrs[key] for key in ("num_heads", "head_dim", "d_out") if type(attrs.get(key)) is int}
    info["tensors"] = described["tensors"]
    heads, dropout, mask = attrs.get("heads"), attrs.get("dropout"), attrs.get("mask")
    if (isinstance(heads, dict) and "ModuleList" in heads.get("torch", ()) and isinstance(heads.get("items"), list)
            and all(type(h) is str for h in heads["items"])):
        info["heads"] = heads["items"]
    if isinstance(dropout, dict) and "Dropout" in dropout.get("torch", ()) and type(attrs.get("dropout.p")) in (int, float):
        info["dropout"] = attrs["dropout.p"]
    if (isinstance(mask, dict) and mask.get("class") == "Tensor" and isinstance(mask.get("shape"), list)
            and all(type(n) is int for n in mask["shape"]) and type(mask.get("dtype")) is str):
        info["mask"] = {"shape": mask["shape"], "dtype": mask["dtype"]}
    return info


def transfer(student, d_in, d_out, init_seed, inputs=(), weights=None, v1=None):
    """Exercise 3.1 in the child: the student's v2 (built after ``init_seed``), v1 (after seed 0)
    and transfer function. Returns v1's weights after the transfer ("params", and "v1_plain":
    its unregistered tensors), v2's as drawn ("v2_params"), and with ``inputs`` the outputs of
    the student's own v2 (before) and v1 (after the transfer) on each. The plan holds a seed,
    not weights (an answer echoed from the request would earn nothing), unless ``weights`` are
    given: the grader's, copied into v2 by name (its biases, where it has them, left as drawn),
    for a v2 that does not draw the book's. ``v1``: {name: tensor}, a stand-in for the student's
    v1 (torch's ``nn.ParameterDict`` of those parameters), for a v1 that holds other shapes."""
    classes = {"v2": "SelfAttention_v2", "v1": "SelfAttention_v1"}

    def forward(version, i, x):
        return {"let": f"{version}_out{i}", "call": version, "args": [x], "return": True,
                "what": f"{classes[version]} forward on shape {tuple(x.shape)}", "result": f"{classes[version]} forward"}
    steps = [{"let": "v2_class", "attr": "self_attention.SelfAttention_v2"},
             {"let": "v1_class", "attr": "self_attention.SelfAttention_v1"},
             {"let": "transfer", "attr": "exercises.transfer_weights_v2_to_v1"},
             {"let": "v2", "call": "v2_class", "args": [d_in, d_out], "seed": init_seed,
              "what": f"SelfAttention_v2({d_in}, {d_out})",
              **({"params": weights, "params_keep": ["bias"]} if weights is not None else {})},
             {"let": "drawn", "parameters": "v2", "return": True},
             *(forward("v2", i, x) for i, x in enumerate(inputs)),
             {"let": "v1", "call": "v1_class", "args": [d_in, d_out], "seed": 0, "what": f"SelfAttention_v1({d_in}, {d_out})"}
             if v1 is None else {"let": "v1", "call": "torch.nn.ParameterDict", "args": [v1],
                                 "what": "a stand-in SelfAttention_v1"},
             # with autograd on, as the student's own code would run
             {"let": "moved", "call": "transfer", "args": [{"$ref": "v2"}, {"$ref": "v1"}], "grad": True,
              "what": "transfer_weights_v2_to_v1()"},
             {"let": "params", "parameters": "v1", "return": True},
             {"let": "v1_plain", "unregistered": "v1", "return": True},
             *(forward("v1", i, x) for i, x in enumerate(inputs))]
    needs = "exercises.transfer_weights_v2_to_v1"
    plan = student.plan(steps, needs=needs)
    for step in steps:
        why = plan.failed(step["let"])
        if why is not None:
            raise StudentFailure(why)
    # Only the weights come back: the grader runs them through the reference v1, so a bug in
    # the student's own forward costs points in self_attention, not in this exercise.
    reply = {"params": plan.values["params"], "v1_plain": plan.values["v1_plain"], "v2_params": plan.values["drawn"]}
    if inputs:
        reply["v1_outputs"] = [plan.values[f"v1_out{i}"] for i in range(len(inputs))]
        reply["v2_outputs"] = [plan.values[f"v2_out{i}"] for i in range(len(inputs))]
    if not (all(isinstance(reply[k], dict) and all(isinstance(v, torch.Tensor) for v in reply[k].values())
                for k in ("params", "v1_plain", "v2_params"))
            and all(probes.is_answer(v) for k in ("v1_outputs", "v2_outputs") for v in reply.get(k, []))):
        raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
    return reply


def linear_weights(module):
    """(W_query, W_key, W_value) of a reference module, each (d_out, d_in) as nn.Linear keeps them."""
    return tuple(getattr(module, n).weight.detach() for n in ("W_query", "W_key", "W_value"))


def book_picture(student, ref, module, name, args, title):
    """The student's ``module.name(*args)`` on the book's sentence beside the reference's, as a
    picture for the feedback (diagnose.picture), or None where the student's call gives no matrix."""
    expected = getattr(getattr(ref, module), name)(*args)
    try:
        answer = probes.calls(student, module, name, [args])[0]
    except (StudentFailure, IndexError, TypeError):
        return None
    return picture(title, answer, expected)


def with_picture(check, student, ref, module, name, args, title):
    """Run ``check``; where it fails on wrong values, the failure carries ``book_picture``."""
    try:
        check()
    except AssertionError as exc:
        if not naming():  # the repair search: a picture would only cost a round trip
            raise
        raise shown(exc, book_picture(student, ref, module, name, args, title))


def linear_biases(module):
    """(bias of W_query, W_key, W_value) of a reference module, None where a layer has none."""
    return tuple(getattr(module, n).bias for n in ("W_query", "W_key", "W_value"))


def attention_forward(x, Wq, Wk, Wv, *, bias=(None, None, None), num_heads=1, out_proj=None, causal=True,
                      scale="head", softmax_dim=-1, mask_diagonal=1, fill=-torch.inf, post_mask=False,
                      renormalise=False, split="transpose", merge="transpose", dropout=0.0, seed=None,
                      dropout_on="weights", future=False, swap_qk=False, keys_from=None):
    """``future``: the mask transposed (each token sees itself and the tokens after it);
    ``swap_qk``: keys @ queries.T; ``keys_from``: "query" projects the keys with W_query;
    ``post_mask``: the weights zeroed after the softmax, and with ``renormalise`` each row then
    divided by its sum (section 3.5.1's first recipe: 0 / 0 where a row's kept weights underflow)."""
    if keys_from == "query":
        Wk, bias = Wq, (bias[0], bias[0], bias[2])
    Wq, Wk, Wv = (W.to(x.dtype) for W in (Wq, Wk, Wv))
    bias = tuple(None if bb is None else bb.detach().to(x.dtype) for bb in bias)
    squeeze = x.dim() == 2
    if squeeze:
        x = x.unsqueeze(0)
    b, T, _ = x.shape
    q, k, v = (F.linear(x, W, bb) for W, bb in zip((Wq, Wk, Wv), bias))
    d_out = q.shape[-1]
    hd = d_out // num_heads

    def split_heads(t):
        if split == "transpose":
            return t.view(b, T, num_heads, hd).transpose(1, 2)
        return t.reshape(b, num_heads, T, hd)

    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    scores = k @ q.transpose(-2, -1) if swap_qk else q @ k.transpose(-2, -1)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=mask_diagonal)
    if future:
        mask = mask.T
    places = dropout_on.split(" + ")  # where dropout is applied, in the order of the forward pass
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
        if renormalise:
            weights = weights / weights.sum(dim=-1, keepdim=True)
    if dropout and "weights" in places:
        weights = F.dropout(weights, dropout)
    context = weights @ v
    if dropout and "context" in places:
        context = F.dropout(context, dropout)
    if merge == "transpose":
        context = context.transpose(1, 2).contiguous().view(b, T, d_out)
    else:
        context = context.reshape(b, T, d_out)
    if out_proj is not None:
        context = F.linear(context, out_proj.weight.detach().to(x.dtype), out_proj.bias.detach().to(x.dtype))
    return context.squeeze(0) if squeeze else context


# Section 3.5.1's first recipe, named by its answer: equal to the reference wherever no row's kept
# weights underflow, NaN exactly where they all do (the graded inputs include large scores).
RENORMALISED = ("the future zeroed after a softmax over all tokens, then the rows renormalised (section 3.5.1's "
                "first recipe): on large scores a row's kept weights underflow to 0 and 0 / 0 gives NaN; mask the "
                "scores with -inf before the softmax")


def variants(*, eval_dropout=0.0, **config):
    """{mistake name: the switches of ``attention_forward`` that make it} for this configuration.

    ``eval_dropout``: the module's dropout p, for a check in eval mode (dropout must be off)."""
    variants = {
        "no 1/sqrt(d_k) scaling of the scores": dict(scale="none"),
        "scores divided by d_k instead of sqrt(d_k)": dict(scale="d_k"),
        "softmax over the wrong dimension (use dim=-1)": dict(softmax_dim=-2),
        "softmax over the wrong dimension (dim=0, the batch; use dim=-1)": dict(softmax_dim=0),
        "keys @ queries.T instead of queries @ keys.T (the scores transposed)": dict(swap_qk=True),
        "the keys projected with W_query (keys = self.W_query(x))": dict(keys_from="query"),
        "scores scaled by sqrt(d_in), the input size, instead of sqrt(d_k) (keys.shape[-1])": dict(scale="d_in"),
    }
    if config.get("num_heads", 1) > 1:
        variants["softmax over the wrong dimension (dim=1, the heads; use dim=-1)"] = dict(softmax_dim=1)
    if eval_dropout:
        variants["dropout applied in eval mode too (self.dropout follows .eval(); F.dropout needs "
                 "training=self.training)"] = dict(dropout=eval_dropout)
    if config.get("causal", True):
        variants.update({
            "the mask also hides the diagonal (use triu(..., diagonal=1))": dict(mask_diagonal=0),
            "masked scores filled with 0 instead of -inf": dict(fill=0.0),
            "no causal mask": dict(causal=False),
            "weights zeroed after the softmax without renormalising": dict(post_mask=True),
            RENORMALISED: dict(post_mask=True, renormalise=True),
        })
    if config.get("num_heads", 1) > 1:
        variants.update({
            "scores scaled by sqrt(d_out) instead of sqrt(head_dim)": dict(scale="d_out"),
            "heads split without the transpose (view to (b, num_tokens, num_heads, head_dim), then transpose(1, 2))": dict(split="reshape"),
            "heads merged without transposing back (transpose(1, 2) before the final view)": dict(merge="reshape"),
        })
    if config.get("out_proj") is not None:
        variants["out_proj is not applied to the merged heads"] = dict(out_proj=None)
    if config.get("dropout"):
        variants.update({
            "dropout applied to the attention scores instead of the weights": dict(dropout_on="scores"),
            "dropout applied to the attention scores (before the mask) instead of the weights":
                dict(dropout_on="scores before the mask"),
            "dropout applied to the attention scores (before the mask) as well as to the weights":
                dict(dropout_on="scores before the mask + weights"),
            "dropout applied to the context vectors instead of the weights": dict(dropout_on="context"),
            "no dropout in training mode": dict(dropout=0.0),
        })
        for rate in {0.5, 0.1} - {config["dropout"]}:  # the book's, GPT-2's
            variants[f"dropout at rate {rate}, not the rate the dropout argument gives"] = \
                dict(dropout=rate)
    return variants


def mistakes(x, weights, *, eval_dropout=0.0, **config):
    """{mistake name: function giving that mistake's output} for this configuration."""
    return {name: (lambda change=change: attention_forward(x, *weights, **{**config, **change}))
            for name, change in variants(eval_dropout=eval_dropout, **config).items()}


# The reference's modules and answers do not depend on the submission: the kit's ``once`` builds
# and runs each once per grader process, not once per student.
_SEEDS = {}   # id of a module ``reference`` built -> the seed it was built after (the child can draw the same)


def reference(factory, *args, seed, **kwargs):
    """``factory(*args, **kwargs)`` built after ``set_seed(seed)``, shared by every submission.

    Callers must not change it (``.to()`` and the like): build a private one for that."""
    def build():
        set_seed(seed)
        module = factory(*args, **kwargs)
        _SEEDS[id(module)] = seed  # the cache keeps the module alive: its id stays its own
        return module
    return once(("built", factory, args, tuple(sorted(kwargs.items())), seed), build)


def _answer(ref_module, x, train, seed):
    def compute():
        ref_module.train(train)
        if seed is not None:
            set_seed(seed)
        with torch.no_grad():
            return ref_module(x), {k: v.detach() for k, v in ref_module.named_parameters()}
    if id(ref_module) not in _SEEDS:  # not one of ``reference``'s: its id may be reused later
        return compute()
    return once(("answer", id(ref_module), train, seed, tuple(x.shape), x.numpy().tobytes()), compute)


def own_pieces(parts, what, *, heads=None, num_heads=None, configured=False):
    """What a check built on lower parts may be judged with where one of them is wrong: ``parts``,
    the lower parts; ``what``, the module judged; ``heads``: it is a wrapper of that many heads
    (CausalAttention each), or ``num_heads``: it is a MultiHeadAttention of that many heads;
    ``configured``: it is an exercise that builds one with the right arguments, which its
    configuration shows whatever the class's forward does."""
    return dict(parts=parts, what=what, heads=heads, num_heads=num_heads, configured=configured)


def lower_answer(student, own, answer, ref_module, x, train, seed, request, grad=False, stand_in=True):
    """A note where the module's ``answer`` is right on its own terms, else None.

    A module built on a lower part (the wrapper on CausalAttention, the exercises on the
    multi-head classes) that misses the reference may still be right: it did its job with a
    wrong piece from below. Two kinds of evidence, both computed here, never the child's word:
    the answer equals the reference made with a mistake the lower part was charged with in this
    grading (``kit.charged``: its checks named it, and it is really written); or, for a wrapper,
    the wrapper run with the grader's linear maps in place of its heads gives their outputs
    concatenated (``stand_in``; with ``grad``, their gradients too), so the heads' mistake,
    whatever it is, does not reach it. ``request``: the checked module's (module, name, args,
    kwargs); ``stand_in=False`` where the check is about the heads themselves."""
    note = f"{own['what']} itself is right: the difference from the reference comes from {{}}, charged there."
    p = getattr(getattr(ref_module, "dropout", None), "p", None) or getattr(
        getattr(getattr(ref_module, "heads", [None])[0], "dropout", None), "p", 0.0)
    config = dict(num_heads=own["num_heads"] or 1, out_proj=getattr(ref_module, "out_proj", None),
                  dropout=p if train else 0.0, eval_dropout=0.0 if train else p)
    known = variants(**config)
    if answer is not None and not grad:
        with torch.no_grad():
            for name in charged(student, own["parts"], known):
                if _fits(answer, _made_with(ref_module, x, own, known[name], train, seed)):
                    return note.format(f"the mistake charged there ({name})")
    if stand_in and own["heads"] and not own["configured"] and set(own["parts"]) & student.failed_parts:
        # the heads lost points, written or blank: the wrapper's own job is judged on stand-ins
        return _stand_in_heads(student, own, ref_module, x, request, note, grad)
    if not any(lower_part_wrong(student, part) for part in own["parts"]):
        return None
    if own["configured"]:
        return (_drawn_right(student, own, ref_module, x, request, train, seed, note)
                or _configured(student, own, ref_module, request, train, note))
    return None


def _drawn_right(student, own, ref_module, x, request, train, seed, note):
    """An exercise whose module, built after the reference's seed with no weights sent (the
    grader's parameters could not be loaded into it: a lower class keeps them otherwise), draws
    the book's weights and gives the reference's output."""
    module, name, args, kwargs = request
    if _SEEDS.get(id(ref_module)) is None:
        return None
    try:
        reply = probe_module(student, module, name, *args, inputs=[x], init_seed=_SEEDS[id(ref_module)], train=train,
                             seed=seed, **kwargs)
    except StudentFailure:
        return None
    if not _fits(reply["outputs"][0], _answer(ref_module, x, train, seed)[0]):
        return None
    lost = sorted(set(own["parts"]) & student.failed_parts)
    return note.format(f"{' and '.join(lost)} (built after the book's seed, it gives the reference's output)")


def _configured(student, own, ref_module, request, train, note):
    """An exercise whose class is wrong (charged in its own part) is judged on what the exercise
    asks: the module it builds has the reference's configuration, as the child describes it and
    the grader reads it off the reference: the sizes and head count it keeps, the shape of every
    parameter both have, its heads' classes, its mask's size and its dropout rate."""
    module, name, args, kwargs = request
    try:
        info = probe_module(student, module, name, *args, **kwargs)["info"]
    except StudentFailure:
        return None
    book = {"attrs": {k: getattr(ref_module, k) for k in ("num_heads", "head_dim", "d_out")
                      if type(getattr(ref_module, k, None)) is int},
            "params": {k: list(v.shape) for k, v in ref_module.named_parameters()}}
    common = set(info["params"]) & set(book["params"])
    if not common or any(info["params"][k] != book["params"][k] for k in common) or any(
            info["attrs"].get(k, v) != v for k, v in book["attrs"].items()):
        return None
    if hasattr(ref_module, "heads") and info.get("heads") != [type(h).__name__ for h in ref_module.heads]:
        return None
    if hasattr(ref_module, "mask") and (info.get("mask") or {}).get("shape", [])[-2:] != list(ref_module.mask.shape[-2:]):
        return None
    rate = getattr(getattr(ref_module, "dropout", None), "p", None)
    if train and rate is not None and info.get("dropout") != rate:
        return None
    lost = sorted(set(own["parts"]) & student.failed_parts)
    return note.format(f"{' and '.join(lost)} (judged on what it builds: the sizes, heads, mask and dropout of the "
                       "reference's)")


def _fits(answer, model):
    """Whether ``answer`` is ``model``'s (NaN where it has NaN: a mask that hides a whole row)."""
    return (isinstance(answer, torch.Tensor) and answer.shape == model.shape and answer.dtype == model.dtype
            and torch.allclose(answer, model, equal_nan=True))


def _made_with(ref_module, x, own, change, train, seed):
    """The reference ``ref_module``'s output on x with ``change`` (``attention_forward``'s switches)
    in its attention: in every head of a wrapper (one seed, heads in order), or in the one
    multi-head attention."""
    if own["heads"]:
        outs = []
        for i, head in enumerate(ref_module.heads):
            switches = dict(dropout=head.dropout.p if train else 0.0, bias=linear_biases(head))
            outs.append(attention_forward(x, *linear_weights(head), **{**switches, **change},
                                          seed=seed if i == 0 else None))
        return torch.cat(outs, dim=-1)
    switches = dict(num_heads=own["num_heads"], out_proj=ref_module.out_proj, bias=linear_biases(ref_module),
                    dropout=ref_module.dropout.p if train else 0.0)
    return attention_forward(x, *linear_weights(ref_module), **{**switches, **change}, seed=seed)


def _stand_in_heads(student, own, ref_module, x, request, note, grad):
    """The wrapper with the grader's linear maps in place of its heads (sized as the reference's
    heads) must give their outputs concatenated, and with ``grad`` their gradients. The heads'
    class is stood in for while the wrapper builds them, so it never runs: blank, it blocks
    nothing."""
    maps = {}
    for i, head in enumerate(ref_module.heads):
        d_out, d_in = head.W_query.weight.shape
        maps[f"heads.{i}"] = {"weight": seeded(d_out, d_in, seed=seed_of(f"_attention::stand-in {i}")) / d_in**0.5,
                              "bias": seeded(d_out, seed=seed_of(f"_attention::stand-in bias {i}"))}
    leaves = {f"{k}.{n}": t.clone().requires_grad_(grad) for k, m in maps.items() for n, t in m.items()}
    with torch.enable_grad():
        want = torch.cat([F.linear(x, leaves[f"{k}.weight"], leaves[f"{k}.bias"]) for k in maps], dim=-1)
        g = seeded(*want.shape, seed=seed_of("_attention::stand-in g"))
        if grad:
            (want * g).sum().backward()
    module, name, args, kwargs = request
    options = dict(inputs=[x], **probes.on_stand_ins(maps, {"heads": HEADS}), **kwargs,
                   **({"grad_weights": [g]} if grad else {}))
    try:
        reply = probes.module(student, module, name, *args, **options)
    except StudentFailure:
        return None
    if not same_close(reply["outputs"][0], want.detach()):
        return None
    if grad and not all(same_close(reply["grads"].get(k), t.grad) for k, t in leaves.items()):
        return None
    lost = sorted(set(own["parts"]) & student.failed_parts)
    written = [part for part in lost if lower_part_wrong(student, part)]
    how = "with the grader's linear maps in place of its heads, your wrapper gives their outputs concatenated"
    if written:
        return note.format(f"{' and '.join(written)} ({how})")
    # blank (or earning nothing): nothing of it reaches the wrapper to be charged for
    return (f"{own['what']} itself is right ({how}); {' and '.join(f'{part}.py' for part in lost)} earned no "
            "points in this grading: its class is what the heads need.")


def check_forward(student, module, name, args, ref_module, x, what, *, train=False, seed=None, kwargs=None,
                  mistake_config=None, weights=None, own=None, more=None, reply=None):
    """Run the student's module with the reference's parameters on ``x`` and compare.

    ``more``: a function of the expected output giving further {mistake: model}.

    ``own`` (from ``own_pieces``): a miss that ``lower_answer`` puts down to a lower part passes,
    with a note in the feedback. ``reply``: the probe's answer where ``check_forwards`` asked
    for it already (a reply, or the StudentFailure it raised)."""
    expected, params = _answer(ref_module, x, train, seed)
    try:
        if reply is None:
            reply, = probe_modules(student, [_forward_call(module, name, args, ref_module, x, train, seed, kwargs, params)])
        if isinstance(reply, StudentFailure):
            raise reply
        found = dict(more(expected)) if more else {}
        if mistake_config is not None:
            found.update(mistakes(x, weights or linear_weights(ref_module), **mistake_config))
        expect_close(reply["outputs"][0], expected, what, found)
        return reply
    except (AssertionError, StudentFailure):
        answer = reply["outputs"][0] if isinstance(reply, dict) else None
        note = own and lower_answer(student, own, answer, ref_module, x, train, seed, (module, name, args, kwargs or {}))
        if not note:
            raise
        student.notes.append(note)
        return None


def _forward_call(module, name, args, ref_module, x, train, seed, kwargs, params):
    """The probe ``check_forward`` makes: the module with the reference's ``params``, run on ``x``."""
    return (module, name, *args), dict(inputs=[x], params=params, train=train, seed=seed,
                                       params_seed=_SEEDS.get(id(ref_module)), **(kwargs or {}))


def check_forwards(student, checks):
    """``check_forward(student, **check)`` for each of ``checks`` in turn, as a loop of them would
    (the first that fails raises), with the student's modules probed in one round trip."""
    for check, reply in zip(checks, _prefetch(student, checks)):
        check_forward(student, **check, reply=reply)


def _prefetch(student, checks):
    """The probes of ``checks`` (check_forward's keyword arguments), in one round trip."""
    calls = []
    for c in checks:
        train, seed = c.get("train", False), c.get("seed")
        params = _answer(c["ref_module"], c["x"], train, seed)[1]
        calls.append(_forward_call(c["module"], c["name"], c["args"], c["ref_module"], c["x"], train, seed,
                                   c.get("kwargs"), params))
    return probe_modules(student, calls)


def same(a, b):
    """Exactly the same values (NaN where the other has NaN): one computation, done twice."""
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
            and bool(((a == b) | (a.isnan() & b.isnan())).all()))


def _same_values(a, b):
    return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.allclose(a.to(b.dtype), b)


def _drawn_in_order(ref_module, order, seed):
    """The reference's parameters as if its layers were created in ``order`` after the seed:
    an nn.Linear draws by reset_parameters(), a bare Parameter (SelfAttention_v1) by torch.rand."""
    module = copy.deepcopy(ref_module)
    set_seed(seed)
    with torch.no_grad():
        for name in order:
            unit = getattr(module, name)
            if isinstance(unit, torch.nn.Module):
                unit.reset_parameters()
            else:
                unit.copy_(torch.rand(unit.shape))
    return {k: v.detach() for k, v in module.named_parameters()}


def check_seeded_init(student, module, name, args, ref_factory, seed, order=(), mistakes=None):
    """The student's constructor, run after torch.manual_seed(seed), draws the reference's
    parameters: the book's attribute names, layer types and creation ``order``. Parameters
    only: buffers (the mask) are the student's own business. ``mistakes``: {name: the
    parameters that mistake draws}; every other creation order is tried as a mistake too."""
    reply = probe_module(student, module, name, *args, init_seed=seed, want_state=True)
    label = f"{name}{args}"
    ref_module = reference(ref_factory, *args, seed=seed)
    ref_state = {k: v.detach() for k, v in ref_module.named_parameters()}
    # a mask registered as a parameter is charged by the mask check, once
    own = sorted(k for k in reply["info"]["params"] if k.rsplit(".", 1)[-1] != "mask")
    if own != sorted(ref_state):
        unregistered(label, [k for k in ref_state if k not in own], reply["info"])
        raise AssertionError(f"{label}: " + yours_vs_expected(yours=own, yours_are="has parameters",
                                                               expected=sorted(ref_state), expected_are="the book's are")
                             + ": use the book's attribute names and layers")
    state = reply["state"]
    wrong = [key for key in ref_state if not _same_values(state.get(key), ref_state[key])]
    if not wrong:
        return
    models = dict(mistakes or {})
    for other in itertools.permutations(order):
        if list(other) != list(order):
            models[f"the layers created in another order ({', '.join(other)}; the book's: {', '.join(order)})"] = \
                lambda other=other: _drawn_in_order(ref_module, other, seed)
    found = None
    for mistake, model in models.items():
        drawn = model() if callable(model) else model
        if all(_same_values(state.get(k), v) for k, v in drawn.items()):
            found = mistake
            break
    raise failure(f"{wrong[0]} of {label} after torch.manual_seed({seed}) differs from the book's draw "
                  f"(the book creates {', '.join(order)} in that order).", found)


PLAIN_TENSORS = "the weights held as plain tensors, not nn.Parameter (wrap each in nn.Parameter(...))"
MASK_ATTRIBUTE = "the mask kept as a plain attribute, not a buffer (use self.register_buffer('mask', ...))"
OWN_MASK = ("a causal mask other than the registered buffer self.mask (forward masks the same whatever the "
            "buffer holds)")
MASK_PARAMETER = "the mask registered as an nn.Parameter instead of a buffer (use self.register_buffer('mask', ...))"


def unregistered(label, names, info):
    """Fail with the right words where the book's weights ``names`` are missing from the parameters
    only because the module keeps them as plain tensors (their names are right)."""
    plain = [n for n in names if n in info.get("tensors", {})]
    if plain:
        raise KnownMistake(f"{label}: {', '.join(plain)} {'is a plain tensor' if len(plain) == 1 else 'are plain tensors'}"
                           ", not registered as parameters, so the module does not train, save or move them.",
                           PLAIN_TENSORS)


def _not_cut_error(b, n, ctx):
    """The error a forward raises when it masks (n, n) scores with the whole (ctx, ctx) mask."""
    try:
        torch.zeros(b, n, n).masked_fill_(torch.ones(ctx, ctx, dtype=torch.bool), 0.0)
    except RuntimeError as exc:
        return str(exc).split(" at non-singleton")[0]  # the dimension depends on the number of heads
    return None


def check_module_cases(student, seeds, ref_class, module, name, cases, *, dropout=0.0, heads=None, config=None):
    """Eval-mode forward on every case; names the uncut mask when a short input fails with its error.

    cases are (batch, num_tokens, context_length, d_in, d_out, scale); ``heads`` adds a
    num_heads argument from a parallel list; ``seeds``: the check's (the ``seeds`` fixture).
    """
    checks = []
    for i, (b, n, ctx, d_in, d_out, scale) in enumerate(cases):
        args = (d_in, d_out, ctx, dropout) + ((heads[i],) if heads else ())
        ref_module = reference(ref_class, *args, seed=seeds(f"module{i}"))
        x = seeded(b, n, d_in, seed=seeds(f"x{i}"), scale=scale)
        label = f"{name}{args} on input {(b, n, d_in)}" + (f" (scale {scale})" if scale != 1 else "")
        wrapper = not hasattr(ref_module, "W_query")  # its heads hold the weights
        mistake_config = None if wrapper else dict(config or {})
        if heads and mistake_config is not None:
            mistake_config.update(num_heads=heads[i], out_proj=getattr(ref_module, "out_proj", None))
        own = own_pieces(("causal_attention",), name, heads=heads[i]) if wrapper else None
        more = (lambda expected, n=heads[i]: concat_models(expected, n)) if wrapper else None
        checks.append(dict(module=module, name=name, args=args, ref_module=ref_module, x=x, what=label,
                           mistake_config=mistake_config, own=own, more=more))
    for (b, n, ctx, *_), check, reply in zip(cases, checks, _prefetch(student, checks)):
        try:
            check_forward(student, **check, reply=reply)
        except StudentFailure as exc:
            model = _not_cut_error(b, n, ctx) if n < ctx else None
            if model and model in str(exc):
                raise KnownMistake(str(exc), "the mask not cut to [:num_tokens, :num_tokens] "
                                   "(num_tokens < context_length)") from None
            raise


def _params(module):
    return {k: v.detach() for k, v in module.named_parameters()}


def check_mask_buffer(student, module, name, args, ref_module, x):
    """The causal mask is a buffer named ``mask`` (any dtype, (T, T) or (1, 1, T, T), persistent
    or not; a registered buffer moves with the module) and the masking moves with the module: one
    forward after ``.to(torch.float64)`` with the buffer transposed, whose values the grader
    computes. Forward either masks with the buffer (then it follows the transposed one) or leaves
    the mask to F.scaled_dot_product_attention(..., is_causal=True), which builds it on the
    input's device (then the output is the causal one). A mask forward builds on its own (on
    the CPU, whatever the module's device) passes neither way.

    Not the meta device: its first use imports torch._dynamo (seconds per child), and there an
    in-place masked_fill_ with a CPU mask passes anyway; transposing the buffer shows instead
    whether forward uses it or builds a mask of its own. Which of the two a forward that ignores
    the buffer does is read from the source the grader holds (``calls_causal_sdpa``), never from
    anything the child reports."""
    x = x.to(torch.float64)
    reply = probe_module(student, module, name, *args, params=_params(ref_module), dtype="float64", inputs=[x],
                           transpose_masks=True)
    expected, causal = once(("mask", id(ref_module), x.numpy().tobytes()), lambda: _mask_answers(ref_module, x))
    label = f"{name}{args}"
    if "mask" not in reply["info"]["buffers"]:
        if "mask" in reply["info"]["params"]:
            raise KnownMistake(f"{label}: its mask is a parameter, not a buffer (an optimiser would train it and "
                               "the module counts it as a weight).", MASK_PARAMETER)
        plain = MASK_ATTRIBUTE if "mask" in reply["info"].get("tensors", {}) else None
        raise failure(f"{label} has no buffer named 'mask' (buffers: {sorted(reply['info']['buffers'])}): "
                      "register the causal mask with self.register_buffer('mask', ...).", plain)
    if same_close(reply["outputs"][0], causal):
        if calls_causal_sdpa(student.sources.get(module)):  # PyTorch's own causal mask, made on the input's device
            return
        raise KnownMistake(f"{label} in float64 with its mask buffer transposed still masks the future: forward "
                           "must mask with the registered self.mask (cut to num_tokens), or leave the mask to "
                           "F.scaled_dot_product_attention(..., is_causal=True), not build a mask of its own.", OWN_MASK)
    # the mistakes of forward itself, with the same transposed mask: one mistake reads as one
    found = mistakes(x, linear_weights(ref_module), num_heads=getattr(ref_module, "num_heads", 1),
                     out_proj=getattr(ref_module, "out_proj", None), future=True)
    expect_close(reply["outputs"][0], expected, f"{label} after .to(torch.float64), run with a transposed mask put in "
                 "its buffer by this check (the expected output is the reference's with that same buffer)", found)


def calls_causal_sdpa(source):
    """Whether the student's module text (as the grader read it from the submission) calls
    ``scaled_dot_product_attention`` with ``is_causal=True`` (a keyword, or the sixth argument)."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError, RecursionError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) \
                == "scaled_dot_product_attention":
            flags = [k.value for k in node.keywords if k.arg == "is_causal"] + node.args[5:6]
            if any(isinstance(f, ast.Constant) and f.value is True for f in flags):
                return True
    return False


def _mask_answers(ref_module, x):
    """The reference's output with its mask transposed, and with it as it is."""
    with torch.no_grad():
        return tuple(attention_forward(x, *linear_weights(ref_module), num_heads=getattr(ref_module, "num_heads", 1),
                                       out_proj=getattr(ref_module, "out_proj", None), future=future)
                     for future in (True, False))


def same_close(a, b):
    return isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b)


def check_trainable(student, module, name, args, ref_module, x, own=None):
    """Every parameter gets a gradient, and forward leaves the caller's input as it was.

    Backward of sum(output * g) for a grader-chosen g; where the output is the reference's,
    the gradients must be the reference's too. (A wrong output is charged by the forward
    checks: then each parameter only needs a gradient of its own shape.) ``own`` as for
    ``check_forward``: a module that cannot run only because of a lower part."""
    ref_copy, out, g = once(("grad", id(ref_module), x.numpy().tobytes()), lambda: _reference_gradients(ref_module, x))
    label = f"{name}{args}"
    try:
        _check_gradients(student, module, name, args, ref_copy, x, g, out, label)
    except (AssertionError, StudentFailure):
        note = own and lower_answer(student, own, None, ref_module, x, False, None, (module, name, args, {}), grad=True)
        if not note:
            raise
        student.notes.append(note)


def _unused(student, module, name, args, ref_copy, x, key, out):
    """Whether the module's output ``out`` (with the reference's parameters) stays the same with
    other values in parameter ``key``: the evidence that forward does not use it at all (where it
    changes, the parameter is used but cut off from backward). Both outputs are the child's: this
    words the feedback of a check that fails anyway, never credit."""
    params = _params(ref_copy)
    params[key] = params[key] + seeded(*params[key].shape, seed=seed_of("_attention::_unused"))
    try:
        other = probe_module(student, module, name, *args, params=params, inputs=[x.clone()])["outputs"][0]
    except StudentFailure:
        return False
    return isinstance(out, torch.Tensor) and isinstance(other, torch.Tensor) and other.shape == out.shape \
        and torch.equal(other, out.detach())


def _reference_gradients(ref_module, x):
    """A private copy of the reference after backward of sum(output * g), with its output and g."""
    ref_copy = copy.deepcopy(ref_module).eval()
    out = ref_copy(x)
    g = seeded(*out.shape, seed=seed_of("_attention::_reference_gradients"))
    (out * g).sum().backward()
    return ref_copy, out.detach(), g


def _check_gradients(student, module, name, args, ref_copy, x, g, out, label):
    reply = probe_module(student, module, name, *args, params=_params(ref_copy), inputs=[x.clone()], grad_weights=[g])
    if not torch.equal(reply["inputs_after"][0], x):
        raise KnownMistake(f"{label} changed the caller's input in place: forward must leave x as it was.", IN_PLACE)
    right = same_close(reply["outputs"][0], out.detach())
    for key, param in ref_copy.named_parameters():
        grad = reply["grads"].get(key)
        if grad is None:
            unregistered(label, [k for k, _ in ref_copy.named_parameters() if k not in reply["grads"]], reply["info"])
            if _unused(student, module, name, args, ref_copy, x, key, reply["outputs"][0]):
                # words, not a name: the forward checks name the mistake that leaves it unused, where they know it
                raise AssertionError(f"{label}: parameter {key} received no gradient from backward, and the output "
                                     f"stays the same when {key} is given other values: forward does not use it "
                                     f"({key.rpartition('.')[0] or key} is built in __init__ but never applied).")
            raise AssertionError(f"{label}: parameter {key} received no gradient from backward although forward "
                                 "uses it: every weight must be trainable (requires_grad=True, used in forward "
                                 "without .detach())")
        if right:
            expect_close(grad, param.grad, f"gradient of {key} of {label} after backward")
        elif grad.shape != param.shape:
            raise AssertionError(f"{label}: gradient of {key}: " + yours_vs_expected(
                yours=tuple(grad.shape), yours_are="has shape", expected=tuple(param.shape)))
