"""Hidden checks for exercises 3.1 to 3.3 (15 points)."""
import re

import pytest
import torch

from _attention import (attention_forward, check_forward, linear_weights, own_pieces, probe_module, reference,
                        same_close, transfer)
from autograder.grading.compare import expect_close, seeded, set_seed
from autograder.grading import diagnose
from autograder.grading import probes
from autograder.grading.kit import call_text, differing
from autograder.grading.diagnose import Projection
from autograder.grading.result import KnownMistake, failure
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points


BOOK_WEIGHTS = ("W_query", "W_key", "W_value")
SWAPPED = {"W_query": "W_key", "W_key": "W_query"}
OTHER_HEADS = "a num_heads other than GPT-2 small's 12 (768 = 12 heads of 64)"
OTHER_CONTEXT = "a context_length other than GPT-2 small's 1,024"


@points(6)
def test_3_1_transfer_weights(student, ref, seeds):
    """3.1: v1 holds v2's weights transposed and gives v2's output, square and non-square"""
    # The child builds v2 with the student's own class after a seed: the request holds no
    # weights, so a tampered child cannot earn this by echoing them transposed.
    # Where the student's own v1 or v2 is wrong but really written (it lost and earned points in
    # self_attention), the transfer is still judged on weights the grader knows: the book's,
    # copied into a v2 that draws others; v1's, wherever it holds them. One mistake, one part.
    own = bool({"self_attention"} & student.failed_parts & student.passed_parts)
    # square first: an untransposed copy still fits there, so the mistake can be named
    for i, (d_in, d_out) in enumerate(((4, 4), (3, 2), (5, 3), (2, 6))):
        init = seeds(f"v2_{i}")  # the seed v2 is built after
        set_seed(init)
        sa_v2 = ref.self_attention.SelfAttention_v2(d_in, d_out)
        params = {k: v.detach().clone() for k, v in sa_v2.named_parameters()}  # sa_v2 may be given others below
        x = seeded(6, d_in, seed=seeds(f"x{i}"))
        set_seed(0)  # the child builds v1 after this seed: its weights before any transfer
        untouched = {k: v.detach() for k, v in ref.self_attention.SelfAttention_v1(d_in, d_out).named_parameters()}
        stand_in = None
        try:
            reply = _transfer(student, d_in, d_out, init)
        except StudentFailure as exc:
            # a v1 that cannot take the book's shapes (charged in self_attention): the transfer is
            # judged on torch's nn.ParameterDict of v1's parameters as the book draws them
            if not own:
                raise
            stand_in = untouched
            try:
                reply = _transfer(student, d_in, d_out, init, v1=stand_in)
            except StudentFailure:
                raise exc from None
            student.notes.append("3.1 judged with a stand-in for your SelfAttention_v1 (torch's nn.ParameterDict "
                                 "holding the book's W_query, W_key and W_value, each (d_in, d_out)): yours could "
                                 "not take the transfer, which is charged in self_attention.")
        held_by_v2 = _known_weights(reply["v2_params"], params)
        if held_by_v2 is None:
            if not own:
                raise AssertionError(f"SelfAttention_v2({d_in}, {d_out}) after torch.manual_seed({init}) does not draw "
                                     "the book's weights, so the transfer cannot be judged (see self_attention)")
            reply = _transfer(student, d_in, d_out, init, weights=params, v1=stand_in)
            student.notes.append("3.1 judged with the book's weights copied into your SelfAttention_v2 (it draws "
                                 "others: charged in self_attention).")
        elif any(not torch.equal(held_by_v2[k], v) for k, v in params.items()):
            params = held_by_v2  # the book's draws in another order (charged in self_attention)
            with torch.no_grad():
                for name in BOOK_WEIGHTS:
                    getattr(sa_v2, name).weight.copy_(params[f"{name}.weight"])
            student.notes.append("3.1 judged with the book's weights in the order your SelfAttention_v2 draws them; "
                                 "the order is charged in self_attention.")
        held = reply["params"]
        if own and not all(name in held for name in BOOK_WEIGHTS):
            held = {**reply.get("v1_plain", {}), **held}
            if not all(name in held for name in BOOK_WEIGHTS):  # other names: v1 as the student wrote it
                _judge_by_shapes(student, held, params, d_in, d_out)
                continue
            student.notes.append("3.1 judged with the weights your SelfAttention_v1 holds as plain tensors; "
                                 "that they are not parameters is charged in self_attention.")
        for name in BOOK_WEIGHTS:
            weight = params[f"{name}.weight"]
            expect_close(held.get(name), weight.T, f"SelfAttention_v1.{name} after the transfer ({d_in}->{d_out})",
                         {"weights copied without transposing (nn.Linear stores (d_out, d_in))": weight,
                          **({"the query and key weights swapped in the transfer": params[f"{SWAPPED[name]}.weight"].T}
                             if name in SWAPPED else {}),
                          f"v1's {name} left unchanged (nothing copied into the module itself)": untouched[name]})
        # The output is checked with the reference v1 holding the transferred weights, so a bug in
        # the student's own SelfAttention_v1.forward costs points in self_attention only.
        sa_v1 = ref.self_attention.SelfAttention_v1(d_in, d_out)
        with torch.no_grad():
            for name in BOOK_WEIGHTS:
                getattr(sa_v1, name).copy_(held[name])
            expect_close(sa_v1(x), sa_v2(x), f"SelfAttention_v1 output after the transfer, d_in={d_in}, d_out={d_out}")


def _known_weights(drawn, params):
    """v2's weight in each of the book's places (``params``' names), where every one is a weight the
    grader knows, one of the book's draws (``drawn``: v2's parameters as the child reports them, by
    its own names; a place the child names otherwise holds the book's draw for it); else None."""
    known = {}
    for name, book in params.items():
        if name in drawn:
            known[name] = next((v for v in params.values() if same_close(drawn[name], v)), None)
        else:
            known[name] = book if any(same_close(d, book) for d in drawn.values()) else None
        if known[name] is None:
            return None
    return known


def _transfer(student, d_in, d_out, seed, weights=None, v1=None):
    try:
        return transfer(student, d_in, d_out, seed, weights=weights, v1=v1)
    except StudentFailure as exc:
        if not re.match(r"transfer_weights_v2_to_v1\(\) raised .*(shape|size)", str(exc)):
            raise
        # a shape error in the transfer itself: say which shapes meet there
        raise StudentFailure(f"{exc} (for d_in={d_in}, d_out={d_out}: nn.Linear stores its weight as "
                             "(d_out, d_in), SelfAttention_v1 as (d_in, d_out))") from None


def _judge_by_shapes(student, held, params, d_in, d_out):
    """3.1 where the student's v1 keeps its weights under other names: as the exercise says, v1's
    three weights are v2's (the ones the grader knows), transposed, one each."""
    weights = [params[f"{name}.weight"] for name in BOOK_WEIGHTS]
    found = [next((j for j, w in enumerate(weights) if same_close(t, w.T)), None) for t in held.values()]
    what = f"SelfAttention_v1 after the transfer ({d_in}->{d_out})"
    if sorted(found, key=str) != [0, 1, 2]:
        raise AssertionError(f"{what}: its weights {sorted(held)} are not SelfAttention_v2's three weights, "
                             "transposed, one each (nn.Linear stores (d_out, d_in), v1 (d_in, d_out))")
    student.notes.append(f"3.1 judged on your SelfAttention_v1's own names ({', '.join(held)}): after the transfer "
                         "it holds v2's weights transposed; the names that differ from the book's are charged in "
                         "self_attention.")


# Exercises 3.2 and 3.3 choose the arguments of the chapter's multi-head classes. Both classes are
# stand-ins of the grader's while an exercise runs (torch's nn.Identity, whatever the student's own
# classes do: multihead_attention judges those), and what the exercise passes them is judged here,
# bound to the book's signatures in the grader.
WRAPPER, MHA = "multihead_attention.MultiHeadAttentionWrapper", "multihead_attention.MultiHeadAttention"
STAND_INS = {WRAPPER: {"torch": "Identity"}, MHA: {"torch": "Identity"}}
QKV_BIAS = ("qkv_bias=True passed where the exercise asks for no bias in W_query, W_key and W_value (the book's "
            "default, qkv_bias=False: the class is right, the argument is not)")
NO_DROPOUT = "the dropout argument not passed on (no dropout in training mode)"


def built_by(student, ref, function, calls):
    """Per call ((args, kwargs) of ``exercises.function``): what it built, [(class, {parameter: value})]."""
    plan = student.plan([{"let": f"b{i}", "call": f"exercises.{function}", "args": list(args), "kwargs": kwargs,
                          "inject": STAND_INS} for i, (args, kwargs) in enumerate(calls)], needs=f"exercises.{function}")
    return [[(name.rpartition(".")[2], given) for name, given in probes.calls_made(plan, f"b{i}", ref)]
            for i in range(len(calls))]


def judge_built(what, built, cls, wanted, mistakes):
    """``built`` must be one ``cls`` with the arguments ``wanted``; ``mistakes(differ, given)``: the
    mistake's name where the arguments that differ fit one."""
    other = WRAPPER if cls == MHA else MHA
    classes = [name for name, _ in built]
    if classes != [cls.rpartition(".")[2]]:
        swapped = classes == [other.rpartition(".")[2]]
        raise failure(f"{what} builds {classes or 'neither multi-head class'}; the exercise asks for one "
                      f"{cls.rpartition('.')[2]}.",
                      (diagnose.MHA_FOR_WRAPPER if cls == WRAPPER else diagnose.WRAPPER_FOR_MHA) if swapped else None)
    (_, given), = built
    differ = differing(given, wanted)
    if differ:
        name = cls.rpartition(".")[2]
        raise failure(f"{what} builds {call_text(name, given, wanted)}; the exercise's is "
                      f"{call_text(name, wanted, wanted)}.", None if given is None else mistakes(differ, given))


@points(4)
def test_3_2_two_dimensional_wrapper(student, ref, seeds):
    """3.2: two heads whose concatenated context vectors are two-dimensional"""
    calls = [((3, 6), {}), ((5, 8), {}), ((3, 6), {"dropout": 0.5})]
    made = built_by(student, ref, "build_2d_output_wrapper", calls)
    if not any(made):
        return _3_2_on_own_classes(student, ref, seeds)
    for ((d_in, ctx), kwargs), built in zip(calls, made):
        dropout = kwargs.get("dropout", 0.0)
        wanted = {"d_in": d_in, "d_out": 1, "context_length": ctx, "dropout": dropout, "num_heads": 2, "qkv_bias": False}

        def mistake(differ, given):
            if differ == ["dropout"] and given["dropout"] == 0.0:
                return NO_DROPOUT
            if set(differ) == {"d_out", "num_heads"} and given["num_heads"] == 1:
                return "one head (num_heads=1) where the exercise asks for two heads of d_out=1"
            return None
        judge_built(f"build_2d_output_wrapper({d_in}, {ctx}{', dropout=0.5' if kwargs else ''})", built, WRAPPER,
                    wanted, mistake)


@points(5)
def test_3_3_gpt2_small(student, ref, seeds):
    """3.3: 12 heads, 768 in and out, context 1,024, dropout passed on, no qkv bias"""
    calls = [((), {}), ((), {"dropout": 0.25})]  # not GPT-2's 0.1, so that a hard-coded 0.1 shows
    made = built_by(student, ref, "build_gpt2_small_mha", calls)
    if not any(made):
        return _3_3_on_own_classes(student, ref, seeds)
    for (_, kwargs), built in zip(calls, made):
        dropout = kwargs.get("dropout", 0.0)
        wanted = {"d_in": 768, "d_out": 768, "context_length": 1024, "dropout": dropout, "num_heads": 12,
                  "qkv_bias": False}

        def mistake(differ, given):
            named = {"num_heads": OTHER_HEADS, "context_length": OTHER_CONTEXT, "qkv_bias": QKV_BIAS}
            if differ == ["dropout"]:
                return NO_DROPOUT if given["dropout"] == 0.0 else (
                    f"dropout at rate {given['dropout']}, not the rate the dropout argument gives")
            return named.get(differ[0]) if len(differ) == 1 else None
        judge_built(f"build_gpt2_small_mha({'dropout=0.25' if kwargs else ''})", built, MHA, wanted, mistake)


def _own_wrapper():
    """What 3.2 may be judged with where the wrapper or its heads are wrong (two heads)."""
    return own_pieces(("multihead_attention", "causal_attention"), "build_2d_output_wrapper", heads=2, configured=True)


def _3_2_on_own_classes(student, ref, seeds):
    """3.2 judged through the student's own wrapper: an exercise that calls neither stand-in (it binds
    the class before it runs: a subclass, functools.partial)."""
    for i, (d_in, ctx, n) in enumerate(((3, 6, 6), (5, 8, 4))):
        module = reference(ref.exercises.build_2d_output_wrapper, d_in, ctx, seed=seeds(f"module{i}"))
        x = seeded(2, n, d_in, seed=seeds(f"x{i}"))
        try:
            check_forward(student, "exercises", "build_2d_output_wrapper", (d_in, ctx), module, x,
                          f"build_2d_output_wrapper({d_in}, {ctx}) on {(2, n, d_in)}", own=_own_wrapper())
        except (AssertionError, StudentFailure) as exc:
            heads = probe_module(student, "exercises", "build_2d_output_wrapper", d_in, ctx)["info"].get("heads")
            if heads == ["CausalAttention", "CausalAttention"]:
                raise
            raise AssertionError(f"{exc} (build_2d_output_wrapper({d_in}, {ctx}) should give a wrapper with two "
                                 f"CausalAttention heads of d_out=1; its heads are {heads})") from None
    module = reference(ref.exercises.build_2d_output_wrapper, 3, 6, dropout=0.5, seed=seeds("module"))
    x = seeded(2, 6, 3, seed=seeds("x"))
    unused = {"the dropout argument not passed on to the heads (no dropout in training mode)":
              lambda: _without_dropout(module, x)}
    check_forward(student, "exercises", "build_2d_output_wrapper", (3, 6), module, x,
                  "build_2d_output_wrapper(3, 6, dropout=0.5) in training mode, seed 123: the dropout argument "
                  "must reach the heads", train=True, seed=123, kwargs={"dropout": 0.5},
                  own=_own_wrapper(), more=lambda expected: unused)


def _own_mha():
    return own_pieces(("multihead_attention",), "build_gpt2_small_mha", num_heads=12, configured=True)


def _3_3_on_own_classes(student, ref, seeds):
    """3.3 judged through the student's own MultiHeadAttention: an exercise that calls neither
    stand-in (it binds the class before it runs: a subclass, functools.partial)."""
    module = reference(ref.exercises.build_gpt2_small_mha, seed=seeds("module"))
    x = seeded(2, 4, 768, seed=seeds("x"))
    other_heads = {OTHER_HEADS: _other_heads(module, x)}
    try:
        reply = check_forward(student, "exercises", "build_gpt2_small_mha", (), module, x,
                              "build_gpt2_small_mha() on (2, 4, 768)", own=_own_mha(), more=lambda expected: other_heads)
    except (AssertionError, StudentFailure) as exc:
        if diagnose.from_failure(str(exc)) == diagnose.QKV_BIAS_EXTRA and _class_has_no_qkv_bias(student):
            raise KnownMistake(str(exc), diagnose.QKV_BIAS_ARGUMENT) from None
        raise
    info = (reply or probe_module(student, "exercises", "build_gpt2_small_mha"))["info"]
    mask = info.get("mask", {}).get("shape") or info["params"].get("mask") or info["buffers"].get("mask", [[]])[0]
    if mask[-2:] != [1024, 1024]:
        raise KnownMistake(f"the mask buffer has shape {mask}: GPT-2 small's context length is 1,024 tokens.",
                           OTHER_CONTEXT)
    # not GPT-2's 0.1, so that a hard-coded 0.1 shows
    module = reference(ref.exercises.build_gpt2_small_mha, dropout=0.25, seed=seeds("dropout module"))
    x = seeded(1, 3, 768, seed=seeds("dropout x"))
    check_forward(student, "exercises", "build_gpt2_small_mha", (), module, x,
                  "build_gpt2_small_mha(dropout=0.25) in training mode, seed 123: pass the dropout argument on to "
                  "MultiHeadAttention", train=True, seed=123, kwargs={"dropout": 0.25},
                  own=_own_mha(),
                  mistake_config=dict(num_heads=12, out_proj=module.out_proj, dropout=0.25, seed=123))


def _class_has_no_qkv_bias(student):
    """Whether the student's own MultiHeadAttention, built with the default qkv_bias=False, holds
    no bias in W_query, W_key and W_value: then the biases of the exercise's module come from the
    arguments the exercise passed, not from the class."""
    try:
        params = probe_module(student, "multihead_attention", "MultiHeadAttention", 8, 8, 4, 0.0,
                              num_heads=2)["info"]["params"]
    except StudentFailure:
        return False
    return "W_query.weight" in params and not any(f"{name}.bias" in params for name in BOOK_WEIGHTS)


def _other_heads(module, x):
    """A model for each other head count that divides 768: the same weights split otherwise."""
    def closest(actual):
        if not isinstance(actual, torch.Tensor) or actual.shape != x.shape:
            return None
        with torch.no_grad():
            fits = [attention_forward(x, *linear_weights(module), num_heads=h, out_proj=module.out_proj)
                    for h in (1, 2, 3, 4, 6, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 768)]
        return min(fits, key=lambda f: (actual - f).abs().max().item())
    return Projection(closest)


def _without_dropout(module, x):
    """The reference's output in eval mode (no dropout), its training switch left as it was."""
    training = module.training
    with torch.no_grad():
        out = module.eval()(x)
    module.train(training)
    return out
