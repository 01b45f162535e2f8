"""Hidden checks for exercises 4.1 to 4.3 (12 points).

Every answer is judged against one the grader computes itself, on configurations, inputs and
weights it chose. 4.1's counts are the book's FeedForward's and MultiHeadAttention's, or those of
a lower piece with a count-changing mistake the grader has seen that piece make on its own weights;
4.2's counts are the book's, or the book's model with a mistake of a lower part that lost points;
4.3 runs the blocks and the model with the grader's stand-ins, and a wiring mistake
transformer_block was charged with is modelled here, by name. A mistake in a lower part is thus
charged there only, and nothing the child says about its own modules becomes the truth."""
import pytest
import torch

from _gpt import (BUILT_FROM, calls_to, drawn_pieces, on_stand_ins, KEEP, BLOCK_PIECES, CFGS, as_dict, block_forward, block_mistakes, block_names, built, gpt_forward, gpt_mistakes,
                  named_parameters_steps, params, pieces_of, run, stand_ins, swapped, token_ids)
from autograder.grading.compare import expect_close, seeded, yours_vs_expected
from autograder.grading.diagnose import Projection
from autograder.grading.probes import calls_made, stood_in
from autograder.grading.kit import call_text, charged, differing, lower_part_wrong
from autograder.grading.result import failure
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points
EX = "exercises"
OTHER_SIZE = "an emb_dim, n_layers or n_heads other than that GPT-2 size's (see the docstring's table)"
CONFIG_CHANGED = ("GPT_CONFIG_124M changed in place (cfg = GPT_CONFIG_124M does not copy it: "
                  "use {**GPT_CONFIG_124M, ...} or dict(GPT_CONFIG_124M, ...))")
ONE_DICT = "one dict returned by every call (each call must build a new one)"
MEGABYTE = "megabytes of 1,000 * 1,000 bytes (the book divides by 1024 * 1024)"
NO_ATTENTION_DROPOUT = "no dropout in the attention in training mode (drop_rate_attn not passed on)"
RATES_MIXED = "the dropout rates mixed up (drop_rate_emb, drop_rate_shortcut and drop_rate_attn each have one place)"
SIZES = {"small": (768, 12, 12), "medium": (1024, 24, 16), "large": (1280, 36, 20), "xl": (1600, 48, 25)}


def numel(pairs, what):
    return sum(t.numel() for t in as_dict(pairs, what).values())


# -- exercise 4.1 -----------------------------------------------------------------------------------
# 4.1 counts the parameters of the pieces it builds. They are the grader's stand-ins (torch's
# nn.Linear, of other sizes for the attention and the feed forward network, so that the two counts
# differ), whatever the student's own classes hold (their parts judge them): the count is computed
# here on the stand-ins it called (the book's count of a piece it counts by formula), and what 4.1
# passes the classes is judged against the book's arguments.
def count_stand_ins(d):
    linear = {"torch": "Linear", "kwargs": {"in_features": d, "out_features": d}}
    return {BUILT_FROM["att"]: linear, BUILT_FROM["norm1"]: {"torch": "LayerNorm", "kwargs": {"normalized_shape": d}},
            BUILT_FROM["ff"]: {"torch": "Linear", "kwargs": {"in_features": d, "out_features": 3 * d}}}


def att_args(cfg):
    return [cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"], cfg["n_heads"], cfg["qkv_bias"]]


def is_counts(answer):
    return isinstance(answer, list) and len(answer) == 2 and all(type(a) is int for a in answer)


@points(3)
def test_4_1_feed_forward_and_attention_params(student, ref):
    """4.1: (parameters of FeedForward(cfg), of the block's MultiHeadAttention), for several configurations"""
    cfgs = [CFGS[0], CFGS[1], {**CFGS[2], "qkv_bias": True}]
    plan = student.plan([{"let": f"answer{i}", "call": f"{EX}.feed_forward_and_attention_params", "args": [cfg],
                          "inject": count_stand_ins(cfg["emb_dim"]), "return": True} for i, cfg in enumerate(cfgs)],
                        needs=f"{EX}.feed_forward_and_attention_params")
    for i, cfg in enumerate(cfgs):
        what = f"feed_forward_and_attention_params({cfg})"
        answer = plan.values[f"answer{i}"]
        book_att = dict(zip(("d_in", "d_out", "context_length", "dropout", "num_heads", "qkv_bias"), att_args(cfg)))
        for given in calls_to(plan, f"answer{i}", BUILT_FROM["att"], ref):
            differ = differing(given, book_att)
            if differ:
                raise failure(f"{what} builds {call_text('MultiHeadAttention', given, book_att)}; the block's is "
                              f"{call_text('MultiHeadAttention', book_att, book_att)}.",
                              "the attention built without cfg['qkv_bias'] (its three biases not counted)"
                              if differ == ["qkv_bias"] else None)
        called = {name for name, _ in calls_made(plan, f"answer{i}", ref)}
        with stood_in(ref, {k: v for k, v in count_stand_ins(cfg["emb_dim"]).items() if k in called}):
            book = list(ref.exercises.feed_forward_and_attention_params(cfg))
        if is_counts(answer) and answer == book:
            continue
        raise failure(f"{what}: " + yours_vs_expected(yours=repr(answer), expected=book, yours_are="returned")
                      + " (the pieces it builds are the grader's stand-ins, nn.Linear layers of other sizes than the "
                      "book's, while it runs): both counts as ints, feed forward first.",
                      "the two counts in the other order (the feed forward's first)" if answer == book[::-1] else None)


@points(2)
def test_4_2_configs(student, ref):
    """4.2: gpt2_config gives GPT-2 small, medium, large and XL; another size raises ValueError"""
    steps = [{"let": size, "call": f"{EX}.gpt2_config", "args": [size], "return": True} for size in SIZES]
    # GPT_CONFIG_124M as it is after those calls; then each result is a dict of its own: changing
    # the first one changes no other
    steps += [{"let": "book_after", "attr": "gpt_model.GPT_CONFIG_124M", "return": True},
              {"let": "poke", "call": "small.update", "args": [{"n_layers": -1}]},
              {"let": "medium_after", "attr": "medium", "return": True}]
    steps.append({"let": "huge", "call": f"{EX}.gpt2_config", "args": ["huge"], "return": True})
    # a new dict each call: asked again after the others, "small" is still GPT-2 small
    steps.append({"let": "small_again", "call": f"{EX}.gpt2_config", "args": ["small"], "return": True})
    plan = student.plan(steps, needs=f"{EX}.gpt2_config")
    for size, (emb, layers, heads) in SIZES.items():
        expected = ref.exercises.gpt2_config(size)
        got = plan.values[size]
        if got != expected:
            one_off = isinstance(got, dict) and got.keys() == expected.keys() and \
                sum(got[k] != expected[k] for k in expected) == 1
            raise failure(f"gpt2_config({size!r}): " + yours_vs_expected(
                yours=repr(got), yours_are="is",
                expected=f"GPT_CONFIG_124M with emb_dim={emb}, n_layers={layers}, n_heads={heads}") + ".",
                OTHER_SIZE if one_off else None)
    if plan.values["book_after"] != ref.gpt_model.GPT_CONFIG_124M:
        raise failure(f"after gpt2_config('medium'), ('large') and ('xl'), GPT_CONFIG_124M is "
                      f"{plan.values['book_after']!r}: leave it as it is.", CONFIG_CHANGED)
    if plan.values["medium_after"] != ref.exercises.gpt2_config("medium"):
        raise failure("changing the dict gpt2_config('small') returned changed the one gpt2_config('medium') "
                      "returned: return a new dict each call.", ONE_DICT)
    if plan.values["small_again"] != ref.exercises.gpt2_config("small"):
        raise AssertionError("gpt2_config('small') after the other sizes is not GPT-2 small: return a new dict each "
                             "call and leave GPT_CONFIG_124M as it is ({**GPT_CONFIG_124M, ...} or dict(...))")
    why = plan.failed("huge")
    if not why or "ValueError" not in why:
        raise AssertionError(f"gpt2_config('huge') must raise ValueError ({why or 'it returned a config'})")


# Counts of the book's GPTModel(cfg) built with one mistake of a lower part, as deltas of the book's
# count (``block``: one block's parameters). A count made on the student's own model (the meta device)
# is right with such a mistake; it is credited only where that part lost points in this grading
# (kit.lower_part_wrong: the grader's verdict, not the child's word), so the mistake costs there once.
LOWER_COUNT_MISTAKES = {
    "gpt_model": {
        "out_head built with a bias": lambda c, block: c["vocab_size"],
        "out_head tied to tok_emb (shared weights count once)": lambda c, block: -c["vocab_size"] * c["emb_dim"],
        "one block repeated (counted once)": lambda c, block: -(c["n_layers"] - 1) * block,
        "pos_emb sized with vocab_size": lambda c, block: (c["vocab_size"] - c["context_length"]) * c["emb_dim"],
    },
    "transformer_block": {
        "the attention built without cfg['qkv_bias']": lambda c, block: -3 * c["emb_dim"] * c["n_layers"] * c["qkv_bias"],
        "the attention built with qkv_bias=True": lambda c, block: 3 * c["emb_dim"] * c["n_layers"] * (not c["qkv_bias"]),
    },
    "feed_forward": {
        "the second linear layer without bias": lambda c, block: -c["emb_dim"] * c["n_layers"],
        "the first linear layer without bias": lambda c, block: -4 * c["emb_dim"] * c["n_layers"],
        "both linear layers without bias": lambda c, block: -5 * c["emb_dim"] * c["n_layers"],
        "an expansion to 2 * emb_dim": lambda c, block: -(4 * c["emb_dim"] ** 2 + 2 * c["emb_dim"]) * c["n_layers"],
    },
    "layer_norm": {
        "scale and shift not parameters": lambda c, block: -(2 * c["n_layers"] + 1) * 2 * c["emb_dim"],
    },
}


def count_models(student, book):
    """{(part, mistake): cfg -> count}: the counts 4.2 may credit, every one computed here from
    ``book`` (the reference's count): the book's, and the book's GPTModel with one mistake of each
    lower part that lost points in this grading."""
    def block(cfg):
        return (book(cfg) - book({**cfg, "n_layers": 0})) // cfg["n_layers"]

    models = {(None, None): book}
    for part, mistakes in LOWER_COUNT_MISTAKES.items():
        if lower_part_wrong(student, part):
            models.update({(part, name): (lambda cfg, d=delta: book(cfg) + d(cfg, block(cfg)))
                           for name, delta in mistakes.items()})
    return models


def own_count(plan, step):
    """The parameters the student's own model says it has (feedback only), or None."""
    try:
        return numel(plan.values[step], "GPTModel")
    except StudentFailure:
        return None


@points(3)
def test_4_2_parameter_counts_and_sizes(student, ref):
    """4.2: gpt_parameter_count and gpt_size_mb, for small models and GPT-2 medium, large and XL"""
    small = [CFGS[0], {**CFGS[1], "qkv_bias": False}, {**CFGS[2], "qkv_bias": True, "n_layers": 2}]
    big = [ref.exercises.gpt2_config(size) for size in ("medium", "large", "xl")]
    steps = []
    for i, cfg in enumerate(small + big):
        steps += [{"let": f"count{i}", "call": f"{EX}.gpt_parameter_count", "args": [cfg], "return": True},
                  {"let": f"mb{i}", "call": f"{EX}.gpt_size_mb", "args": [cfg], "return": True}]
    # the student's own small models, for the feedback only: what the child says its model has
    # never changes what is expected (a marker left by the count could change the next model)
    for i, cfg in enumerate(small):
        steps += [{"let": f"m{i}", "call": "gpt_model.GPTModel", "args": [cfg]},
                  *named_parameters_steps(f"state{i}", f"m{i}")]
    # a count built on the meta device imports torch._dynamo in the child first (seconds)
    plan = student.plan(steps, needs=f"{EX}.gpt_parameter_count", timeout=30)
    # every answer must be one trusted count, and the same model's on every configuration
    models = count_models(student, ref.exercises.gpt_parameter_count)
    for i, cfg in enumerate(small + big):
        count, mb = plan.values[f"count{i}"], plan.values[f"mb{i}"]
        is_big = i >= len(small)
        what = f"GPT-2 with emb_dim={cfg['emb_dim']}, n_layers={cfg['n_layers']}" if is_big else f"{cfg}"
        fitting = {key: model for key, model in models.items() if type(count) is int and count == model(cfg)}
        if not fitting:
            own = None if is_big else own_count(plan, f"state{i}")
            book = ref.exercises.gpt_parameter_count(cfg)
            if own not in (None, book) and own == count:
                what += (f" (your GPTModel has {own:,} parameters, the book's {book:,}: its mistake is charged "
                         "where it lives, see gpt_model and the parts before it)")
            check_count(count, mb, book, what, cfg)
        models = fitting
        check_count(count, mb, count, what, cfg)
    if (None, None) not in models:
        part, mistake = next(iter(models))
        student.notes.append(f"4.2's counts are those of the book's GPTModel with {mistake}: that mistake is "
                             f"charged in {part}.")


def count_mistakes(expected, cfg):
    """{mistake: the count it gives} for a count of ``cfg``'s GPT model that leaves a piece out."""
    emb = cfg["emb_dim"]
    models = {"the output head left out of the count (out_head has vocab_size * emb_dim weights)":
              expected - cfg["vocab_size"] * emb,
              "the final norm left out of the count (its scale and shift)": expected - 2 * emb}
    if cfg["qkv_bias"]:
        models["the query, key and value biases left out of the count (qkv_bias is True)"] = \
            expected - cfg["n_layers"] * 3 * emb
    return models


def check_count(count, mb, expected, what, cfg):
    if type(count) is not int or count != expected:
        name = next((n for n, m in count_mistakes(expected, cfg).items() if m == count), None)
        raise failure(f"gpt_parameter_count for {what}: " + yours_vs_expected(
            yours=repr(count), yours_are="returned", expected=f"{expected:,}") + ".", name)
    if type(mb) not in (int, float) or abs(mb - expected * 4 / 2**20) > 1e-6 * max(1.0, mb):
        decimal = type(mb) in (int, float) and abs(mb - expected * 4 / 1e6) <= 1e-6 * max(1.0, mb)
        raise failure(f"gpt_size_mb for {what}: " + yours_vs_expected(
            yours=repr(mb), yours_are="returned", expected=f"{expected * 4 / 2**20:.4f}")
            + " (4 bytes a parameter, 1024 * 1024 bytes a megabyte).", MEGABYTE if decimal else None)


def separate(cfg, emb, shortcut, attn):
    cfg = {k: v for k, v in cfg.items() if k != "drop_rate"}
    return {**cfg, "drop_rate_emb": emb, "drop_rate_shortcut": shortcut, "drop_rate_attn": attn}


# 4.3's block built on the student's own TransformerBlock (a subclass) shares its wiring: a wiring
# mistake transformer_block was charged with, by name, is modelled here with the grader's stand-ins
# and 4.3's shortcut rate, so the rate is still judged and the wiring costs in its own part only.
# A block that applies no shortcut dropout shows no rate: that mistake is not modelled here.
NO_SHORTCUT_DROPOUT = "no dropout on the shortcut branches in training mode"


def charged_wiring(student, models):
    """{mistake: its answer} for the block mistakes among ``models`` transformer_block was charged
    with, but one that would leave drop_rate_shortcut unseen."""
    names = [name for name in models if name != NO_SHORTCUT_DROPOUT]
    return {name: models[name] for name in charged(student, ["transformer_block"], names)}


def close(actual, expected):
    return (isinstance(actual, torch.Tensor) and actual.shape == expected.shape
            and torch.allclose(actual, expected, atol=1e-5))


@points(4)
def test_4_3_separate_dropout_rates(student, ref, seeds):
    """4.3: drop_rate_shortcut on the block's shortcuts, drop_rate_emb after the embeddings, drop_rate_attn in att"""
    cfg = separate(CFGS[0], 0.3, 0.5, 0.2)

    def block():
        ex_block = ref.exercises.TransformerBlockSeparateDropout
        spec = stand_ins(BLOCK_PIECES, cfg["emb_dim"], seeds("block stand-ins"))
        module = swapped(built(ex_block, cfg, seeds("block")), spec)
        x = seeded(2, 5, cfg["emb_dim"], seed=seeds("block x"))
        step = {"let": "blk", "call": f"{EX}.TransformerBlockSeparateDropout", "args": [cfg], **on_stand_ins(spec),
                "params_keep": KEEP, "params": params(module), "train": True}
        plan = student.plan([step, {"let": "out", "call": "blk", "args": [x], "seed": 123, "return": True}],
                            needs=f"{EX}.TransformerBlockSeparateDropout")
        what = "TransformerBlockSeparateDropout(drop_rate_shortcut=0.5) in training mode (stand-ins for att, ff, norms)"
        out = plan.values["out"]
        expected = run(module, x, train=True, seed=123)
        mistakes = block_mistakes(x, pieces_of(spec), drop=0.5, seed=123, train=True)
        if not close(out, expected):
            for name, model in charged_wiring(student, mistakes).items():
                if close(out, model()):
                    student.notes.append(f"4.3's block is the book's with {name}, at drop_rate_shortcut: that "
                                         "wiring is charged in transformer_block.")
                    return
        mistakes[RATES_MIXED] = Projection(lambda actual: next(
            (m for m in (block_forward(x, pieces_of(spec), drop=r, seed=123) for r in (0.3, 0.2)) if close(actual, m)), None))
        expect_close(out, expected, what, mistakes)

    def model():
        spec = stand_ins(block_names(cfg), cfg["emb_dim"], seeds("model stand-ins"))
        module = swapped(built(ref.exercises.GPTModelSeparateDropout, cfg, seeds("model")), spec)
        idx = token_ids(2, 6, cfg["vocab_size"], seeds("idx"))
        plan = student.plan([{"let": "m", "call": f"{EX}.GPTModelSeparateDropout", "args": [cfg],
                              **on_stand_ins(spec, block=f"{EX}.TransformerBlockSeparateDropout"),
                              "params_keep": KEEP, "params": params(module), "train": True},
                             {"let": "out", "call": "m", "args": [idx], "seed": 123, "return": True}],
                            needs=f"{EX}.GPTModelSeparateDropout")
        mistakes = gpt_mistakes(idx, module, spec, drop=0.3, seed=123, train=True)
        mistakes[RATES_MIXED] = Projection(lambda actual: next(
            (m for m in (gpt_forward(idx, module, spec, drop=r, seed=123) for r in (0.5, 0.2)) if close(actual, m)),
            None))
        expect_close(plan.values["out"], run(module, idx, train=True, seed=123),
                     "GPTModelSeparateDropout(drop_rate_emb=0.3) in training mode (stand-ins for the blocks)", mistakes)

    def attention():
        # Each block builds its attention with dropout=drop_rate_attn: read from what the blocks pass
        # the grader's stand-in for MultiHeadAttention (what the attention does with it is chapter 3's)
        plan = student.plan([{"let": "m", "call": f"{EX}.GPTModelSeparateDropout", "args": [cfg],
                              "inject": drawn_pieces(cfg["emb_dim"])}], needs=f"{EX}.GPTModelSeparateDropout")
        rates = [given and given.get("dropout") for given in calls_to(plan, "m", BUILT_FROM["att"], ref)]
        if rates == [0.2] * cfg["n_layers"]:
            return
        mixed = rates and all(rate in (0.3, 0.5) for rate in rates)
        raise failure(f"GPTModelSeparateDropout's blocks build their MultiHeadAttention with dropout {rates}; the "
                      f"book's {cfg['n_layers']} blocks each pass dropout=drop_rate_attn (0.2).",
                      RATES_MIXED if mixed else NO_ATTENTION_DROPOUT if rates and not any(rates) else None)

    for check in (block, model, attention):
        check()

