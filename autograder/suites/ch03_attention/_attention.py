"""Attention written once with switches, to reproduce the mistakes students make.

``attention_forward`` with its defaults is the book's (multi-head) causal attention; each
entry of ``mistakes`` flips one switch. The suites compare a wrong answer with these to
name the mistake in the feedback.
"""
import torch
import torch.nn.functional as F

from autograder.compare import expect_close, seeded, set_seed


def linear_weights(module):
    """(W_query, W_key, W_value) of a reference module, each (d_out, d_in) as nn.Linear keeps them."""
    return tuple(getattr(module, n).weight.detach() for n in ("W_query", "W_key", "W_value"))


def attention_forward(x, Wq, Wk, Wv, *, bias=(None, None, None), num_heads=1, out_proj=None, causal=True,
                      scale="head", softmax_dim=-1, mask_diagonal=1, fill=-torch.inf, post_mask=False,
                      split="transpose", merge="transpose", dropout=0.0, seed=None, dropout_on="weights"):
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
    scores = q @ k.transpose(-2, -1)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=mask_diagonal)
    if causal and not post_mask:
        scores = scores.masked_fill(mask, fill)
    if seed is not None:
        set_seed(seed)
    if dropout and dropout_on == "scores":
        scores = F.dropout(scores, dropout)
    divisor = {"head": hd**0.5, "none": 1.0, "d_out": d_out**0.5, "d_k": float(hd)}[scale]
    weights = torch.softmax(scores / divisor, dim=softmax_dim)
    if causal and post_mask:
        weights = weights.masked_fill(mask, 0.0)
    if dropout and dropout_on == "weights":
        weights = F.dropout(weights, dropout)
    context = weights @ v
    if dropout and dropout_on == "context":
        context = F.dropout(context, dropout)
    if merge == "transpose":
        context = context.transpose(1, 2).contiguous().view(b, T, d_out)
    else:
        context = context.reshape(b, T, d_out)
    if out_proj is not None:
        context = F.linear(context, out_proj.weight.detach(), out_proj.bias.detach())
    return context.squeeze(0) if squeeze else context


def mistakes(x, weights, **config):
    """{mistake name: function giving that mistake's output} for this configuration."""
    variants = {
        "no 1/sqrt(d_k) scaling of the scores": dict(scale="none"),
        "scores divided by d_k instead of sqrt(d_k)": dict(scale="d_k"),
        "softmax over the wrong dimension (use dim=-1)": dict(softmax_dim=-2),
    }
    if config.get("causal", True):
        variants.update({
            "the mask also hides the diagonal (use triu(..., diagonal=1))": dict(mask_diagonal=0),
            "masked scores filled with 0 instead of -inf": dict(fill=0.0),
            "no causal mask": dict(causal=False),
            "weights zeroed after the softmax without renormalising": dict(post_mask=True),
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
            "dropout applied to the context vectors instead of the weights": dict(dropout_on="context"),
            "no dropout in training mode": dict(dropout=0.0),
        })
    return {name: (lambda change=change: attention_forward(x, *weights, **{**config, **change}))
            for name, change in variants.items()}


# The reference's modules and answers do not depend on the submission: build and run each
# once per grader process, not once per student.
_MODULES = {}
_ANSWERS = {}


def reference(factory, *args, seed, **kwargs):
    """``factory(*args, **kwargs)`` built after ``set_seed(seed)``, shared by every submission.

    Callers must not change it (``.to()`` and the like): build a private one for that."""
    key = (factory, args, tuple(sorted(kwargs.items())), seed)
    if key not in _MODULES:
        set_seed(seed)
        _MODULES[key] = factory(*args, **kwargs)
    return _MODULES[key]


def _answer(ref_module, x, train, seed):
    def compute():
        ref_module.train(train)
        if seed is not None:
            set_seed(seed)
        with torch.no_grad():
            return ref_module(x), {k: v.detach() for k, v in ref_module.named_parameters()}
    if not any(m is ref_module for m in _MODULES.values()):
        return compute()
    key = (id(ref_module), train, seed, tuple(x.shape), x.numpy().tobytes())
    if key not in _ANSWERS:
        _ANSWERS[key] = compute()
    return _ANSWERS[key]


def check_forward(student, module, name, args, ref_module, x, what, *, train=False, seed=None, kwargs=None,
                  mistake_config=None, weights=None):
    """Run the student's module with the reference's parameters on ``x`` and compare."""
    expected, params = _answer(ref_module, x, train, seed)
    reply = student.module(module, name, *args, inputs=[x], params=params, train=train, seed=seed,
                           **(kwargs or {}))
    found = None
    if mistake_config is not None:
        found = mistakes(x, weights or linear_weights(ref_module), **mistake_config)
    expect_close(reply["outputs"][0], expected, what, found)
    return reply


def check_seeded_init(student, module, name, args, ref_factory, seed):
    """The student's constructor, run after torch.manual_seed(seed), draws the reference's
    parameters: the book's attribute names, layer types and creation order."""
    reply = student.module(module, name, *args, init_seed=seed, want_state=True)
    label = f"{name}{args}"
    for key, value in reference(ref_factory, *args, seed=seed).state_dict().items():
        if key not in reply["state"]:
            raise AssertionError(f"{label} has no {key} in its state_dict: use the book's attribute names")
        expect_close(reply["state"][key], value, f"{key} of {label} after torch.manual_seed({seed}) "
                     "(are the layers created in the book's order?)")


def check_module_cases(student, ref_class, module, name, cases, *, dropout=0.0, heads=None, config=None):
    """Eval-mode forward on every case; explains a failure that happens only for short inputs.

    cases are (batch, num_tokens, context_length, d_in, d_out, scale); ``heads`` adds a
    num_heads argument from a parallel list.
    """
    full_length_passed = False
    for i, (b, n, ctx, d_in, d_out, scale) in enumerate(cases):
        args = (d_in, d_out, ctx, dropout) + ((heads[i],) if heads else ())
        ref_module = reference(ref_class, *args, seed=1000 + i)
        x = seeded(b, n, d_in, seed=2000 + i, scale=scale)
        label = f"{name}{args} on input {(b, n, d_in)}" + (f" (scale {scale})" if scale != 1 else "")
        mistake_config = dict(config or {}) if hasattr(ref_module, "W_query") else None  # not for the wrapper
        if heads and mistake_config is not None:
            mistake_config.update(num_heads=heads[i], out_proj=getattr(ref_module, "out_proj", None))
        try:
            check_forward(student, module, name, args, ref_module, x, label, mistake_config=mistake_config)
        except Exception as exc:
            if n < ctx and full_length_passed:
                raise type(exc)(f"{exc} It works when num_tokens == context_length but not for fewer "
                                "tokens: cut the mask to [:num_tokens, :num_tokens].") from None
            raise
        full_length_passed |= n == ctx
