"""Hidden checks of chapter 3's efficient multi-head attention (25 points).

Each class is judged against the reference on seeded weights given in its own layout, so its
forward is judged on its own; each transfer function by running the reference class with the
weights it moved in. The chapter-3 MultiHeadAttention a transfer reads from is the student's
own, with its four linear layers replaced by the grader's (the plan's stand_in): its forward
is never used, so a chapter-3 mistake costs nothing here. Each transfer is also called as a student
calls it, with autograd on: it returns None, and after the grader writes new values into mha's
layers the class it filled still computes what the grader's weights give (no memory shared)."""
import pytest
import torch

from _efficient import (COMMON_MISTAKES, LAYOUT_MISTAKES, as_dict, build_and_run, ch03_params, expect_buffers,
                        ch03_stand_ins, loaded, mistakes, named_parameters_steps, run, state, weights)
from autograder.grading.compare import ATOL, RTOL, expect_close, seeded, set_seed, yours_vs_expected
from autograder.grading.kit import by_value, keep, once
from autograder.grading.result import failure
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points

# (d_in, d_out, num_heads, context_length, dropout, qkv_bias), (batch, num_tokens), input scale
CASES = [((6, 8, 2, 10, 0.0, False), (2, 7), 1.0), ((8, 8, 4, 6, 0.0, True), (3, 6), 3.0),
         ((5, 12, 3, 9, 0.5, False), (1, 4), 1.0)]
SQUARE = [((8, 8, 2, 10, 0.0, True), (2, 7), 1.0), ((12, 12, 3, 6, 0.5, False), (1, 6), 3.0)]
CLASSES = {"MultiHeadAttentionCombinedQKV": "transfer_to_combined_qkv", "MHAEinsum": "transfer_to_einsum",
           "MHAPyTorchScaledDotProduct": "transfer_to_sdpa", "MHAPyTorchClass": "transfer_to_pytorch_class"}


def reference(ref, name, args, W, train=False):
    """The reference class ``name(*args)`` holding W, moved in by the reference transfer; once per
    process (callers never mutate it: the repair search runs a failed check again per candidate)."""
    key = tuple((k, None if v is None else by_value(v)) for k, v in sorted(W.items()))
    cls = getattr(ref.efficient_mha, name)
    return once(("efficient reference", cls, tuple(args), key, train), lambda: keep(_reference(ref, name, args, W, train)))


def _reference(ref, name, args, W, train):
    d_in, d_out, heads, ctx, drop, qkv_bias = args
    mha = loaded(ref.multihead_attention.MultiHeadAttention, (d_in, d_out, ctx, drop, heads, qkv_bias), ch03_params(W))
    set_seed(0)
    module = getattr(ref.efficient_mha, name)(*args).train(train)
    getattr(ref.efficient_mha, CLASSES[name])(mha, module)
    return module


def describe(name, args, x, train=False):
    d_in, d_out, heads, ctx, drop, qkv_bias = args
    return (f"{name}(d_in={d_in}, d_out={d_out}, num_heads={heads}, context_length={ctx}, dropout={drop}, "
            f"qkv_bias={qkv_bias}) in {'training' if train else 'eval'} mode on input {tuple(x.shape)}")


def check_forward(student, ref, seeds, name, cases, names, core="manual", extra=None):
    steps, expected = [], []
    for i, (args, (b, n), scale) in enumerate(cases):
        W = weights(args[0], args[1], args[5], seed=seeds(f"W{i}"))
        module = reference(ref, name, args, W)
        x = seeded(b, n, args[0], seed=seeds(f"x{i}"), scale=scale)
        steps += build_and_run(f"m{i}", f"efficient_mha.{name}", list(args), state(module), x,
                               buffers=name != "MHAPyTorchScaledDotProduct")
        found = mistakes(x, W, args[2], names, drop=args[4], seed=5, core=core)
        if extra is class_mistakes:
            found.update(extra(module)(x, W, args))
        elif extra is not None:
            found.update(extra(x, W, args))
        expected.append((x, run(module, x, seed=5), found, args))
    plan = student.plan(steps, needs=f"efficient_mha.{name}")
    for i, (x, want, found, args) in enumerate(expected):
        expect_close(plan.values[f"m{i}_out"], want, describe(name, args, x), found)
        if name != "MHAPyTorchScaledDotProduct":
            expect_buffers(plan, f"m{i}", ["mask"], describe(name, args, x))


EVAL_DROPOUT = {"dropout applied in eval mode too (nn.Dropout follows .eval(); F.dropout needs "
                "training=self.training)": "dropout in eval"}


@points(5)
def test_combined_qkv_forward(student, ref, seeds):
    """MultiHeadAttentionCombinedQKV: qkv holds queries, keys, values in that order; equals chapter 3's; mask a buffer"""
    check_forward(student, ref, seeds, "MultiHeadAttentionCombinedQKV", CASES,
                  {**LAYOUT_MISTAKES, **COMMON_MISTAKES, **EVAL_DROPOUT})


def untransposed(x, W, args):
    if args[0] != args[1]:
        return {}
    flipped = {**W, **{k: W[k].T for k in ("wq", "wk", "wv")}}
    return {"W_query, W_key, W_value used as nn.Linear weights (einsum 'bnd,ed->bne'; they are (d_in, d_out): "
            "'bnd,de->bne')": lambda: mistakes(x, flipped, args[2], {"": "book"})[""]()}


@points(4)
def test_einsum_forward(student, ref, seeds):
    """MHAEinsum: W_query, W_key, W_value of shape (d_in, d_out) used in einsum; equals chapter 3's; mask a buffer"""
    check_forward(student, ref, seeds, "MHAEinsum", SQUARE[:1] + CASES, {**COMMON_MISTAKES, **EVAL_DROPOUT},
                  extra=untransposed)


SDPA_MISTAKES = {
    "the causal mask inverted: SDPA's boolean attn_mask is True where a query MAY attend (chapter 3's mask "
    "is True where it may not; pass ~mask, or is_causal=True)": "mask inverted",
    "is_causal=True forgotten (no mask: every token sees the future)": "no mask",
    "dropout_p used in eval mode too (SDPA is a function: pass dropout_p=self.dropout if self.training else 0.0)":
        "dropout in eval",
}


@points(5)
def test_sdpa_forward(student, ref, seeds):
    """MHAPyTorchScaledDotProduct: F.scaled_dot_product_attention, causal, no dropout in eval; equals chapter 3's"""
    check_forward(student, ref, seeds, "MHAPyTorchScaledDotProduct", CASES, {**LAYOUT_MISTAKES, **SDPA_MISTAKES},
                  core="sdpa")


def class_mistakes(module):
    """MHAPyTorchClass's mistakes, run through nn.MultiheadAttention itself (its fast path treats a
    row with nothing to attend to its own way)."""
    def wrong(x, W, args):
        def call(mask):
            with torch.no_grad():
                return module.proj(module.multihead_attn(x, x, x, attn_mask=mask, need_weights=False)[0])
        n = x.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        return {"the causal mask inverted: nn.MultiheadAttention's boolean attn_mask is True where a query may NOT "
                "attend (the opposite of SDPA's)": lambda: call(~causal),
                "no attn_mask given (every token sees the future)": lambda: call(None)}
    return wrong


@points(3)
def test_pytorch_class_forward(student, ref, seeds):
    """MHAPyTorchClass: nn.MultiheadAttention, a causal boolean attn_mask (a buffer), then proj; equals chapter 3's"""
    check_forward(student, ref, seeds, "MHAPyTorchClass", SQUARE, {}, extra=class_mistakes)


@points(3)
def test_dropout_in_training(student, ref, seeds):
    """in training mode, dropout on the attention weights (the same draws as the reference); SDPA's self.dropout a float"""
    args, (b, n) = (6, 8, 2, 10, 0.5, True), (2, 7)
    steps, expected = [], {}
    for name in ("MultiHeadAttentionCombinedQKV", "MHAEinsum", "MHAPyTorchScaledDotProduct"):
        W = weights(6, 8, True, seed=seeds("W"))
        module = reference(ref, name, args, W, train=True)
        x = seeded(b, n, 6, seed=seeds("x"))
        steps += build_and_run(name, f"efficient_mha.{name}", list(args), state(module), x, train=True, seed=123)
        found = {"no dropout in training mode": lambda x=x, W=W: mistakes(x, W, 2, {"": "book"})[""]()}
        expected[name] = (x, run(module, x, seed=123), found)
    steps.append({"let": "rate", "attr": "MHAPyTorchScaledDotProduct.dropout", "return": True})
    plan = student.plan(steps, needs="efficient_mha.MultiHeadAttentionCombinedQKV")
    rate = plan.values["rate"]
    if type(rate) is not float or rate != 0.5:
        raise AssertionError(f"MHAPyTorchScaledDotProduct(..., dropout=0.5).dropout is {rate!r}: it must hold the rate, "
                             "a float (SDPA takes dropout_p as a number)")
    for name, (x, want, found) in expected.items():
        expect_close(plan.values[f"{name}_out"], want,
                     describe(name, args, x, train=True) + " after torch.manual_seed(123)", found)


def transfer_mistakes(ref, name, args, W, x):
    """Weights moved in wrongly: each as the reference class holding them would compute."""
    def via(W2):
        return lambda: run(reference(ref, name, args, W2), x)
    swapped = {"wq": W["wk"], "wk": W["wq"], "bq": W["bk"], "bk": W["bq"]}
    found = {"W_query and W_key stacked in the wrong order (queries first, then keys, then values)":
             via({**W, **swapped}),
             "W_key and W_value stacked in the wrong order (queries first, then keys, then values)":
             via({**W, "wk": W["wv"], "wv": W["wk"], "bk": W["bv"], "bv": W["bk"]})}
    if name == "MHAEinsum":  # nn.Linear's (d_out, d_in) weight reshaped, not transposed, into (d_in, d_out)
        module = reference(ref, name, args, W)
        reshaped = state(module)
        for mine, theirs in (("query", "q"), ("key", "k"), ("value", "v")):
            reshaped[f"W_{mine}"] = W[f"w{theirs}"].reshape(reshaped[f"W_{mine}"].shape)
        found["the linear weights copied without the transpose (an nn.Linear keeps (d_out, d_in), MHAEinsum's "
              "W_query is (d_in, d_out): copy linear.weight.T)"] = lambda: run(loaded(type(module), args, reshaped), x)
    if name == "MHAPyTorchClass":
        module = reference(ref, name, args, W)
        with_twice = state(module)
        with_twice["multihead_attn.out_proj.weight"] = W["wo"]
        if "multihead_attn.out_proj.bias" in with_twice:
            with_twice["multihead_attn.out_proj.bias"] = W["bo"]
        found["chapter 3's out_proj copied into both multihead_attn.out_proj and proj (one of them must do "
              "nothing: identity weight, zero bias)"] = lambda: run(loaded(type(module), args, with_twice), x)
    return found


@points(4)
def test_transfers(student, ref, seeds):
    """each transfer_to_* moves a chapter-3 MultiHeadAttention's weights so that the class computes the same"""
    for name, transfer in CLASSES.items():
        for i, (args, (b, n), _) in enumerate(SQUARE if name == "MHAPyTorchClass" else CASES[:2]):
            d_in, d_out, heads, ctx, drop, qkv_bias = args
            W = weights(d_in, d_out, qkv_bias, seed=seeds(f"W{i}"))
            x = seeded(b, n, d_in, seed=seeds(f"x{i}"))
            plan = student.plan([
                {"let": "mha", "call": "multihead_attention.MultiHeadAttention",
                 "args": [d_in, d_out, ctx, drop, heads, qkv_bias], "stand_in": ch03_stand_ins(W)},
                {"let": "target", "call": f"efficient_mha.{name}", "args": list(args), "seed": 1},
                {"let": "moved", "call": f"efficient_mha.{transfer}", "args": [{"$ref": "mha"}, {"$ref": "target"}]},
                *named_parameters_steps("after", "target"), *named_parameters_steps("source", "mha")],
                needs=f"efficient_mha.{transfer}")
            if plan.failed("mha") and plan.failed("target"):  # this part's own class: its own failure
                raise AssertionError(f"{transfer} could not be judged: efficient_mha.{name} could not be built "
                                     f"({plan.failed('target')})")
            if plan.failed("mha"):
                student.notes.append(f"{transfer} could not be judged: your chapter-3 MultiHeadAttention could not "
                                     f"be built ({plan.failed('mha')}); chapter 3 grades it.")
                continue
            what = (f"{describe(name, args, x)}, after {transfer}(mha, it) from a chapter-3 "
                    f"MultiHeadAttention(d_in={d_in}, d_out={d_out}, context_length={ctx}, num_heads={heads}, "
                    f"qkv_bias={qkv_bias}) (run with the reference {name} holding the weights you moved in)")
            source = {k: v for k, v in as_dict(plan.values["source"], "mha").items()}
            stood_in = {f"{layer}.{kind}": spec[kind] for layer, spec in ch03_stand_ins(W).items()
                        for kind in ("weight", "bias") if spec[kind] is not None}
            if any(not torch.equal(source.get(k, torch.empty(0)), v) for k, v in stood_in.items()):
                raise AssertionError(f"{transfer} changed the chapter-3 MultiHeadAttention it reads: leave mha as it was")
            cls = getattr(ref.efficient_mha, name)
            try:
                moved = loaded(cls, args, as_dict(plan.values["after"], name))
            except AssertionError as exc:
                raise AssertionError(f"{what}: {exc}") from None
            expect_close(run(moved, x), run(reference(ref, name, args, W), x), what,
                         transfer_mistakes(ref, name, args, W, x))


SHARED = ("the class's parameters sharing memory with the chapter-3 module's (one of mha's parameters or modules "
          "assigned to the class, or .data set to mha's tensor without .clone()): training either then changes the "
          "other; copy the values")
RETURNED = "a transfer that returns something (the transfer_to_* functions fill the module they are given and return None)"


@points(1)
def test_transfers_as_you_call_them(student, ref, seeds):
    """each transfer_to_* called with autograd on returns None; the class then shares no memory with mha"""
    for name, transfer in CLASSES.items():
        args = SQUARE[0][0] if name == "MHAPyTorchClass" else CASES[1][0]  # qkv_bias=True: every layer a bias
        d_in, d_out, heads, ctx, drop, qkv_bias = args
        W, later = (weights(d_in, d_out, qkv_bias, seed=seeds(f"{k}_{name}")) for k in ("W", "later"))
        x = seeded(2, 5, d_in, seed=seeds(f"x_{name}"))
        # after the transfer the grader writes other values (``later``) into mha's layers, its stand-ins
        writes = [{"let": f"write_{layer}", "call": f"mha.{layer}", "args": [seeded(1, spec["weight"].shape[1], seed=7)],
                   "params": {k: v for k, v in spec.items() if v is not None}}
                  for layer, spec in ch03_stand_ins(later).items()]
        plan = student.plan([
            {"let": "mha", "call": "multihead_attention.MultiHeadAttention",
             "args": [d_in, d_out, ctx, drop, heads, qkv_bias], "stand_in": ch03_stand_ins(W)},
            {"let": "target", "call": f"efficient_mha.{name}", "args": list(args), "seed": 1},
            {"let": "moved", "call": f"efficient_mha.{transfer}", "args": [{"$ref": "mha"}, {"$ref": "target"}],
             "grad": True},
            {"let": "returned", "attr": "moved", "return": True},
            *writes, *named_parameters_steps("after", "target")], needs=f"efficient_mha.{transfer}")
        if plan.failed("target"):  # this part's own class: its own failure
            raise AssertionError(f"{transfer} could not be judged: efficient_mha.{name} could not be built "
                                 f"({plan.failed('target')})")
        if plan.failed("mha"):
            student.notes.append(f"{transfer} could not be judged: your chapter-3 MultiHeadAttention could not "
                                 f"be built ({plan.failed('mha')}); chapter 3 grades it.")
            continue
        called = f"{transfer}(mha, {name}(d_in={d_in}, d_out={d_out}, ...)) called with autograd on (as you call it)"
        if plan.failed("moved"):
            raise AssertionError(f"{called}: {plan.failed('moved')}")
        try:
            returned = plan.values["returned"]
        except StudentFailure as exc:  # not plain data: a module, say
            raise failure(f"{called} returned something other than None ({exc})", RETURNED) from None
        if returned is not None:
            raise failure(f"{called}: " + yours_vs_expected(yours=type(returned).__name__, yours_are="returned a",
                                                              expected="None"), RETURNED)
        for write in writes:
            if plan.failed(write["let"]):
                raise AssertionError(f"{called}: the grader could not write new values into mha.{write['call'][4:]} "
                                     f"afterwards: {plan.failed(write['let'])}")
        cls = getattr(ref.efficient_mha, name)
        try:
            moved = loaded(cls, args, as_dict(plan.values["after"], name))
        except AssertionError as exc:  # names or shapes: the forward checks charge them
            raise AssertionError(f"{called}: {exc}") from None
        got = run(moved, x)
        kept = [run(reference(ref, name, args, W), x), *transfer_mistakes(ref, name, args, W, x).values()]
        if any(close(got, answer() if callable(answer) else answer) for answer in kept):
            continue
        what = (f"{called}, then the grader writing new values into mha's W_query, W_key, W_value and out_proj: "
                f"the {name} you filled, run on input {tuple(x.shape)}")
        # the tensors of mha whose new values the class's parameters hold, each found by what the reference
        # class holds with that one tensor taken from ``later``; then the class holding all of them, run
        held, base = as_dict(plan.values["after"], name), state(reference(ref, name, args, W))
        shared = [t for t in W if W[t] is not None and any(
            k in held and held[k].shape == v.shape and not torch.equal(v, base[k]) and torch.equal(held[k], v)
            for k, v in state(reference(ref, name, args, {**W, t: later[t]})).items())]
        model = run(reference(ref, name, args, {**W, **{t: later[t] for t in shared}}), x) if shared else None
        expect_close(got, kept[0], what, {SHARED: model} if shared else None)


def close(a, b):
    return (isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
            and torch.allclose(a, b, atol=ATOL, rtol=RTOL))
