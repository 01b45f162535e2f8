"""Hidden checks of sliding-window attention (15 points).

The mask is judged as a value; the class against the reference on seeded weights; a window
at least as long as the input against the reference chapter-3 MultiHeadAttention. The cache:
its outputs fed in pieces against the grader's own cached attention (the book's, or that of a
window mistake the checks above charged the class with, by the grader's own names); its bound by
what the kernel measures, a long sequence fed in pieces in a child whose address space holds its
outputs and not every key and value beside them. Its buffers cache_k and cache_v are the child's
own report: more than window positions there costs, fewer earns nothing."""
import pytest
import torch
import torch.nn.functional as F

from _efficient import (COMMON_MISTAKES, build_and_run, ch03_params, expect_buffers, first_match, hidden_mask,
                        loaded, mistakes, run, split, weights)
from autograder.grading.compare import expect_close, seeded, yours_vs_expected
from autograder.grading.kit import once
from autograder.grading.result import failure
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points
SWA = "sliding_window.SlidingWindowAttention"
WINDOW_MISTAKES = {
    "the window one token too long (query i sees keys i - window .. i: window + 1 tokens)": "window + 1",
    "the window one token too short (query i sees keys i - window + 2 .. i: window - 1 tokens)": "window - 1",
    "the window open both ways (later tokens seen too: the window is causal)": "window both ways",
    "no causal part (later tokens seen too: hide j > i as well as the keys window or more back)": "window only",
}
NO_WINDOW = "no window: plain causal attention"
MASK_MISTAKES = {**WINDOW_MISTAKES,
                 "only the causal mask (no window)": "causal no window",
                 "the mask inverted (True where a query may see the key)": "inverted window"}


def mask_mistake(n, window, variant):
    if variant == "causal no window":
        return hidden_mask(n)
    if variant == "inverted window":
        return ~hidden_mask(n, window)
    return hidden_mask(n, window, variant)


@points(4)
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


@points(5)
def test_sliding_window_forward(student, ref, seeds):
    """SlidingWindowAttention: chapter 3's attention, each query seeing the last window tokens up to itself; mask a buffer"""
    steps, expected = [], []
    for i, (args, (b, n)) in enumerate(CASES):
        d_in, d_out, heads, ctx, window, drop, qkv_bias = args
        W = weights(d_in, d_out, qkv_bias, seed=seeds(f"W{i}"))
        module = loaded(ref.sliding_window.SlidingWindowAttention, args, ch03_params(W))
        x = seeded(b, n, d_in, seed=seeds(f"x{i}"), scale=2.0)
        steps += build_and_run(f"m{i}", SWA, list(args), ch03_params(W), x, buffers=True)
        names = {**WINDOW_MISTAKES, NO_WINDOW: "no window", **COMMON_MISTAKES}
        if drop:
            names["dropout applied in eval mode too (nn.Dropout follows .eval())"] = "dropout in eval"
        expected.append((x, run(module, x, seed=7), mistakes(x, W, heads, names, drop=drop, seed=7, window=window), args))
    plan = student.plan(steps, needs=SWA)
    for i, (x, want, found, args) in enumerate(expected):
        expect_close(plan.values[f"m{i}_out"], want, describe(args, x), found)
        expect_buffers(plan, f"m{i}", ["mask"], describe(args, x))


@points(2)
def test_a_window_as_long_as_the_input_is_causal_attention(student, ref, seeds):
    """with window >= num_tokens it equals chapter 3's MultiHeadAttention with the same weights"""
    steps, expected = [], []
    for i, (d_in, d_out, heads, ctx, window, qkv_bias, (b, n)) in enumerate([(6, 8, 2, 10, 10, True, (2, 10)),
                                                                             (8, 8, 4, 12, 6, False, (1, 6))]):
        W = weights(d_in, d_out, qkv_bias, seed=seeds(f"W{i}"))
        mha = loaded(ref.multihead_attention.MultiHeadAttention, (d_in, d_out, ctx, 0.0, heads, qkv_bias),
                     ch03_params(W))
        x = seeded(b, n, d_in, seed=seeds(f"x{i}"))
        args = [d_in, d_out, heads, ctx, window, 0.0, qkv_bias]
        steps += build_and_run(f"m{i}", SWA, args, ch03_params(W), x)
        expected.append((x, run(mha, x), args, W, heads, window))
    plan = student.plan(steps, needs=SWA)
    for i, (x, want, args, W, heads, window) in enumerate(expected):
        expect_close(plan.values[f"m{i}_out"], want, describe(args, x) + f": window {window} >= {x.shape[1]} tokens, "
                     "so it must equal chapter 3's causal attention", mistakes(x, W, heads, WINDOW_MISTAKES,
                                                                              window=window))


# -- the cache -------------------------------------------------------------------------------------
NOT_TRIMMED = "the cache not trimmed: it grows with the sequence (keep only the last window positions)"
ONE_TOO_MANY = "the cache trimmed one position too long (window + 1 kept; a token never sees keys window or more back)"
CACHE_MISTAKES = {  # {name: (positions kept after a call, trimmed before attending, mask variant)}
    "the cache trimmed one position too short (the next token sees itself and the window - 1 positions before it: "
    "keep at least those)": ("window - 2", False, "book"),
    "the cache trimmed to the window before attending (the first new tokens of a piece lose keys they see: trim "
    "after the attention, or keep the window before the new tokens)": ("window", True, "book"),
    "the mask not offset by the cache (its columns must start at the position of the first key held, not at 0)":
        ("window", False, "columns from 0"),
    "the mask's rows not the new tokens' positions in the sequence (they start at the position of the first "
    "new token)": ("window", False, "rows from 0"),
}
PERSISTENT = ("the cache in persistent buffers (register_buffer(\"cache_k\", None, persistent=False): a "
              "checkpoint must not hold a sequence's keys)")
SIZE_MISTAKES = {NOT_TRIMMED: "all", ONE_TOO_MANY: "window + 1"}
# The window's own mistakes the checks above name, by the mask each sets ("no window": chapter 3's causal mask):
# where the module was charged with one, its cache may follow that mistake's model, built here (it costs there).
WINDOW_NAMES = {**WINDOW_MISTAKES, NO_WINDOW: "no window", "only the causal mask (no window)": "no window"}
# A correct cache keeps the last window positions, or window - 1 (all the next token sees): the same outputs
# with the book's window, other outputs with a window that sees further.
KEEPS = ("window", "window - 1")


def cached_pieces(x, W, heads, window, sizes, keep="window", trim_first=False, mask="book", variant="book"):
    """The rows of x fed in pieces of ``sizes`` to sliding-window attention with a cache, and the
    positions the cache holds after each piece; ``keep``, ``trim_first``, ``mask``: a mistake of the
    cache; ``variant``: one of the window's own ("book" or a value of WINDOW_NAMES), its mask indexed as
    the book's is, by the positions of the new tokens and of the keys held."""
    q_all, k_all, v_all = (split(F.linear(x, W[w], W[b]), heads) for w, b in (("wq", "bq"), ("wk", "bk"),
                                                                               ("wv", "bv")))
    kept = {"all": None, "window": window, "window + 1": window + 1, "window - 1": max(window - 1, 0),
            "window - 2": max(window - 2, 0)}[keep]
    full = hidden_mask(x.shape[1], None if variant == "no window" else window,
                       "causal" if variant in ("book", "no window") else variant)
    held, rows, counts, start = [], [], [], 0
    for size in sizes:
        new = list(range(start, start + size))
        keys = held + new
        if trim_first:
            keys = keys[-window:]
        qpos, kpos = torch.tensor(new)[:, None], torch.tensor(keys)[None, :]
        if mask == "columns from 0":
            kpos = torch.arange(len(keys))[None, :]
        elif mask == "rows from 0":
            qpos, kpos = torch.arange(size)[:, None], torch.arange(len(keys))[None, :]
        scores = (q_all[:, :, new] @ k_all[:, :, keys].transpose(-2, -1)).masked_fill(full[qpos, kpos], -torch.inf)
        context = torch.softmax(scores / q_all.shape[-1]**0.5, dim=-1) @ v_all[:, :, keys]
        b = x.shape[0]
        rows.append(F.linear(context.transpose(1, 2).reshape(b, size, -1), W["wo"], W["bo"]))
        held = keys if kept is None else keys[max(len(keys) - kept, 0):] if kept else []
        counts.append(len(held))
        start += size
    return torch.cat(rows, dim=1), counts


def pieces(key, x, W, heads, window, sizes, keep="window", variant="book"):
    """``cached_pieces``' rows of a correct cache (the book's window, or ``variant``), computed once per grading
    process: ``key`` names x and W (their seeds and shapes)."""
    return once(("efficient_attention sliding-window pieces", key, tuple(sizes), keep, variant),
                lambda: cached_pieces(x, W, heads, window, sizes, keep, variant=variant)[0])


def windows(student):
    """The windows a cache is judged with: the book's, then each window mistake the checks above charged this
    module with (the grader's own names, ``Student.charged``: it costs there, not again here)."""
    said = student.charged.get("sliding_window", ())
    found = [v for name, v in WINDOW_NAMES.items() if any(name in words for words in said)]
    return ["book", *dict.fromkeys(found)]


def correct_caches(key, x, W, heads, window, sizes, allowed):
    """The grader's rows of every correct cache with the ``allowed`` windows: the last window positions kept, or
    window - 1 (all the next token sees: the same rows with the book's window, others with one that sees
    further); the book's first."""
    return [pieces(key, x, W, heads, window, sizes, keep, variant) for variant in allowed for keep in KEEPS]


def expect_one_of(got, models, what, found=None):
    """``got`` is one of the grader's ``models``; else it fails beside the first (the book's), naming what fits."""
    if first_match(got, dict(enumerate(models))) is None:
        expect_close(got, models[0], what, found)


# (d_in, d_out, num_heads, context_length, window, qkv_bias), batch, pieces; the second sequence after the reset
CACHE_CASES = [((6, 8, 2, 16, 3, False), 2, [5, 1, 1, 2, 1, 1], [2, 1, 1]),
               ((5, 6, 3, 12, 1, True), 1, [2, 1, 1, 1], [1, 2]),
               ((4, 8, 4, 12, 4, False), 2, [1, 1, 1, 1, 1, 1, 2], [3, 3]),
               ((8, 8, 2, 12, 10, True), 1, [3, 1, 2, 1], [2, 2])]

# The bound, measured from outside: a sequence of PIECES pieces of PIECE tokens (the same input each time, sent
# once) fed with use_cache=True in a child of its own whose address space the kernel lets grow by LIMIT bytes
# (RLIMIT_AS, set before any of the submission runs there). The plan keeps every piece's output (OUTPUTS bytes
# in all); every key and value of the sequence would take twice that. LIMIT is both together: a cache that
# keeps them all (in any attribute, list or closure) needs more, by at least one piece's work; one of the last
# window positions needs far less (measured: the reference and the correct styles of tests/efficient_attention
# 1.5 to 1.9 * OUTPUTS, the bank's cheats that keep every key 4.3 * OUTPUTS or more).
STREAM = (4, 64, 1, 256, 2, 0.0, False)  # (d_in, d_out, num_heads, context_length, window, dropout, qkv_bias)
BATCH, PIECE, PIECES = 128, 16, 16
OUTPUTS = PIECES * PIECE * BATCH * STREAM[1] * 4
LIMIT = 3 * OUTPUTS
OUT_OF_MEMORY = ("MemoryError", "can't allocate memory", "Cannot allocate memory", "was killed")


def held(value, batch, d_out, what):
    """The positions a cache buffer holds: its numbers over batch * d_out (any layout); None: 0."""
    if value is None:
        return 0
    if not isinstance(value, torch.Tensor) or value.numel() % (batch * d_out):
        raise AssertionError(f"{what}: " + yours_vs_expected(
            yours=getattr(value, 'shape', type(value).__name__), yours_are="is",
            expected=f"a tensor of (batch={batch}, positions held, d_out={d_out}) numbers in some layout"))
    return value.numel() // (batch * d_out)


@points(4)
def test_sliding_window_cache(student, ref, seeds):
    """use_cache=True: pieces give the book's rows; its memory stays bounded (kernel-measured); reset_cache()"""
    steps, cases = [], []
    for i, (args, b, sizes, sizes2) in enumerate(CACHE_CASES):
        d_in, d_out, heads, ctx, window, qkv_bias = args
        W = weights(d_in, d_out, qkv_bias, seed=seeds(f"W{i}"))
        x, x2 = seeded(b, sum(sizes), d_in, seed=seeds(f"x{i}")), seeded(b, sum(sizes2), d_in, seed=seeds(f"x2_{i}"))
        full = [d_in, d_out, heads, ctx, window, 0.0, qkv_bias]
        steps.append({"let": f"m{i}", "call": SWA, "args": full, "params": ch03_params(W), "train": False})
        start = 0
        for j, size in enumerate(sizes):
            steps += [{"let": f"a{i}_{j}", "call": f"m{i}", "args": [x[:, start:start + size]],
                       "kwargs": {"use_cache": True}, "return": True},
                      {"let": f"k{i}_{j}", "attr": f"m{i}.cache_k", "return": True},
                      {"let": f"c{i}_{j}", "attr": f"m{i}.cache_v", "return": True}]
            start += size
        steps += [{"let": f"s{i}", "call": f"m{i}.state_dict"}, {"let": f"s{i}_keys", "call": f"s{i}.keys"},
                  {"let": f"s{i}_names", "iterate": f"s{i}_keys", "return": True},
                  {"let": f"q{i}", "call": f"m{i}.reset_cache"},
                  {"let": f"b{i}_0", "call": f"m{i}", "args": [x2[:, :sizes2[0]]], "kwargs": {"use_cache": True},
                   "return": True}]
        start = sizes2[0]
        for j, size in enumerate(sizes2[1:], 1):
            steps.append({"let": f"b{i}_{j}", "call": f"m{i}", "args": [x2[:, start:start + size]],
                          "kwargs": {"use_cache": True}, "return": True})
            start += size
        cases.append((full, W, b, sizes, sizes2, x, x2))
    plan = student.plan(steps, needs=SWA)
    allowed, most_held = windows(student), 0
    charged = "" if len(allowed) == 1 else (f" (or with your window's mistake, charged above: "
                                            f"{', '.join(allowed[1:])})")
    for i, (full, W, b, sizes, sizes2, x, x2) in enumerate(cases):
        d_in, d_out, heads, ctx, window, _, qkv_bias = full
        what, key = describe(full, x), (tuple(full), b, seeds(f"W{i}"), seeds(f"x{i}"))
        # The truth is the grader's: the book's cache, or that of a window mistake charged above; a mistake of
        # another kind matches no model and costs here too.
        got = torch.cat([plan.values[f"a{i}_{j}"] for j in range(len(sizes))], dim=1)
        found = {name: (lambda k=k, t=t, m=m: cached_pieces(x, W, heads, window, sizes, k, t, m, allowed[-1])[0])
                 for name, (k, t, m) in CACHE_MISTAKES.items()}
        expect_one_of(got, correct_caches(key, x, W, heads, window, sizes, allowed),
                      f"{what}, fed in pieces of {sizes} tokens with use_cache=True, against the whole sequence "
                      f"run{charged}", found)
        # The buffers' size is the child's own report: it can cost (more than window positions), never earn.
        counts = [max(held(plan.values[f"{kv}{i}_{j}"], b, d_out, f"{name} after piece {j + 1}")
                      for kv, name in (("k", "cache_k"), ("c", "cache_v"))) for j in range(len(sizes))]
        if max(counts) > window:
            named = [name for name, keep in SIZE_MISTAKES.items()
                     if cached_pieces(x, W, heads, window, sizes, keep)[1] == counts]
            raise failure(f"{what}, fed in pieces of {sizes} tokens: the cache held {counts} positions after each "
                          f"piece; at most window={window} each.", named[0] if named else None)
        most_held = max(most_held, *counts)
        names = plan.values[f"s{i}_names"]
        if any(name in names for name in ("cache_k", "cache_v")):
            raise failure(f"{what}: cache_k or cache_v is in the state_dict after cached calls.", PERSISTENT)
        got2 = torch.cat([plan.values[f"b{i}_{j}"] for j in range(len(sizes2))], dim=1)
        key2 = (tuple(full), b, seeds(f"W{i}"), seeds(f"x2_{i}"))
        expect_one_of(got2, correct_caches(key2, x2, W, heads, window, sizes2, allowed),
                      f"{what}: after reset_cache(), a second sequence fed in pieces of {sizes2} tokens "
                      f"(reset_cache() empties the cache and starts the positions at 0 again){charged}")
    expect_bounded(student, seeds, allowed, most_held)


def expect_bounded(student, seeds, allowed, most_held):
    """The cache stays bounded, as the kernel measures it: a long sequence fed in pieces in a child whose memory
    holds the outputs and not every key and value beside them (LIMIT); its last piece the rows of a correct
    cache (with the book's window, or an ``allowed`` one)."""
    d_in, d_out, heads, ctx, window, _, qkv_bias = STREAM
    W = weights(d_in, d_out, qkv_bias, seed=seeds("stream_W"))
    x = seeded(BATCH, PIECE, d_in, seed=seeds("stream_x"))
    steps = [{"let": "m", "call": SWA, "args": list(STREAM), "params": ch03_params(W), "train": False},
             {"let": "x", "data": x}]
    steps += [{"let": f"p{j}", "call": "m", "args": [{"$ref": "x"}], "kwargs": {"use_cache": True},
               "what": f"piece {j + 1} of {PIECES}", "return": j == PIECES - 1} for j in range(PIECES)]
    what = (f"{describe(list(STREAM), x)}, fed {PIECES} times with use_cache=True (a sequence of {PIECES * PIECE} "
            f"tokens) in a process whose memory may grow by {LIMIT / 2**20:g} MiB: the outputs take "
            f"{OUTPUTS / 2**20:g} MiB, a cache of the last window={window} positions "
            f"{2 * window * BATCH * d_out * 4 / 2**20:g} MiB, every key and value of the sequence "
            f"{2 * OUTPUTS / 2**20:g} MiB")
    shown = f" (your cache_k and cache_v showed at most {most_held} positions above)"
    try:
        plan = student.plan(steps, needs=SWA, memory=LIMIT)
        why = next((plan.failed(f"p{j}") for j in range(PIECES) if plan.failed(f"p{j}")), None)
    except StudentFailure as exc:
        why = str(exc)
    if why:
        out_of_memory = any(sign in why for sign in OUT_OF_MEMORY)
        raise failure(f"{what}: {why}" + (f"; it ran out of memory: the cache keeps more than the last window "
                                          f"positions{shown}" if out_of_memory else ""),
                      NOT_TRIMMED if out_of_memory else None)
    # every piece after the first sees the same keys (the last ones of the piece before): the second's rows
    key = (STREAM, BATCH, PIECE, seeds("stream_W"), seeds("stream_x"))
    models = correct_caches(key, torch.cat([x, x], dim=1), W, heads, window, [PIECE, PIECE], allowed)
    expect_one_of(plan.values[f"p{PIECES - 1}"], [rows[:, PIECE:] for rows in models], f"{what}: its last piece")
