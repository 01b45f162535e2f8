"""Hidden checks of the KV cache (25 points).

What makes a cache correct and useful: fed in pieces, the cached attention, block and model
give what they give without the cache on the whole sequence; cached generation gives chapter
4's greedy tokens, again on a second call (the reset); after the prompt every step feeds one
token through the blocks (the work counted from what the attention receives, never timed).
The norms and feed forward networks are the grader's linear maps (stand-ins), so chapter 4's
pieces cost nothing here; where the student's attention without the cache repeats their own
chapter-3 attention's mistake, the cache is judged against their own model (``inherited``)."""
import pytest
import torch
from _kv_cache import (
    ATT,
    ATTENTION_MISTAKES,
    BLOCK,
    CFGS,
    CH3,
    FIRST_POSITION,
    GEN,
    GPT,
    GPT_MISTAKES,
    INHERITED_NOTE,
    NO_CACHE,
    RESET_MISTAKES,
    attention,
    block,
    block_spec,
    build_step,
    built,
    close,
    fresh_state,
    generate,
    generate_uncached,
    gpt,
    gpt_case,
    inherited,
    inherited_steps,
    no_grad,
    once,
    pieces_output,
    reset,
    swapped,
    token_ids,
    tokens_mistake,
)

from autograder.grading.compare import expect_close, seeded, yours_vs_expected
from autograder.grading.result import failure
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points

# attention cases: (d_in, d_out, context_length, num_heads, qkv_bias); d_in != d_out shows a missing transpose
ATT_CASES = [(7, 12, 12, 3, False), (5, 8, 11, 2, True), (16, 16, 10, 4, False)]
WRONG_DIM = ("the cache concatenated on the wrong dimension (the tokens' dimension is the one that grows: dim=1 "
             "for (b, num_tokens, num_heads, head_dim), dim=2 after the transpose)")


def att_args(case):
    d_in, d_out, ctx, heads, bias = case
    return (d_in, d_out, ctx, 0.0, heads, bias)


def pieces_steps(let, module, xs, sizes):
    """Steps feeding ``module`` x's tokens in pieces of ``sizes`` with use_cache=True."""
    steps, start = [], 0
    for j, size in enumerate(sizes):
        steps.append({"let": f"{let}{j}", "call": module, "args": [xs[:, start:start + size]],
                      "kwargs": {"use_cache": True}, "return": True})
        start += size
    return steps


def pieces_got(plan, let, sizes, what):
    """The pieces' outputs concatenated; a piece that failed fails the check with its reason."""
    outs = []
    for j in range(len(sizes)):
        try:
            outs.append(plan.values[f"{let}{j}"])
        except StudentFailure as exc:
            # torch.cat's own complaint at the second piece: the one mistake that raises it there
            wrong_dim = j > 0 and "must match except in dimension" in str(exc)
            raise failure(f"{what}: feeding piece {j + 1} of {sizes} failed: {exc}",
                          WRONG_DIM if wrong_dim else None) from None
        if not isinstance(outs[-1], torch.Tensor) or outs[-1].dim() != 3 or outs[-1].shape[1] != sizes[j]:
            raise AssertionError(f"{what}: piece {j + 1} of {sizes} tokens: " + yours_vs_expected(
                yours=list(getattr(outs[-1], 'shape', ())) or type(outs[-1]).__name__, yours_are="gave",
                expected=f"(batch, {sizes[j]}, ...): one row per token fed"))
    return torch.cat(outs, dim=1)


def truth(student, plan, probe, reference, own_name, what):
    """The reference's answer, or the student's own without the cache where their attention
    inherits their chapter-3 mistake (with a note)."""
    if inherited(plan, probe):
        try:
            own = plan.values[own_name]
        except StudentFailure:
            return reference
        student.notes.append(INHERITED_NOTE.format(what=what))
        return own
    return reference


def two_sequences(let, module, reset, x, sizes, x2, sizes2):
    """Steps: reset, the first sequence in pieces, reset, the second in pieces."""
    return [{"let": f"{let}_r0", "call": f"{module}.{reset}"}, *pieces_steps(f"{let}_a", module, x, sizes),
            {"let": f"{let}_r1", "call": f"{module}.{reset}"}, *pieces_steps(f"{let}_b", module, x2, sizes2)]


def judge_two_sequences(student, plan, let, run, expected, sizes, sizes2, what, mistakes):
    """``run(x, sizes, state, variant)`` models a piecewise run with a cache; the second sequence's
    models reset the first's state with each reset mistake."""
    (x, want), (x2, want2) = expected
    got = pieces_got(plan, f"{let}_a", sizes, what)
    expect_close(got, want, f"{what}, fed in pieces of {sizes} tokens with use_cache=True (after the reset), "
                 "against the whole sequence without the cache",
                 {name: (lambda v=v: run(x, sizes, None, v)) for name, v in mistakes.items()})
    got2 = pieces_got(plan, f"{let}_b", sizes2, what)

    def after_reset(v):
        state = run(x, sizes, None, None, keep=True)
        return run(x2, sizes2, reset(state, v), None)
    expect_close(got2, want2, f"{what}: after the reset, a second sequence fed in pieces of {sizes2} tokens",
                 {name: (lambda v=v: after_reset(v)) for name, v in RESET_MISTAKES.items()})


@points(2)
def test_attention_without_cache(student, ref, seeds):
    """use_cache=False (the default) is chapter 3's MultiHeadAttention; it neither reads nor changes the cache"""
    steps, cases = [], []
    for i, case in enumerate(ATT_CASES):
        args = att_args(case)
        att = built(ref.kv_cache.MultiHeadAttention, args, seeds(f"module{i}"))
        x, x2 = seeded(2, case[2] - 2, case[0], seed=seeds(f"x{i}"), scale=2.0), seeded(3, case[2], case[0], seed=seeds(f"x2_{i}"))
        steps += [build_step(f"m{i}", ATT, args, att), build_step(f"c{i}", CH3, args, att),
                  {"let": f"a{i}", "call": f"m{i}", "args": [x], "return": True},
                  {"let": f"r{i}", "call": f"m{i}.reset_cache"},
                  {"let": f"k{i}", "call": f"m{i}", "args": [x[:, :3]], "kwargs": {"use_cache": True}},
                  {"let": f"b{i}", "call": f"m{i}", "args": [x2], "kwargs": {"use_cache": False}, "return": True},
                  {"let": f"n{i}", "call": f"m{i}", "args": [x[:, 3:4]], "kwargs": {"use_cache": True},
                   "return": True},
                  {"let": f"own_a{i}", "call": f"c{i}", "args": [x], "return": True},
                  {"let": f"own_b{i}", "call": f"c{i}", "args": [x2], "return": True}]
        cases.append((args, att, x, x2))
    plan = student.plan(steps, needs=ATT)
    for i, (args, att, x, x2) in enumerate(cases):
        inherits = False
        for key, inp, call in (("a", x, "m(x)"), ("b", x2, "m(x2, use_cache=False) after 3 tokens fed with the cache")):
            what = f"MultiHeadAttention{args}: {call} on {tuple(inp.shape)}"
            got = plan.values[f"{key}{i}"]
            with torch.no_grad():
                want = att(inp)
            try:
                own = plan.values[f"own_{key}{i}"]
            except StudentFailure:
                own = None
            if own is not None and close(got, own) and not close(got, want):
                student.notes.append(f"{what} repeats your chapter-3 MultiHeadAttention's answer, which differs "
                                     "from the book's (charged in chapter 3, not here).")
                inherits = True
                continue
            expect_close(got, want, what)
        if inherits:  # the cache is judged against the student's own attention in the checks below
            continue
        with torch.no_grad():
            want = att(x[:, :4])[:, 3:]
        expect_close(plan.values[f"n{i}"], want, f"MultiHeadAttention{args}: the 4th token fed with the cache, after "
                     "an uncached call between (an uncached call must leave the cache as it was)")


@points(4)
def test_attention_cache_in_pieces(student, ref, seeds):
    """with use_cache=True, pieces of a sequence give the rows of the whole; reset_cache() starts a new one"""
    steps, cases = [], []
    for i, case in enumerate(ATT_CASES):
        args = att_args(case)
        d_in, _, ctx, _, _ = case
        att = built(ref.kv_cache.MultiHeadAttention, args, seeds(f"module{i}"))
        # the prompt of 3, 2, 1 tokens; both sequences fit in context_length (a cache not reset then runs on)
        sizes, sizes2 = [ctx - 9, 1, 1, 2], [2, 1, 1]
        x, x2 = seeded(2, sum(sizes), d_in, seed=seeds(f"x{i}")), seeded(2, sum(sizes2), d_in, seed=seeds(f"x2_{i}"))
        steps += [build_step(f"m{i}", ATT, args, att), build_step(f"p{i}_ch3", CH3, args, att),
                  *two_sequences(f"s{i}", f"m{i}", "reset_cache", x, sizes, x2, sizes2),
                  {"let": f"own_a{i}", "call": f"m{i}", "args": [x], "return": True},
                  {"let": f"own_b{i}", "call": f"m{i}", "args": [x2], "return": True},
                  {"let": f"p{i}_kv_out", "call": f"m{i}", "args": [x], "return": True},
                  {"let": f"p{i}_ch3_out", "call": f"p{i}_ch3", "args": [x], "return": True}]
        cases.append((args, att, sizes, sizes2, x, x2))
    plan = student.plan(steps, needs=ATT)
    for i, (args, att, sizes, sizes2, x, x2) in enumerate(cases):
        what = f"MultiHeadAttention{args}"
        with torch.no_grad():
            want, want2 = att(x), att(x2)
        want = truth(student, plan, (att, x, f"p{i}"), want, f"own_a{i}", what)
        want2 = truth(student, plan, (att, x, f"p{i}"), want2, f"own_b{i}", what)

        @no_grad
        def run(inp, szs, state, variant, keep=False, att=att):
            state = state if state is not None else fresh_state()
            out = pieces_output(lambda t, st, v: attention(att, t, st["att"][0], v), inp, szs, state, variant)
            return state if keep else out
        judge_two_sequences(student, plan, f"s{i}", run, ((x, want), (x2, want2)), sizes, sizes2, what,
                            {**ATTENTION_MISTAKES, NO_CACHE: "no cache"})


@points(2)
def test_block_passes_use_cache(student, ref, seeds):
    """TransformerBlock(x, use_cache=True) passes use_cache on to its attention: pieces give the rows of the whole"""
    cfg = CFGS[0]
    spec_seed, module_seed = seeds("stand-ins"), seeds("module")
    spec = block_spec(cfg["emb_dim"], spec_seed)
    module = once(("swapped", ref.kv_cache.TransformerBlock, module_seed, spec_seed),
                  lambda: swapped(built(ref.kv_cache.TransformerBlock, (cfg,), module_seed), spec))
    sizes, sizes2 = [3, 1, 1, 2], [3, 1]
    x, x2 = seeded(2, sum(sizes), cfg["emb_dim"], seed=seeds("x")), seeded(2, sum(sizes2), cfg["emb_dim"], seed=seeds("x2"))
    probe_steps, probe = inherited_steps(ref, cfg, seeds("probe"))
    steps = [build_step("b", BLOCK, (cfg,), module, spec),
             {"let": "b_r0", "call": "b.att.reset_cache"}, *pieces_steps("s_a", "b", x, sizes),
             {"let": "b_r1", "call": "b.att.reset_cache"}, *pieces_steps("s_b", "b", x2, sizes2),
             {"let": "own_a", "call": "b", "args": [x], "return": True},
             {"let": "own_b", "call": "b", "args": [x2], "return": True}, *probe_steps]
    plan = student.plan(steps, needs=BLOCK)
    what = "TransformerBlock (ff, norm1 and norm2 replaced by the grader's linear maps)"
    with torch.no_grad():
        want, want2 = module(x), module(x2)
    want = truth(student, plan, probe, want, "own_a", what)
    want2 = truth(student, plan, probe, want2, "own_b", what)

    @no_grad
    def run(inp, szs, state, variant, keep=False):
        state = state if state is not None else fresh_state()
        out = pieces_output(lambda t, s, v: block(module, t, s["att"][0], v), inp, szs, state, variant)
        return state if keep else out
    judge_two_sequences(student, plan, "s", run, ((x, want), (x2, want2)), sizes, sizes2, what,
                        {**ATTENTION_MISTAKES, NO_CACHE: "no cache"})


@points(3)
def test_model_cache_in_pieces(student, ref, seeds):
    """GPTModel(in_idx, use_cache=True): positions go on from the tokens fed; reset_kv_cache() starts again at 0"""
    probe_steps, probe = inherited_steps(ref, CFGS[1], seeds("probe"))  # one probe: the student's attention code is one
    steps, cases = probe_steps, []
    for i, (cfg, sizes, sizes2) in enumerate([(CFGS[0], [3, 1, 1], [2, 1, 1]), (CFGS[1], [1, 1, 2, 1], [3, 1])]):
        module, spec = gpt_case(ref, cfg, seeds(f"model{i}"))
        idx, idx2 = (token_ids(2, sum(s), cfg["vocab_size"], seeds(f"idx{i}_{k}")) for k, s in enumerate((sizes, sizes2)))
        steps += [build_step(f"m{i}", GPT, (cfg,), module, spec),
                  *two_sequences(f"s{i}", f"m{i}", "reset_kv_cache", idx, sizes, idx2, sizes2),
                  {"let": f"own_a{i}", "call": f"m{i}", "args": [idx], "return": True},
                  {"let": f"own_b{i}", "call": f"m{i}", "args": [idx2], "kwargs": {"use_cache": False},
                   "return": True}]
        cases.append((cfg, sizes, sizes2, module, idx, idx2))
    plan = student.plan(steps, needs=GPT)
    for i, (cfg, sizes, sizes2, module, idx, idx2) in enumerate(cases):
        what = (f"GPTModel(context_length={cfg['context_length']}, n_layers={cfg['n_layers']}) (norms and feed "
                "forward networks replaced by the grader's linear maps)")
        with torch.no_grad():
            want, want2 = module(idx), module(idx2)
        want = truth(student, plan, probe, want, f"own_a{i}", what)
        want2 = truth(student, plan, probe, want2, f"own_b{i}", what)

        @no_grad
        def run(ids, szs, state, variant, keep=False, module=module, cfg=cfg):
            state = state if state is not None else fresh_state(cfg["n_layers"])
            out = pieces_output(lambda t, st, v: gpt(module, t, st, v), ids, szs, state, variant)
            return state if keep else out
        judge_two_sequences(student, plan, f"s{i}", run, ((idx, want), (idx2, want2)), sizes, sizes2, what,
                            {**GPT_MISTAKES, **ATTENTION_MISTAKES, NO_CACHE: "no cache"})
        expect_close(plan.values[f"own_b{i}"], want2, f"{what} with use_cache=False after cached calls (positions "
                     "from 0, the cache neither read nor changed)")


def generation_steps(cfg, module, spec, prompts, max_new_tokens, record=False, prefix=""):
    """Steps: the student's GPTModel with the reference's weights, then generate_text_simple_cached
    on each prompt in turn with the same model, and the model without the cache on the first answer."""
    m = f"{prefix}m"
    steps = [build_step(m, GPT, (cfg,), module, spec)]
    for k, idx in enumerate(prompts):
        step = {"let": f"{prefix}out{k}", "call": GEN, "args": [{"$ref": m}, idx, max_new_tokens], "return": True}
        if record:
            step["record"] = [m, f"{m}.trf_blocks.0.att"]
        steps.append(step)
    return steps + [{"let": f"{prefix}own", "call": m, "args": [{"$ref": f"{prefix}out0"}], "return": True}]


def expect_tokens(got, want, what, mistakes):
    if isinstance(got, torch.Tensor) and got.shape == want.shape and torch.equal(got, want):
        return
    name = tokens_mistake(got, mistakes) if isinstance(got, torch.Tensor) else None
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        raise failure(f"{what}: " + yours_vs_expected(
            yours=list(getattr(got, 'shape', ())) or type(got).__name__, yours_are="returned",
            expected=f"the prompt followed by the new tokens, shape {list(want.shape)}") + ".", name)
    n = int((got != want).any(dim=0).long().argmax())
    raise failure(f"{what}: token {n}: " + yours_vs_expected(
        yours=got[:, n].tolist(), yours_are="is", expected=want[:, n].tolist(),
        expected_are="chapter 4's generate_text_simple gives") + " there.", name)


def own_greedy(out, logits, n0):
    """Whether ``out`` is the student's own model's greedy generation: its logits without the cache
    on the whole answer predict each new token (the model is causal)."""
    return (isinstance(logits, torch.Tensor) and logits.dim() == 3 and logits.shape[:2] == out.shape
            and torch.equal(logits[:, n0 - 1:-1].argmax(dim=-1), out[:, n0:]))


@points(6)
def test_generate_equals_uncached(student, ref, seeds):
    """generate_text_simple_cached gives chapter 4's generate_text_simple's tokens, token for token"""
    probe_steps, probe = inherited_steps(ref, CFGS[0], seeds("probe"))
    steps, cases = probe_steps, []
    for i, (cfg, b, n0, new) in enumerate([(CFGS[0], 2, 3, 6), (CFGS[1], 1, 1, 6), (CFGS[2], 3, 4, 4)]):
        module, spec = gpt_case(ref, cfg, seeds(f"model{i}"))
        idx = token_ids(b, n0, cfg["vocab_size"], seeds(f"idx{i}"))
        steps += generation_steps(cfg, module, spec, [idx], new, prefix=f"g{i}")
        cases.append((cfg, b, n0, new, module, idx))
    plan = student.plan(steps, needs=GEN)
    for i, (cfg, b, n0, new, module, idx) in enumerate(cases):
        what = (f"generate_text_simple_cached(model, idx of shape {tuple(idx.shape)}, max_new_tokens={new}) "
                f"(context_length={cfg['context_length']}, n_layers={cfg['n_layers']})")
        got = plan.values[f"g{i}out0"]
        if inherited(plan, probe) and isinstance(got, torch.Tensor) and got.shape == (b, n0 + new) \
                and torch.equal(got[:, :n0], idx) and own_greedy(got, plan.values[f"g{i}own"], n0):
            student.notes.append(INHERITED_NOTE.format(what=what))
            continue
        mistakes = {name: (lambda v=v, m=module, c=cfg, p=idx, k=new: no_grad(generate)(m, p, k, fresh_state(c["n_layers"]), v))
                    for name, v in {**GPT_MISTAKES, **ATTENTION_MISTAKES, NO_CACHE: "no cache",
                                    FIRST_POSITION: "first position"}.items()}
        expect_tokens(got, generate_uncached(module, idx, new), what, mistakes)


@points(3)
def test_generate_twice(student, ref, seeds):
    """a second call starts afresh (the cache reset): the same prompt gives the same text again"""
    cfg = CFGS[0]
    module, spec = gpt_case(ref, cfg, seeds("model"))
    new = 3
    first, second = token_ids(2, 3, cfg["vocab_size"], seeds("first")), token_ids(2, 3, cfg["vocab_size"], seeds("second"))
    probe_steps, probe = inherited_steps(ref, cfg, seeds("probe"))
    plan = student.plan(generation_steps(cfg, module, spec, [first, second, first], new) + probe_steps, needs=GEN)
    what = "generate_text_simple_cached, called a second time with the same model"
    if inherited(plan, probe):  # the same prompt must give the same text again; the rest is chapter 3's
        student.notes.append(INHERITED_NOTE.format(what=what))
        want = [plan.values["out0"], plan.values["out1"]]
    else:
        want = [generate_uncached(module, p, new) for p in (first, second)]
    expect_tokens(plan.values["out0"], want[0], "generate_text_simple_cached (its first call)", {})

    @no_grad
    def after(variant):
        state = fresh_state(cfg["n_layers"])
        generate(module, first, new, state)
        return generate(module, second, new, reset(state, variant))
    expect_tokens(plan.values["out1"], want[1], f"{what} on another prompt",
                  {name: (lambda v=v: after(v)) for name, v in RESET_MISTAKES.items()})
    expect_tokens(plan.values["out2"], want[0], f"{what} (a third call, with the first call's prompt)", {})


@points(4)
def test_generate_feeds_one_token_per_step(student, ref, seeds):
    """after the whole prompt in one call, every step feeds one new token through the blocks"""
    steps, cases = [], []
    for i, (cfg, b, n0, new) in enumerate([(CFGS[0], 2, 4, 6), (CFGS[2], 1, 2, 4)]):
        module, spec = gpt_case(ref, cfg, seeds(f"model{i}"))
        idx = token_ids(b, n0, cfg["vocab_size"], seeds(f"idx{i}"))
        steps += generation_steps(cfg, module, spec, [idx], new, record=True, prefix=f"g{i}")
        cases.append((cfg, b, n0, new, idx))
    plan = student.plan(steps, needs=GEN)
    for i, (cfg, b, n0, new, idx) in enumerate(cases):
        what = f"generate_text_simple_cached(model, idx of shape {tuple(idx.shape)}, max_new_tokens={new})"
        out = plan.values[f"g{i}out0"]
        calls, att_calls = plan.records[f"g{i}out0"][f"g{i}m"], plan.records[f"g{i}out0"][f"g{i}m.trf_blocks.0.att"]
        # what each call was fed, read from its answer (one row per token fed; a keyword argument
        # leaves no positional input to record)
        fed = [rows(c[-1]) for c in calls]
        first = calls[0][0] if calls and len(calls[0]) > 1 else None
        if not calls or fed[0] != [b, n0] or (first is not None and not torch.equal(first, idx)):
            raise AssertionError(f"{what}: the model's first call: " + yours_vs_expected(
                yours=f"{fed[:1]} tokens", yours_are="was fed",
                expected=f"the whole prompt, {list(idx.shape)}, in one call"))
        if len(calls) > 1 and all(f == [b, n0 + k] for k, f in enumerate(fed)):
            raise failure(f"{what} fed the model {fed} tokens: the whole sequence at every step.",
                          "the whole sequence fed at every step (each step then redoes the work of all the tokens "
                          "before it; feed only the new token)")
        if any(f != [b, 1] for f in fed[1:]) or len(calls) not in (new, new + 1):
            raise AssertionError(f"{what}: " + yours_vs_expected(
                yours=f"the model {len(calls)} times, fed {fed} tokens", yours_are="called",
                expected=f"the prompt {list(idx.shape)} once, then one new token [{b}, 1] per step "
                         f"({new - 1} or {new} such calls)"))
        if isinstance(out, torch.Tensor) and out.shape == (b, n0 + new):
            for k, call in enumerate(calls[1:]):
                if len(call) > 1 and not torch.equal(call[0], out[:, n0 + k:n0 + k + 1]):
                    raise AssertionError(f"{what}: step {k + 2}: " + yours_vs_expected(
                        yours=call[0].tolist(), yours_are="fed the model",
                        expected=f"the token just generated, {out[:, n0 + k:n0 + k + 1].tolist()}"))
        got = [rows(c[-1]) for c in att_calls]
        want = [[b, n0]] + [[b, 1]] * (len(calls) - 1)
        if got != want:
            raise AssertionError(f"{what}: the first block's attention, call by call: " + yours_vs_expected(
                yours=f"{got} tokens", yours_are="was fed", expected=f"{want} (the prompt, then one token per step)"))


def rows(answer):
    """[batch, tokens] of a model's or an attention's answer (batch, tokens, ...)."""
    return list(answer.shape[:2]) if isinstance(answer, torch.Tensor) and answer.dim() == 3 else None


@points(1)
def test_cache_stays_out_of_the_state_dict(student, ref, seeds):
    """the cache is in non-persistent buffers: after cached calls the state_dict holds the same names"""
    cfg = CFGS[1]
    module, spec = gpt_case(ref, cfg, seeds("model"))
    idx = token_ids(2, 4, cfg["vocab_size"], seeds("idx"))
    plan = student.plan([build_step("m", GPT, (cfg,), module, spec),
                         {"let": "sd0", "call": "m.state_dict"}, {"let": "names0", "iterate": "sd0", "return": True},
                         {"let": "r", "call": "m.reset_kv_cache"},
                         {"let": "a", "call": "m", "args": [idx], "kwargs": {"use_cache": True}, "return": True},
                         {"let": "b", "call": "m", "args": [idx[:, :1]], "kwargs": {"use_cache": True},
                          "return": True},
                         {"let": "sd1", "call": "m.state_dict"}, {"let": "names1", "iterate": "sd1", "return": True}],
                        needs=GPT)
    plan.values["a"], plan.values["b"]  # the cached calls ran (or the check fails with their error)
    before, after = plan.values["names0"], plan.values["names1"]
    extra = sorted(set(after) - set(before))
    if extra or sorted(after) != sorted(before):
        raise failure(f"GPTModel's state_dict after cached calls holds {extra or sorted(after)} too.",
                      "the cache in persistent buffers (register_buffer(\"cache_k\", None, persistent=False) keeps "
                      "it out of the state_dict and of every saved model)")
