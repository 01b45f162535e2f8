"""Hidden checks of sliding-window attention (15 points).

The mask is judged as a value; the class against the reference on seeded weights; a window
at least as long as the input against the reference chapter-3 MultiHeadAttention."""
import pytest
import torch

from _efficient import (COMMON_MISTAKES, build_and_run, ch03_params, expect_buffers, hidden_mask, loaded, mistakes, run,
                        weights)
from autograder.grading.compare import expect_close, seeded

points = pytest.mark.points
SWA = "sliding_window.SlidingWindowAttention"
WINDOW_MISTAKES = {
    "the window one token too long (query i sees keys i - window .. i: window + 1 tokens)": "window + 1",
    "the window one token too short (query i sees keys i - window + 2 .. i: window - 1 tokens)": "window - 1",
    "the window open both ways (later tokens seen too: the window is causal)": "window both ways",
    "no causal part (later tokens seen too: hide j > i as well as the keys window or more back)": "window only",
}
MASK_MISTAKES = {**WINDOW_MISTAKES,
                 "only the causal mask (no window)": "causal no window",
                 "the mask inverted (True where a query may see the key)": "inverted window"}


def mask_mistake(n, window, variant):
    if variant == "causal no window":
        return hidden_mask(n)
    if variant == "inverted window":
        return ~hidden_mask(n, window)
    return hidden_mask(n, window, variant)


@points(5)
def test_sliding_window_mask(student, ref):
    """sliding_window_mask(num_tokens, window): True where j > i or j <= i - window; bool; a window below 1 refused"""
    cases = [(6, 2), (7, 1), (8, 3), (5, 5), (4, 9)]
    plan = student.plan([{"let": f"m{i}", "call": "sliding_window.sliding_window_mask", "args": [n, w], "return": True}
                         for i, (n, w) in enumerate(cases)]
                        + [{"let": "zero", "call": "sliding_window.sliding_window_mask", "args": [4, 0], "return": True}],
                        needs="sliding_window.sliding_window_mask")
    for i, (n, w) in enumerate(cases):
        what, got = f"sliding_window_mask(num_tokens={n}, window={w})", plan.values[f"m{i}"]
        if not isinstance(got, torch.Tensor) or got.dtype != torch.bool:
            raise AssertionError(f"{what} gave {getattr(got, 'dtype', type(got).__name__)}; expected a bool tensor")
        # compared as numbers: a difference of bools has no meaning
        found = {name: (lambda n=n, w=w, v=v: mask_mistake(n, w, v).float()) for name, v in MASK_MISTAKES.items()}
        expect_close(got.float(), ref.sliding_window.sliding_window_mask(n, w).float(), what, found)
    why = plan.failed("zero")
    if not why or "ValueError" not in why:
        raise AssertionError(f"sliding_window_mask(4, window=0) must raise ValueError (no token would see even "
                             f"itself): {why or 'it returned a mask'}")


# (d_in, d_out, num_heads, context_length, window, dropout, qkv_bias), (batch, num_tokens)
CASES = [((6, 8, 2, 10, 3, 0.0, False), (2, 9)), ((8, 6, 3, 8, 1, 0.0, True), (1, 8)),
         ((5, 12, 4, 9, 4, 0.5, False), (3, 7)), ((6, 8, 2, 12, 2, 0.0, True), (2, 5))]


def describe(args, x):
    d_in, d_out, heads, ctx, window, drop, qkv_bias = args
    return (f"SlidingWindowAttention(d_in={d_in}, d_out={d_out}, num_heads={heads}, context_length={ctx}, "
            f"window={window}, dropout={drop}, qkv_bias={qkv_bias}) in eval mode on input {tuple(x.shape)}")


@points(7)
def test_sliding_window_forward(student, ref):
    """SlidingWindowAttention: chapter 3's attention, each query seeing the last window tokens up to itself; mask a buffer"""
    steps, expected = [], []
    for i, (args, (b, n)) in enumerate(CASES):
        d_in, d_out, heads, ctx, window, drop, qkv_bias = args
        W = weights(d_in, d_out, qkv_bias, seed=600 + 10 * i)
        module = loaded(ref.sliding_window.SlidingWindowAttention, args, ch03_params(W))
        x = seeded(b, n, d_in, seed=650 + i, scale=2.0)
        steps += build_and_run(f"m{i}", SWA, list(args), ch03_params(W), x, buffers=True)
        names = {**WINDOW_MISTAKES, "no window: plain causal attention": "no window", **COMMON_MISTAKES}
        if drop:
            names["dropout applied in eval mode too (nn.Dropout follows .eval())"] = "dropout in eval"
        expected.append((x, run(module, x, seed=7), mistakes(x, W, heads, names, drop=drop, seed=7, window=window), args))
    plan = student.plan(steps, needs=SWA)
    for i, (x, want, found, args) in enumerate(expected):
        expect_close(plan.values[f"m{i}_out"], want, describe(args, x), found)
        expect_buffers(plan, f"m{i}", ["mask"], describe(args, x))


@points(3)
def test_a_window_as_long_as_the_input_is_causal_attention(student, ref):
    """with window >= num_tokens it equals chapter 3's MultiHeadAttention with the same weights"""
    steps, expected = [], []
    for i, (d_in, d_out, heads, ctx, window, qkv_bias, (b, n)) in enumerate([(6, 8, 2, 10, 10, True, (2, 10)),
                                                                             (8, 8, 4, 12, 6, False, (1, 6))]):
        W = weights(d_in, d_out, qkv_bias, seed=700 + 10 * i)
        mha = loaded(ref.multihead_attention.MultiHeadAttention, (d_in, d_out, ctx, 0.0, heads, qkv_bias),
                     ch03_params(W))
        x = seeded(b, n, d_in, seed=750 + i)
        args = [d_in, d_out, heads, ctx, window, 0.0, qkv_bias]
        steps += build_and_run(f"m{i}", SWA, args, ch03_params(W), x)
        expected.append((x, run(mha, x), args, W, heads, window))
    plan = student.plan(steps, needs=SWA)
    for i, (x, want, args, W, heads, window) in enumerate(expected):
        expect_close(plan.values[f"m{i}_out"], want, describe(args, x) + f": window {window} >= {x.shape[1]} tokens, "
                     "so it must equal chapter 3's causal attention", mistakes(x, W, heads, WINDOW_MISTAKES,
                                                                              window=window))
