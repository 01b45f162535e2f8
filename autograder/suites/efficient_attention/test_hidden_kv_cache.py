"""Hidden checks of the KV cache (25 points).

What makes a cache correct and useful: fed in pieces, the cached attention, block and model
give the rows of the sequence; cached generation gives chapter 4's greedy tokens, again on a
second call (the reset); after the prompt every step feeds one token. Every answer is judged
against the reference's, computed in the grader on its own inputs and weights, and every
check holds a witness that only a real cache answers right: between the calls of a sequence
the grader draws W_key and W_value anew (the plan's ``params``, or ``reload`` inside a
generation), so the keys of earlier tokens must be the ones computed when they were fed.
What the child counts (tokens fed per call) is feedback only. The attention's dropout is judged
without the cache, in training mode (the reference's draws after the same seed) and in eval mode. The norms and feed forward
networks are the grader's linear maps (stand-ins), so chapter 4's pieces cost nothing here;
a chapter-3 mistake the attention repeats without the cache, where the grader can name it,
is built into the reference's cache here (``base_of``), so it is charged once."""
import copy

import pytest
import torch
from _kv_cache import (
    ATT,
    ATTENTION_MISTAKES,
    BASE_MISTAKES,
    BASE_NOTE,
    BLOCK,
    CFGS,
    CH3,
    FIRST_POSITION,
    GEN,
    GPT,
    GPT_MISTAKES,
    NO_CACHE,
    RECOMPUTED,
    RESET_MISTAKES,
    WHOLE_SEQUENCE,
    attention,
    base_mistake,
    base_of,
    base_steps,
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
    load,
    no_grad,
    once,
    params,
    pieces_output,
    rekeyed,
    reset,
    swapped,
    token_ids,
    tokens_mistake,
)

from autograder.grading.compare import expect_close, seeded, yours_vs_expected
from autograder.grading.kit import known_mistake
from autograder.grading.result import failure
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points

# attention cases: (d_in, d_out, context_length, num_heads, qkv_bias); d_in != d_out shows a missing transpose
ATT_CASES = [(7, 12, 12, 3, False), (5, 8, 11, 2, True), (16, 16, 10, 4, False)]
WRONG_DIM = ("the cache concatenated on the wrong dimension (the tokens' dimension is the one that grows: dim=1 "
             "for (b, num_tokens, num_heads, head_dim), dim=2 after the transpose)")
WITNESS = "W_key and W_value drawn anew by the grader before each piece after the first"
CACHE_MISTAKES = {**ATTENTION_MISTAKES, NO_CACHE: "no cache", RECOMPUTED: "recompute"}


def att_args(case):
    d_in, d_out, ctx, heads, bias = case
    return (d_in, d_out, ctx, 0.0, heads, bias)


def pieces_steps(let, module, xs, sizes, sets, first=None):
    """Steps feeding ``module`` x's tokens in pieces of ``sizes`` with use_cache=True; piece j >= 1
    runs with the parameters ``sets[j - 1]`` (the witness), piece 0 with ``first`` where given."""
    steps, start = [], 0
    for j, size in enumerate(sizes):
        step = {"let": f"{let}{j}", "call": module, "args": [xs[:, start:start + size]],
                "kwargs": {"use_cache": True}, "return": True}
        weights = sets[j - 1] if j else first
        if weights is not None:
            step["params"] = weights
        steps.append(step)
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


def two_sequences(let, module, reset_name, x, sizes, x2, sizes2, sets, sets2, first):
    """Steps: reset, the first sequence in pieces, reset, the second in pieces (witness weights
    between the pieces; the second sequence starts with the module's own weights ``first``)."""
    return [{"let": f"{let}_r0", "call": f"{module}.{reset_name}"},
            *pieces_steps(f"{let}_a", module, x, sizes, sets),
            {"let": f"{let}_r1", "call": f"{module}.{reset_name}"},
            *pieces_steps(f"{let}_b", module, x2, sizes2, sets2, first)]


def judge_two_sequences(plan, let, run, inputs, sizes, sizes2, what, mistakes):
    """``run(x, sizes, sets, state, variant, first=None)`` models a piecewise run with a cache on a
    private copy of the reference, returning (output, state); the second sequence's models reset
    the first's state with each reset mistake."""
    (x, sets), (x2, sets2, first) = inputs
    got = pieces_got(plan, f"{let}_a", sizes, what)
    expect_close(got, run(x, sizes, sets, None, None)[0],
                 f"{what}, fed in pieces of {sizes} tokens with use_cache=True after the reset ({WITNESS})",
                 {name: (lambda v=v: run(x, sizes, sets, None, v)[0]) for name, v in mistakes.items()})
    got2 = pieces_got(plan, f"{let}_b", sizes2, what)

    def after_reset(v):
        state = run(x, sizes, sets, None, None)[1]
        return run(x2, sizes2, sets2, reset(state, v), None, first)[0]
    # after a right reset the state is a fresh one's
    expect_close(got2, run(x2, sizes2, sets2, None, None, first)[0],
                 f"{what}: after the reset, a second sequence fed in pieces of {sizes2} tokens ({WITNESS})",
                 {name: (lambda v=v: after_reset(v)) for name, v in RESET_MISTAKES.items()})


PIECES = {"attention": lambda m, t, st, v, sw: attention(m, t, st["att"][0], v, base=sw),
          "block": lambda m, t, st, v, sw: block(m, t, st["att"][0], v, base=sw),
          "gpt": lambda m, t, st, v, sw: gpt(m, t, st, v, sw)}


def piecewise(module, kind, n_layers, base):
    """``run`` for ``judge_two_sequences``: ``PIECES[kind](module, x, state, variant, base)`` on a
    private copy of the reference ``module`` (``first``, its own weights, loaded into it), fed in
    pieces with the witness weights loaded between them. A fresh run without a mistake is the same
    for every student: computed once per process."""
    @no_grad
    def compute(inp, szs, sets, state, variant, first):
        private = copy.deepcopy(module)
        if first is not None:
            load(private, first)
        state = state if state is not None else fresh_state(n_layers)
        fed = pieces_output(lambda t, st, v: PIECES[kind](private, t, st, v, base), inp, szs, state, variant,
                            private, sets)
        return fed, state

    def run(inp, szs, sets, state, variant, first=None):
        if state is not None or variant is not None:
            return compute(inp, szs, sets, state, variant, first)
        key = ("kv pieces", kind, id(module), inp.numpy().tobytes(), tuple(inp.shape), tuple(szs),
               tuple(map(id, sets)), first is not None, repr(base))
        return once(key, lambda: compute(inp, szs, sets, None, None, first))
    return run


def base_models(att, x):
    """{chapter-3 mistake: its output without the cache}, computed here (``BASE_MISTAKES``)."""
    return {name: (lambda sw=sw: no_grad(attention)(att, x, fresh_state()["att"][0], use_cache=False, base=sw))
            for name, sw in BASE_MISTAKES.items()}


@points(2)
def test_attention_without_cache(student, ref, seeds):
    """use_cache=False (the default) is chapter 3's MultiHeadAttention; it neither reads nor changes the cache"""
    steps, cases = [], []
    for i, case in enumerate(ATT_CASES):
        args = att_args(case)
        att = built(ref.kv_cache.MultiHeadAttention, args, seeds(f"module{i}"))
        x, x2 = seeded(2, case[2] - 2, case[0], seed=seeds(f"x{i}"), scale=2.0), seeded(3, case[2], case[0], seed=seeds(f"x2_{i}"))
        new_keys, = rekeyed(att, seeds(f"witness{i}"), 1)
        steps += [build_step(f"m{i}", ATT, args, att), build_step(f"c{i}", CH3, args, att),
                  {"let": f"a{i}", "call": f"m{i}", "args": [x], "return": True},
                  {"let": f"r{i}", "call": f"m{i}.reset_cache"},
                  {"let": f"k{i}", "call": f"m{i}", "args": [x[:, :3]], "kwargs": {"use_cache": True}},
                  {"let": f"b{i}", "call": f"m{i}", "args": [x2], "kwargs": {"use_cache": False}, "return": True},
                  {"let": f"n{i}", "call": f"m{i}", "args": [x[:, 3:4]], "kwargs": {"use_cache": True},
                   "params": new_keys, "return": True},
                  {"let": f"own_a{i}", "call": f"c{i}", "args": [x], "return": True},
                  {"let": f"own_b{i}", "call": f"c{i}", "args": [x2], "return": True},
                  # the same four tokens with no uncached call between: it tells, for the feedback
                  # only, an uncached call that empties the cache from a cache never used
                  {"let": f"z{i}", "call": f"m{i}.reset_cache"},
                  {"let": f"y{i}", "call": f"m{i}", "args": [x[:, :3]], "kwargs": {"use_cache": True}},
                  {"let": f"w{i}", "call": f"m{i}", "args": [x[:, 3:4]], "kwargs": {"use_cache": True},
                   "return": True}]
        cases.append((args, att, x, x2, new_keys))
    plan = student.plan(steps, needs=ATT)
    for i, (args, att, x, x2, new_keys) in enumerate(cases):
        switches = None
        for key, inp, call in (("a", x, "m(x)"), ("b", x2, "m(x2, use_cache=False) after 3 tokens fed with the cache")):
            what = f"MultiHeadAttention{args}: {call} on {tuple(inp.shape)}"
            got = plan.values[f"{key}{i}"]
            name, switches = base_mistake(att, inp, got)
            try:  # the same mistake, computed here, in the student's chapter-3 class: charged in chapter 3
                ch3 = plan.values[f"own_{key}{i}"]
            except StudentFailure:
                ch3 = None
            if name is not None and base_mistake(att, inp, ch3)[0] == name:
                student.notes.append(f"{what} makes your chapter-3 MultiHeadAttention's mistake ({name}), charged "
                                     "in chapter 3, not here.")
                continue
            with torch.no_grad():
                want = att(inp)
            expect_close(got, want, what, base_models(att, inp))

        @no_grad
        def fourth(variant, att=att, x=x, new_keys=new_keys, switches=switches):
            private, state = copy.deepcopy(att), fresh_state()["att"][0]
            attention(private, x[:, :3], state, variant, base=switches)
            load(private, new_keys)
            return attention(private, x[:, 3:4], state, variant, base=switches)
        right = once(("kv fourth token", id(att), id(new_keys), x.numpy().tobytes(), repr(switches)),
                     lambda: fourth(None))
        mistakes = {name: (lambda v=v: fourth(v)) for name, v in CACHE_MISTAKES.items()}
        if plan.failed(f"w{i}") is None and close(plan.values[f"w{i}"], with_weights(att, new_keys, x[:, :4])[:, 3:4]):
            mistakes[EMPTIED] = mistakes.pop(NO_CACHE)  # the cache works where no uncached call comes between
        expect_close(plan.values[f"n{i}"], right, f"MultiHeadAttention{args}: the 4th token fed with the "
                     f"cache, after an uncached call between (an uncached call must leave the cache as it was), with "
                     f"{WITNESS.replace('each piece after the first', 'it')}", mistakes)


EMPTIED = ("the cache emptied by the uncached call between (the 4th token then attends only to itself; with "
           "use_cache=False the attention neither reads nor changes the cache)")


@no_grad
def with_weights(att, weights, x):
    """A private copy of the reference attention ``att`` with ``weights`` loaded, on ``x`` without a cache."""
    private = copy.deepcopy(att)
    load(private, weights)
    return private(x)


NO_DROPOUT = "no dropout on the attention weights in training mode (chapter 3's self.dropout(attn_weights))"
EVAL_DROPOUT = "dropout applied in eval mode too (nn.Dropout follows .eval(); F.dropout needs training=self.training)"


@points(1)
def test_attention_dropout_in_training(student, ref, seeds):
    """without the cache, chapter 3's dropout on the attention weights: the reference's draws in training mode, none in eval"""
    steps, cases = [], []
    for i, case in enumerate(ATT_CASES[:2]):
        d_in, d_out, ctx, heads, bias = case
        args = (d_in, d_out, ctx, 0.5, heads, bias)
        att = built(ref.kv_cache.MultiHeadAttention, args, seeds(f"module{i}"))
        x = seeded(2, ctx - 2, d_in, seed=seeds(f"x{i}"), scale=2.0)
        steps += [build_step(f"e{i}", ATT, args, att), {**build_step(f"t{i}", ATT, args, att), "train": True},
                  {"let": f"eval{i}", "call": f"e{i}", "args": [x], "seed": 11, "return": True},
                  {"let": f"train{i}", "call": f"t{i}", "args": [x], "seed": 11, "return": True}]
        cases.append((args, att, x))
    plan = student.plan(steps, needs=ATT)
    for i, (args, att, x) in enumerate(cases):
        what = f"MultiHeadAttention{args} on {tuple(x.shape)}"
        got = plan.values[f"eval{i}"]
        name, switches = base_mistake(att, x, got)  # a chapter-3 mistake: built into the answers here, charged there
        if name is not None:
            student.notes.append(BASE_NOTE.format(what=what, name=name))

        @no_grad
        def answer(drop=None, att=att, x=x, switches=switches):
            return attention(att, x, fresh_state()["att"][0], use_cache=False, base=switches, drop=drop)
        expect_close(got, answer(), f"{what} in eval mode", {EVAL_DROPOUT: lambda: answer((0.5, 11))})
        expect_close(plan.values[f"train{i}"], answer((0.5, 11)), f"{what} in training mode after "
                     "torch.manual_seed(11)", {NO_DROPOUT: answer})


@points(4)
def test_attention_cache_in_pieces(student, ref, seeds):
    """with use_cache=True, pieces of a sequence give its rows, the earlier keys kept; reset_cache() starts a new one"""
    steps, cases = [], []
    for i, case in enumerate(ATT_CASES):
        args = att_args(case)
        d_in, _, ctx, _, _ = case
        att = built(ref.kv_cache.MultiHeadAttention, args, seeds(f"module{i}"))
        # the prompt of 3, 2, 1 tokens; both sequences fit in context_length (a cache not reset then runs on)
        sizes, sizes2 = [ctx - 9, 1, 1, 2], [2, 1, 1]
        x, x2 = seeded(2, sum(sizes), d_in, seed=seeds(f"x{i}")), seeded(2, sum(sizes2), d_in, seed=seeds(f"x2_{i}"))
        sets = rekeyed(att, seeds(f"witness{i}"), len(sizes) + len(sizes2) - 2)
        sets, sets2 = sets[:len(sizes) - 1], sets[len(sizes) - 1:]
        steps += [build_step(f"m{i}", ATT, args, att),
                  {"let": f"own{i}", "call": f"m{i}", "args": [x], "return": True},  # before any cached call
                  *two_sequences(f"s{i}", f"m{i}", "reset_cache", x, sizes, x2, sizes2, sets, sets2, params(att))]
        cases.append((args, att, sizes, sizes2, x, x2, sets, sets2))
    plan = student.plan(steps, needs=ATT)
    for i, (args, att, sizes, sizes2, x, x2, sets, sets2) in enumerate(cases):
        what = f"MultiHeadAttention{args}"
        switches = base_of(student, plan, (att, x, f"own{i}"), what)
        run = piecewise(att, "attention", 1, switches)
        judge_two_sequences(plan, f"s{i}", run, ((x, sets), (x2, sets2, params(att))), sizes, sizes2, what,
                            CACHE_MISTAKES)


@points(2)
def test_block_passes_use_cache(student, ref, seeds):
    """TransformerBlock(x, use_cache=True) passes use_cache on to its attention: pieces give the rows, keys kept"""
    cfg = CFGS[0]
    spec_seed, module_seed = seeds("stand-ins"), seeds("module")
    spec = block_spec(cfg["emb_dim"], spec_seed)
    module = once(("swapped", ref.kv_cache.TransformerBlock, module_seed, spec_seed),
                  lambda: swapped(built(ref.kv_cache.TransformerBlock, (cfg,), module_seed), spec))
    sizes, sizes2 = [3, 1, 1, 2], [3, 1]
    x, x2 = seeded(2, sum(sizes), cfg["emb_dim"], seed=seeds("x")), seeded(2, sum(sizes2), cfg["emb_dim"], seed=seeds("x2"))
    sets = rekeyed(module, seeds("witness"), len(sizes) + len(sizes2) - 2)
    sets, sets2 = sets[:len(sizes) - 1], sets[len(sizes) - 1:]
    probe_steps, probe = base_steps(ref, cfg, seeds("probe"))
    steps = [build_step("b", BLOCK, (cfg,), module, spec),
             *two_sequences("s", "b", "att.reset_cache", x, sizes, x2, sizes2, sets, sets2, params(module)),
             *probe_steps]
    plan = student.plan(steps, needs=BLOCK)
    what = "TransformerBlock (ff, norm1 and norm2 replaced by the grader's linear maps)"
    run = piecewise(module, "block", 1,
                    base_of(student, plan, probe, what))
    judge_two_sequences(plan, "s", run, ((x, sets), (x2, sets2, params(module))), sizes, sizes2, what, CACHE_MISTAKES)


@points(3)
def test_model_cache_in_pieces(student, ref, seeds):
    """GPTModel(in_idx, use_cache=True): positions go on from the tokens fed; reset_kv_cache() starts again at 0"""
    probe_steps, probe = base_steps(ref, CFGS[1], seeds("probe"))  # one probe: the student's attention code is one
    steps, cases = probe_steps, []
    for i, (cfg, sizes, sizes2) in enumerate([(CFGS[0], [3, 1, 1], [2, 1, 1]), (CFGS[1], [1, 1, 2, 1], [3, 1])]):
        module, spec = gpt_case(ref, cfg, seeds(f"model{i}"))
        idx, idx2 = (token_ids(2, sum(s), cfg["vocab_size"], seeds(f"idx{i}_{k}")) for k, s in enumerate((sizes, sizes2)))
        sets = rekeyed(module, seeds(f"witness{i}"), len(sizes) + len(sizes2) - 2)
        sets, sets2 = sets[:len(sizes) - 1], sets[len(sizes) - 1:]
        steps += [build_step(f"m{i}", GPT, (cfg,), module, spec),
                  *two_sequences(f"s{i}", f"m{i}", "reset_kv_cache", idx, sizes, idx2, sizes2, sets, sets2,
                                 params(module)),
                  {"let": f"own_b{i}", "call": f"m{i}", "args": [idx2], "kwargs": {"use_cache": False},
                   "params": params(module), "return": True}]
        cases.append((cfg, sizes, sizes2, module, idx, idx2, sets, sets2))
    plan = student.plan(steps, needs=GPT)
    switches = base_of(student, plan, probe, "GPTModel")
    for i, (cfg, sizes, sizes2, module, idx, idx2, sets, sets2) in enumerate(cases):
        what = (f"GPTModel(context_length={cfg['context_length']}, n_layers={cfg['n_layers']}) (norms and feed "
                "forward networks replaced by the grader's linear maps)")
        run = piecewise(module, "gpt", cfg["n_layers"], switches)
        judge_two_sequences(plan, f"s{i}", run, ((idx, sets), (idx2, sets2, params(module))), sizes, sizes2, what,
                            {**GPT_MISTAKES, **CACHE_MISTAKES})
        with torch.no_grad():
            want = gpt(module, idx2, fresh_state(cfg["n_layers"]), base=switches, use_cache=False)
        expect_close(plan.values[f"own_b{i}"], want, f"{what} with use_cache=False after cached calls (positions "
                     "from 0, the cache neither read nor changed)")


# -- generation: the witness is W_key and W_value drawn anew before each of the model's calls -----
def witness(module, idx, new, seed):
    """Parameter sets for the model's calls 2, 3, ... of a generation (``reload``), chosen so that
    the book's cache and a model that recomputes every key give other tokens: the witness then
    tells them apart."""
    def make():
        for salt in range(8):
            sets = rekeyed(module, seed + 7919 * salt, new - 1)
            cached, recomputed = (no_grad(generate)(copy.deepcopy(module), idx, new,
                                                    fresh_state(len(module.trf_blocks)), variant, sets=sets)
                                  for variant in (None, "recomputed"))
            if not torch.equal(cached, recomputed):
                break
        return sets
    return once(("witness", id(module), idx.numpy().tobytes(), tuple(idx.shape), new, seed), make)


def witnessed(module, cfg, idx, new, switches, sets):
    """The tokens the book's cache gives with ``sets`` loaded before the model's later calls (the
    same for every student: computed once per process)."""
    return once(("kv witnessed", id(module), idx.numpy().tobytes(), tuple(idx.shape), new, tuple(map(id, sets)),
                 repr(switches)),
                lambda: no_grad(generate)(copy.deepcopy(module), idx, new, fresh_state(cfg["n_layers"]), base=switches,
                                          sets=sets))


def generation_steps(cfg, module, spec, prompts, max_new_tokens, sets=None, record=False, prefix=""):
    """Steps: the student's GPTModel with the reference's weights, then generate_text_simple_cached
    on each prompt in turn with the same model (``sets`` loaded before the model's later calls)."""
    m = f"{prefix}m"
    steps = [build_step(m, GPT, (cfg,), module, spec)]
    for k, idx in enumerate(prompts):
        step = {"let": f"{prefix}out{k}", "call": GEN, "args": [{"$ref": m}, idx, max_new_tokens], "return": True}
        if sets is not None:
            step["reload"] = {m: sets}
        if record:
            step["record"] = [m]
        steps.append(step)
    return steps


def expect_tokens(got, want, what, mistakes, fed=None, expected_are="the book's cached generation gives"):
    """``fed``: what the child's hooks saw, quoted as feedback (never evidence)."""
    if isinstance(got, torch.Tensor) and got.shape == want.shape and torch.equal(got, want):
        return
    name = tokens_mistake(got, mistakes) if isinstance(got, torch.Tensor) else None
    seen = f" (Your model reported being fed {fed} tokens, call by call.)" if fed else ""
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        raise failure(f"{what}: " + yours_vs_expected(
            yours=list(getattr(got, 'shape', ())) or type(got).__name__, yours_are="returned",
            expected=f"the prompt followed by the new tokens, shape {list(want.shape)}") + "." + seen, name)
    n = int((got != want).any(dim=0).long().argmax())
    raise failure(f"{what}: token {n}: " + yours_vs_expected(
        yours=got[:, n].tolist(), yours_are="is", expected=want[:, n].tolist(),
        expected_are=expected_are) + " there." + seen, name)


def generation_mistakes(module, cfg, idx, new, switches, sets=()):
    return {name: (lambda v=v: no_grad(generate)(copy.deepcopy(module), idx, new, fresh_state(cfg["n_layers"]), v,
                                                 switches, sets))
            for name, v in {**GPT_MISTAKES, **ATTENTION_MISTAKES, NO_CACHE: "no cache",
                            FIRST_POSITION: "first position", WHOLE_SEQUENCE: "recomputed"}.items()}


@points(5)
def test_generate_equals_uncached(student, ref, seeds):
    """generate_text_simple_cached gives chapter 4's generate_text_simple's tokens, token for token, keys kept"""
    probe_steps, probe = base_steps(ref, CFGS[0], seeds("probe"))
    steps, cases = probe_steps, []
    for i, (cfg, b, n0, new) in enumerate([(CFGS[0], 2, 3, 6), (CFGS[1], 1, 1, 6), (CFGS[2], 3, 4, 4)]):
        module, spec = gpt_case(ref, cfg, seeds(f"model{i}"))
        idx = token_ids(b, n0, cfg["vocab_size"], seeds(f"idx{i}"))
        sets = witness(module, idx, new, seeds(f"witness{i}"))
        steps += [*generation_steps(cfg, module, spec, [idx], new, prefix=f"g{i}"),
                  *generation_steps(cfg, module, spec, [idx], new, sets, prefix=f"w{i}")]
        cases.append((cfg, new, module, idx, sets))
    plan = student.plan(steps, needs=GEN)
    switches = base_of(student, plan, probe, "generate_text_simple_cached")
    for i, (cfg, new, module, idx, sets) in enumerate(cases):
        what = (f"generate_text_simple_cached(model, idx of shape {tuple(idx.shape)}, max_new_tokens={new}) "
                f"(context_length={cfg['context_length']}, n_layers={cfg['n_layers']})")
        want = (generate_uncached(module, idx, new) if switches is None else
                no_grad(generate)(copy.deepcopy(module), idx, new, fresh_state(cfg["n_layers"]), "recomputed", switches))
        expect_tokens(plan.values[f"g{i}out0"], want, what, generation_mistakes(module, cfg, idx, new, switches),
                      expected_are="chapter 4's generate_text_simple gives")
        expect_tokens(plan.values[f"w{i}out0"], witnessed(module, cfg, idx, new, switches, sets),
                      f"{what}, with {WITNESS.replace('piece', 'step')}",
                      generation_mistakes(module, cfg, idx, new, switches, sets))


@points(3)
def test_generate_twice(student, ref, seeds):
    """a second call starts afresh (the cache reset): the same prompt gives the same text again"""
    cfg = CFGS[0]
    module, spec = gpt_case(ref, cfg, seeds("model"))
    new = 3
    first, second = token_ids(2, 3, cfg["vocab_size"], seeds("first")), token_ids(2, 3, cfg["vocab_size"], seeds("second"))
    sets = rekeyed(module, seeds("witness"), new - 1)
    probe_steps, probe = base_steps(ref, cfg, seeds("probe"))
    plan = student.plan(generation_steps(cfg, module, spec, [first, second, first], new, sets) + probe_steps,
                        needs=GEN)
    what = "generate_text_simple_cached, called a second time with the same model"
    switches = base_of(student, plan, probe, what)

    @no_grad
    def calls(variant, count=3):
        """The first ``count`` generations on one private model, the cache reset with ``variant``
        between (a cache never reset runs past context_length at the third)."""
        private, state, outs = copy.deepcopy(module), fresh_state(cfg["n_layers"]), []
        for prompt in (first, second, first)[:count]:
            state = reset(state, variant) if outs else state
            outs.append(generate(private, prompt, new, state, base=switches, sets=sets))
        return outs
    want = once(("kv generate twice", id(module), tuple(map(id, sets)), repr(switches), first.numpy().tobytes(),
                 second.numpy().tobytes()), lambda: calls(None))
    expect_tokens(plan.values["out0"], want[0], f"generate_text_simple_cached (its first call, with "
                  f"{WITNESS.replace('piece', 'step')})", {})
    expect_tokens(plan.values["out1"], want[1], f"{what} on another prompt",
                  {name: (lambda v=v: calls(v, 2)[1]) for name, v in RESET_MISTAKES.items()})
    expect_tokens(plan.values["out2"], want[2], f"{what} (a third call, with the first call's prompt)",
                  {name: (lambda v=v: calls(v)[2]) for name, v in RESET_MISTAKES.items()})


@points(4)
def test_generate_feeds_one_token_per_step(student, ref, seeds):
    """after the whole prompt in one call, every step feeds one new token: the earlier keys are the cache's"""
    probe_steps, probe = base_steps(ref, CFGS[2], seeds("probe"))
    steps, cases = probe_steps, []
    for i, (cfg, b, n0, new) in enumerate([(CFGS[0], 2, 4, 6), (CFGS[2], 1, 2, 4)]):
        module, spec = gpt_case(ref, cfg, seeds(f"model{i}"))
        idx = token_ids(b, n0, cfg["vocab_size"], seeds(f"idx{i}"))
        sets = witness(module, idx, new, seeds(f"witness{i}"))
        steps += generation_steps(cfg, module, spec, [idx], new, sets, record=True, prefix=f"g{i}")
        cases.append((cfg, new, module, idx, sets))
    plan = student.plan(steps, needs=GEN)
    switches = base_of(student, plan, probe, "generate_text_simple_cached")
    for i, (cfg, new, module, idx, sets) in enumerate(cases):
        what = (f"generate_text_simple_cached(model, idx of shape {tuple(idx.shape)}, max_new_tokens={new}), with "
                f"{WITNESS.replace('piece', 'step')}")
        try:  # feedback only: the child's hooks are the submission's
            fed = [rows(c[-1]) for c in plan.records[f"g{i}out0"][f"g{i}m"]]  # feedback only
        except (StudentFailure, KeyError, TypeError, IndexError):
            fed = None
        expect_tokens(plan.values[f"g{i}out0"], witnessed(module, cfg, idx, new, switches, sets), what,
                      generation_mistakes(module, cfg, idx, new, switches, sets), fed)


def rows(answer):
    """[batch, tokens] of a model's answer (batch, tokens, vocab), as the child's hook saw it."""
    return list(answer.shape[:2]) if isinstance(answer, torch.Tensor) and answer.dim() == 3 else None


@points(1)
def test_cache_stays_out_of_the_state_dict(student, ref, seeds):
    """the cache is in non-persistent buffers: after cached calls the state_dict holds the same names"""
    cfg = CFGS[1]
    module, spec = gpt_case(ref, cfg, seeds("model"))
    idx = token_ids(2, 4, cfg["vocab_size"], seeds("idx"))
    new_keys, = rekeyed(module, seeds("witness"), 1)
    probe_steps, probe = base_steps(ref, cfg, seeds("probe"))
    plan = student.plan([*probe_steps, build_step("m", GPT, (cfg,), module, spec),
                         {"let": "sd0", "call": "m.state_dict"}, {"let": "names0", "iterate": "sd0", "return": True},
                         {"let": "r", "call": "m.reset_kv_cache"},
                         {"let": "a", "call": "m", "args": [idx], "kwargs": {"use_cache": True}, "return": True},
                         {"let": "b", "call": "m", "args": [idx[:, :1]], "kwargs": {"use_cache": True},
                          "params": new_keys, "return": True},
                         {"let": "sd1", "call": "m.state_dict"}, {"let": "names1", "iterate": "sd1", "return": True}],
                        needs=GPT)
    switches = base_of(student, plan, probe, "GPTModel")

    @no_grad
    def next_token(variant):
        private, state = copy.deepcopy(module), fresh_state(cfg["n_layers"])
        gpt(private, idx, state, variant, switches)
        load(private, new_keys)
        return gpt(private, idx[:, :1], state, variant, switches)
    # evidence that there is a cache to keep out (one that keeps nothing has nothing to leave out):
    # the next token's answer is one a cache gives, right or with a mistake of its own charged elsewhere
    got = plan.values["b"]
    plan.values["a"]  # the prompt's call ran (or the check fails with its error)
    right = once(("kv next token", id(module), id(new_keys), idx.numpy().tobytes(), repr(switches)),
                 lambda: next_token(None))
    if not any(close(got, fn()) for fn in [lambda: right] + [
            (lambda v=v: next_token(v)) for v in {**ATTENTION_MISTAKES, **GPT_MISTAKES}.values()]):
        raise failure(f"GPTModel(context_length={cfg['context_length']}): the next token fed with use_cache=True, "
                      f"with {WITNESS.replace('each piece after the first', 'it')}, gave an answer no cache gives: "
                      "there is no cache here to keep out of the state_dict.",
                      known_mistake(got, {NO_CACHE: lambda: next_token("no cache"),
                                          RECOMPUTED: lambda: next_token("recompute")},
                                    lambda a, m: 0.0 if close(a, m) else None))
    before, after = plan.values["names0"], plan.values["names1"]
    extra = sorted(set(after) - set(before))
    if extra or sorted(after) != sorted(before):
        raise failure(f"GPTModel's state_dict after cached calls holds {extra or sorted(after)} too.",
                      "the cache in persistent buffers (register_buffer(\"cache_k\", None, persistent=False) keeps "
                      "it out of the state_dict and of every saved model)")
