"""Hidden checks of grouped-query attention (20 points).

The class is judged against the reference on seeded weights in its own layout; its equality with
multi-head attention when every query head has its own key/value head is judged against the
reference chapter-3 MultiHeadAttention (never the student's own, whose mistakes chapter 3
charges); the KV-cache size as a number computed from the config."""
import pytest

from _efficient import (COMMON_MISTAKES, attention, build_and_run, ch03_params, expect_buffers, loaded, mistakes, run,
                        weights)
from autograder.grading.compare import expect_close, seeded, yours_vs_expected
from autograder.grading.result import failure

points = pytest.mark.points
GQA = "grouped_query.GroupedQueryAttention"

# (d_in, d_out, num_heads, num_kv_groups, context_length, dropout, qkv_bias), (batch, num_tokens), train
CASES = [((6, 8, 4, 2, 10, 0.0, False), (2, 7), False), ((8, 12, 6, 3, 8, 0.0, True), (3, 8), False),
         ((5, 8, 4, 1, 9, 0.5, False), (1, 4), False), ((6, 12, 6, 2, 10, 0.5, True), (2, 6), True)]
REPEAT = ("keys and values repeated with repeat (k0 k1 k0 k1) where repeat_interleave is meant (k0 k0 k1 k1: query "
          "heads 0..group_size-1 share key/value head 0)")

NO_DIVIDES = ("no check that num_kv_groups divides num_heads in the constructor "
              "(if num_heads % num_kv_groups != 0: raise ValueError(...))")


def describe(args, x, train=False):
    d_in, d_out, heads, groups, ctx, drop, qkv_bias = args
    return (f"GroupedQueryAttention(d_in={d_in}, d_out={d_out}, num_heads={heads}, num_kv_groups={groups}, "
            f"context_length={ctx}, dropout={drop}, qkv_bias={qkv_bias}) in {'training' if train else 'eval'} "
            f"mode on input {tuple(x.shape)}")


@points(9)
def test_gqa_forward(student, ref, seeds):
    """keys and values with num_kv_groups heads, each shared by num_heads // num_kv_groups query heads in a row; mask a buffer"""
    steps, expected = [], []
    for i, (args, (b, n), train) in enumerate(CASES):
        d_in, d_out, heads, groups, ctx, drop, qkv_bias = args
        W = weights(d_in, d_out, qkv_bias, seed=seeds(f"W{i}"), kv_out=groups * d_out // heads)
        module = loaded(ref.grouped_query.GroupedQueryAttention, args, ch03_params(W), train=train)
        x = seeded(b, n, d_in, seed=seeds(f"x{i}"), scale=2.0)
        steps += build_and_run(f"m{i}", GQA, list(args), ch03_params(W), x, train=train, seed=7, buffers=True)
        names = {REPEAT: "repeat", **COMMON_MISTAKES}
        if drop and not train:
            names["dropout applied in eval mode too (nn.Dropout follows .eval())"] = "dropout in eval"
        found = mistakes(x, W, heads, names, drop=drop, seed=7, groups=groups)
        if train:
            found = {REPEAT: lambda x=x, W=W: attention(x, W, 6, variant="repeat", groups=2, drop=0.5, seed=7),
                     "no dropout on the attention weights in training mode":
                         lambda x=x, W=W: attention(x, W, 6, groups=2)}
        expected.append((x, run(module, x, seed=7), found, args, train))
    plan = student.plan(steps, needs=GQA)
    for i, (x, want, found, args, train) in enumerate(expected):
        expect_close(plan.values[f"m{i}_out"], want, describe(args, x, train), found)
        expect_buffers(plan, f"m{i}", ["mask"], describe(args, x, train))


@points(3)
def test_gqa_with_as_many_groups_as_heads_is_multi_head_attention(student, ref, seeds):
    """with num_kv_groups == num_heads it holds chapter 3's weights and equals its MultiHeadAttention"""
    steps, expected = [], []
    for i, (d_in, d_out, heads, ctx, qkv_bias, (b, n)) in enumerate([(6, 8, 4, 10, True, (2, 9)),
                                                                      (8, 6, 3, 6, False, (1, 6))]):
        W = weights(d_in, d_out, qkv_bias, seed=seeds(f"W{i}"))
        mha = loaded(ref.multihead_attention.MultiHeadAttention, (d_in, d_out, ctx, 0.0, heads, qkv_bias),
                     ch03_params(W))
        x = seeded(b, n, d_in, seed=seeds(f"x{i}"))
        args = [d_in, d_out, heads, heads, ctx, 0.0, qkv_bias]
        steps += build_and_run(f"m{i}", GQA, args, ch03_params(W), x)
        expected.append((x, run(mha, x), args))
    plan = student.plan(steps, needs=GQA)
    for i, (x, want, args) in enumerate(expected):
        expect_close(plan.values[f"m{i}_out"], want, describe(args, x) + ", with chapter 3's MultiHeadAttention's "
                     "weights (num_kv_groups == num_heads: one key/value head per query head)")


@points(3)
def test_gqa_refuses_groups_that_do_not_divide_the_heads(student):
    """num_kv_groups must divide num_heads: the constructor raises ValueError (or the book's AssertionError); dividing groups build"""
    bad = [[8, 8, 4, 3, 6], [8, 12, 6, 4, 6], [6, 8, 2, 4, 6]]
    good = [[8, 8, 4, 1, 6], [8, 8, 4, 4, 6], [8, 12, 6, 3, 6]]
    plan = student.plan([{"let": f"bad{i}", "call": GQA, "args": args} for i, args in enumerate(bad)]
                        + [{"let": f"good{i}", "call": GQA, "args": args} for i, args in enumerate(good)], needs=GQA)
    for i, args in enumerate(good):
        if plan.failed(f"good{i}"):
            raise AssertionError(f"GroupedQueryAttention{tuple(args)} must build (num_kv_groups={args[3]} divides "
                                 f"num_heads={args[2]}): {plan.failed(f'good{i}')}")
    for i, args in enumerate(bad):
        why = plan.failed(f"bad{i}")
        if why and not any(f"raised {error}" in why for error in ("ValueError", "AssertionError")):
            raise AssertionError(f"GroupedQueryAttention{tuple(args)} must raise ValueError, or AssertionError as the "
                                 f"book's assert does (num_kv_groups does not divide num_heads); it failed otherwise: "
                                 f"{why}")
        if not why:  # built: the one way to get here is a constructor without the check
            raise failure(f"GroupedQueryAttention(d_in={args[0]}, d_out={args[1]}, num_heads={args[2]}, "
                          f"num_kv_groups={args[3]}, ...) was built: num_kv_groups does not divide num_heads, "
                          "so some query heads would have no key/value head; raise ValueError", NO_DIVIDES)


BONUS = {"emb_dim": 4096, "n_heads": 32, "n_layers": 32, "context_length": 32768}
KV_MISTAKES = {
    "only the keys counted (a value vector per token too: times 2)": lambda c, b, e, kv, hd: b * c["context_length"]
    * c["n_layers"] * kv * hd * e,
    "n_heads key/value heads counted (grouped-query attention keeps n_kv_groups)":
        lambda c, b, e, kv, hd: 2 * b * c["context_length"] * c["n_layers"] * c["n_heads"] * hd * e,
    "the group size (n_heads // n_kv_groups) taken for the number of key/value heads":
        lambda c, b, e, kv, hd: 2 * b * c["context_length"] * c["n_layers"] * hd * e
        * (c["n_heads"] // kv if "n_kv_groups" in c else c["n_heads"]),
    "one layer counted (every one of the n_layers keeps its own cache)":
        lambda c, b, e, kv, hd: 2 * b * c["context_length"] * kv * hd * e,
    "the batch size left out": lambda c, b, e, kv, hd: 2 * c["context_length"] * c["n_layers"] * kv * hd * e,
    "the size in gigabytes (divided by 1e9) where bytes are asked for, as an int":
        lambda c, b, e, kv, hd: 2 * b * c["context_length"] * c["n_layers"] * kv * hd * e / 1e9,
    "bytes_per_elem left out (counted numbers, not bytes)":
        lambda c, b, e, kv, hd: 2 * b * c["context_length"] * c["n_layers"] * kv * hd,
}


@points(4)
def test_kv_cache_bytes(student, ref):
    """kv_cache_bytes(cfg, batch_size, bytes_per_elem): 2 * batch * context * layers * kv heads * head_dim * bytes"""
    cases = [(BONUS, 1, 2), ({**BONUS, "n_kv_groups": 8}, 1, 2), ({**BONUS, "n_kv_groups": 4}, 1, 2),
             ({"emb_dim": 768, "n_heads": 12, "n_layers": 12, "context_length": 1024}, 3, 4),
             ({"emb_dim": 96, "n_heads": 6, "n_layers": 5, "context_length": 70, "n_kv_groups": 2}, 2, 4),
             ({"emb_dim": 64, "n_heads": 8, "n_layers": 3, "context_length": 10, "n_kv_groups": 8, "vocab_size": 9},
              5, 2)]
    plan = student.plan([{"let": f"c{i}", "call": "grouped_query.kv_cache_bytes", "args": [cfg, b, e],
                          "return": True} for i, (cfg, b, e) in enumerate(cases)], needs="grouped_query.kv_cache_bytes")
    answers = [(cfg, b, e, plan.values[f"c{i}"], ref.grouped_query.kv_cache_bytes(cfg, b, e))
               for i, (cfg, b, e) in enumerate(cases)]
    wrong = [(cfg, b, e, got, want) for cfg, b, e, got, want in answers if not (type(got) is int and got == want)]
    if not wrong:
        return
    # a mistake is named only where it explains every answer, so two that coincide on one case are told apart
    named = [name for name, f in KV_MISTAKES.items()
             if all(f(cfg, b, e, cfg.get("n_kv_groups", cfg["n_heads"]), cfg["emb_dim"] // cfg["n_heads"]) == got
                    for cfg, b, e, got, _ in answers)]
    cfg, b, e, got, want = wrong[0]
    raise failure(f"kv_cache_bytes({cfg}, batch_size={b}, bytes_per_elem={e}): "
                  + yours_vs_expected(yours=repr(got), yours_are="gave", expected=f"the int {want:,}") + ".",
                  " or ".join(named))


DEFAULTS = {
    "bytes_per_elem defaulting to 4 (fp32); the default is 2, bf16, as the bonus material counts": {"bytes_per_elem": 4},
    "batch_size defaulting to another number than one sequence (batch_size=1)": {"batch_size": 2},
}


@points(1)
def test_kv_cache_bytes_defaults(student, ref):
    """kv_cache_bytes(cfg) and kv_cache_bytes(cfg, batch_size): the defaults, one sequence of 2-byte (bf16) numbers"""
    cases = [((BONUS,), {}), (({**BONUS, "n_kv_groups": 8},), {}),
             (({"emb_dim": 96, "n_heads": 6, "n_layers": 5, "context_length": 70, "n_kv_groups": 2}, 3), {}),
             (({"emb_dim": 64, "n_heads": 8, "n_layers": 3, "context_length": 10},), {"batch_size": 4})]
    plan = student.plan([{"let": f"c{i}", "call": "grouped_query.kv_cache_bytes", "args": list(args), "kwargs": kwargs,
                          "return": True} for i, (args, kwargs) in enumerate(cases)],
                        needs="grouped_query.kv_cache_bytes")
    for i, (args, kwargs) in enumerate(cases):
        got, want = plan.values[f"c{i}"], ref.grouped_query.kv_cache_bytes(*args, **kwargs)
        if type(got) is int and got == want:
            continue
        # a mistake is named only where it explains every answer: a wrong default (each case leaves bytes_per_elem
        # to its default, some batch_size too), or one of the formula's, with the arguments the call meant
        calls = [(plan.values[f"c{k}"], a, kw) for k, (a, kw) in enumerate(cases)]
        named = [name for name, default in DEFAULTS.items()
                 if all(answer == ref.grouped_query.kv_cache_bytes(*meant(a, kw, default)) for answer, a, kw in calls)]
        named += [name for name, f in KV_MISTAKES.items() if all(
            f(cfg, b, e, cfg.get("n_kv_groups", cfg["n_heads"]), cfg["emb_dim"] // cfg["n_heads"]) == answer
            for answer, (cfg, b, e) in ((answer, meant(a, kw)) for answer, a, kw in calls))]
        shown = ", ".join([repr(args[0]), *map(repr, args[1:]), *(f"{k}={v!r}" for k, v in kwargs.items())])
        raise failure(f"kv_cache_bytes({shown}): " + yours_vs_expected(yours=repr(got), yours_are="gave",
                                                                     expected=f"the int {want:,}") + ".",
                      " or ".join(named))


def meant(args, kwargs, defaults=None):
    """(cfg, batch_size, bytes_per_elem) of a call with ``args`` and ``kwargs``, the ones it leaves out
    taken from ``defaults`` (the signature's: batch_size=1, bytes_per_elem=2)."""
    given = {**dict(zip(("cfg", "batch_size", "bytes_per_elem"), args)), **kwargs}
    defaults = {"batch_size": 1, "bytes_per_elem": 2, **(defaults or {})}
    return given["cfg"], given.get("batch_size", defaults["batch_size"]), given.get("bytes_per_elem",
                                                                                     defaults["bytes_per_elem"])
