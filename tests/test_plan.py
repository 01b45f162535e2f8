"""The generic ``plan`` probe: steps run in order in the sandboxed child, plain data back.

Its users are the chapters after 3; here it runs on chapter 3's reference (known answers, no
dependence on another branch's chapter) and on small modules written for the test."""
import textwrap
import time

import pytest
import torch

from autograder.grading import course
from autograder.sandbox.session import StudentFailure, StudentSession
from autograder.sandbox.submission import read_sources
from autograder.sandbox.zygote import Zygote

MHA = "multihead_attention.MultiHeadAttention"


@pytest.fixture(scope="module")
def zygote():
    z = Zygote()
    yield z
    z.close()


def session(zygote, extra=None):
    sources, _ = read_sources(course.get("ch03_attention").solutions)
    sources = {k: v for k, v in sources.items() if not k.startswith("test_")}
    sources.update({name: textwrap.dedent(text) for name, text in (extra or {}).items()})
    return StudentSession(zygote, sources)


@pytest.fixture(scope="module")
def ref():
    import sys
    folder = str(course.get("ch03_attention").solutions)
    sys.path.insert(0, folder)
    try:
        import multihead_attention
        return multihead_attention
    finally:
        sys.path.remove(folder)


def test_a_plan_builds_runs_records_and_differentiates_like_the_reference(zygote, ref):
    x = torch.rand(2, 5, 6, generator=torch.Generator().manual_seed(0))
    weight = torch.rand(2, 5, 4, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(123)
    expected_module = ref.MultiHeadAttention(6, 4, 8, 0.5, 2)
    with torch.no_grad():
        expected_module.eval()
        expected = expected_module(x)
    expected_module(x).mul(weight).sum().backward()
    s = session(zygote)
    try:
        plan = s.plan([
            {"let": "m", "call": MHA, "args": [6, 4], "kwargs": {"context_length": 8, "dropout": 0.5, "num_heads": 2},
             "seed": 123, "train": False},
            {"let": "out", "call": "m", "args": [x], "record": ["W_query", "out_proj"], "return": True},
            {"let": "heads", "attr": "m.num_heads", "return": True},
            {"let": "w", "attr": "m.W_query.weight", "return": True},
            {"let": "rows", "iterate": "w", "limit": 2, "return": True},
            {"let": "n", "len": "w", "return": True},
            {"let": "out2", "call": "m", "args": [x], "grad": True},
            {"let": "back", "backward": "out2", "weight": weight},
            {"let": "grads", "grads": "m", "return": True},
            {"let": "shape", "call": "out.size", "return": True},
            {"let": "plain", "call": "m.extra_repr", "return": True},
        ], needs=MHA)
    finally:
        s.close()
    assert plan.errors == {}
    assert torch.equal(plan.values["out"], expected)   # same seed, same weights, same answer
    assert plan.values["heads"] == 2 and plan.values["n"] == 4 and plan.values["shape"] == [2, 5, 4]
    assert plan.values["plain"] == ""
    assert torch.equal(plan.values["w"], expected_module.W_query.weight)
    assert [r.tolist() for r in plan.values["rows"]] == expected_module.W_query.weight[:2].tolist()
    calls = plan.records["out"]["W_query"]
    assert len(calls) == 1 and torch.equal(calls[0][0], x) and calls[0][1].shape == (2, 5, 4)
    assert torch.equal(plan.records["out"]["out_proj"][0][1], expected)
    grads = plan.values["grads"]
    assert set(grads) == {k for k, _ in expected_module.named_parameters()}
    for name, p in expected_module.named_parameters():
        assert torch.allclose(grads[name], p.grad), name


def test_params_are_copied_in_strictly_by_name(zygote, ref):
    torch.manual_seed(0)
    state = {k: v.detach() for k, v in ref.MultiHeadAttention(4, 4, 3, 0.0, 2).named_parameters()}
    x = torch.rand(1, 3, 4)
    s = session(zygote)
    try:
        good = s.plan([{"let": "m", "call": MHA, "args": [4, 4, 3, 0.0, 2], "params": state, "train": False},
                       {"let": "w", "attr": "m.out_proj.bias", "return": True}])
        extra = s.plan([{"let": "m", "call": MHA, "args": [4, 4, 3, 0.0, 2], "params": {**state, "scale": x}},
                        {"let": "out", "call": "m", "args": [x], "return": True}])
    finally:
        s.close()
    assert torch.equal(good.values["w"], state["out_proj.bias"])
    with pytest.raises(StudentFailure, match=r"missing \['scale'\]"):
        extra.values["m"]
    with pytest.raises(StudentFailure, match=r"missing \['scale'\]"):  # the cause, not "not run: m failed"
        extra.values["out"]
    assert extra.errors["out"] == "not run: m failed"


def test_each_step_fails_alone_with_the_students_file_and_line(zygote):
    s = session(zygote, {"mine": """\
        import torch

        class Box:
            def __init__(self, n):
                self.n = n

            def items(self):
                return list(range(self.n))

            def broken(self):
                return 1 / 0

            def module(self):
                return torch.nn.Linear(2, 2)

            def complex(self):
                return torch.zeros(2, dtype=torch.float8_e5m2)
        """})
    try:
        plan = s.plan([
            {"let": "box", "call": "mine.Box", "args": [3]},
            {"let": "bad", "call": "box.broken", "return": True},
            {"let": "after", "call": "bad.real", "return": True},
            {"let": "items", "call": "box.items", "return": True},
            {"let": "mod", "call": "box.module", "return": True},
            {"let": "odd", "call": "box.complex", "return": True},
            {"let": "gone", "call": "missing.thing", "return": True},
            {"let": "nothing", "call": "mine.Nothing"},
        ])
    finally:
        s.close()
    assert plan.values["items"] == [0, 1, 2]
    assert plan.errors["bad"] == "box.broken() raised ZeroDivisionError: division by zero (mine.py line 11)"
    assert plan.errors["after"] == "not run: bad failed"
    with pytest.raises(StudentFailure, match=r"division by zero \(mine.py line 11\)"):
        plan.values["after"]
    assert "is a Linear: expected tensors, numbers" in plan.errors["mod"]
    assert "dtype torch.float8_e5m2, which cannot be compared" in plan.errors["odd"]
    assert plan.errors["gone"] == "missing.py is missing from your submission"
    assert plan.errors["nothing"] == "mine.py defines no Nothing"
    assert plan.failed("items") is None and plan.failed("after").startswith("box.broken() raised")
    with pytest.raises(KeyError, match="sent nothing back"):  # a suite's mistake: it never asked for it
        plan.values["box"]


@pytest.mark.parametrize("steps, why", [
    ([{"let": "a", "call": "m.f", "len": "x"}], "exactly one of"),
    ([{"let": "a", "call": "m.f", "args": [{"$ref": "b"}]}], "names no earlier step"),
    ([{"let": "a", "call": "m.f", "args": [print]}], "not plain data"),
    ([{"let": "a", "call": "m.f", "code": "import os"}], "unknown keys"),
    ([{"let": "a", "call": "m.f"}, {"let": "a", "len": "a"}], "new identifier"),
    ([{"let": "a", "iterate": "x", "limit": 10 ** 9}], "limit"),
    ([{"let": "a", "len": "x", "record": ["y"]}], "goes with `call`"),
    ([{"let": "a", "call": "m.f", "seed": "1"}], "`seed` must be an int"),
    ([{"let": "a", "call": "m.f", "params": {"w": [1.0]}}], "`params` must map names to tensors"),
    ([{"let": "a", "call": "m.f", "what": ""}], "`what` must be a str"),
    ([{"let": "a", "call": "m.f", "kwargs": {"x": [[[[[[[[[[1]]]]]]]]]]}}], "nested too deep"),
])
def test_a_malformed_plan_is_the_graders_error(zygote, steps, why):
    s = session(zygote)
    with pytest.raises(ValueError, match=why):
        s.plan(steps)
    assert s.pid is None   # refused before any child started


FORGED = {
    "not a dict": [1, 2],
    "step never asked for": {"values": {"out": 1, "extra": 2}, "records": {}, "errors": {}},
    "answer missing": {"values": {}, "records": {}, "errors": {}},
    "value and error": {"values": {"out": 1}, "records": {}, "errors": {"out": "x"}},
    "error not text": {"values": {}, "records": {}, "errors": {"out": 5}},
    "too deep": {"values": {"out": [[[[[[[[[[[[1]]]]]]]]]]]]}, "records": {}, "errors": {}},
    "string too long": {"values": {"out": "x" * 70000}, "records": {}, "errors": {}},
    "record never asked for": {"values": {"out": 1}, "records": {"out": {"W_key": []}}, "errors": {}},
    "dict with odd keys": {"values": {"out": {"$tensor": "99"}}, "records": {}, "errors": {}},
    "unchanged never allowed": {"values": {}, "records": {}, "errors": {}, "unchanged": ["out"]},
    "unchanged not a list": {"values": {"out": 1}, "records": {}, "errors": {}, "unchanged": "out"},
    "changed_args never asked for": {"values": {"out": 1}, "records": {}, "errors": {}, "changed_args": {"out": [None]}},
    "printed never asked for": {"values": {"out": 1}, "records": {}, "errors": {}, "printed": {"out": "hi"}},
}


@pytest.mark.parametrize("reply", FORGED.values(), ids=FORGED.keys())
def test_a_forged_reply_fails_the_check_never_the_grader(zygote, reply):
    forger = f"""\
        import sys
        sys.modules["autograder.sandbox.child"].OPS["plan"] = lambda request: {reply!r}
        def ready():
            return True
        """
    s = session(zygote, {"forger": forger})
    try:
        assert s.plan([{"let": "ok", "call": "forger.ready", "return": True}]).values["ok"] is True
        with pytest.raises(StudentFailure, match="malformed answer|is not a mapping|sent garbage"):
            s.plan([{"let": "m", "call": MHA, "args": [4, 4, 3, 0.0, 2]},
                    {"let": "out", "call": "m", "args": [torch.rand(1, 3, 4)], "return": True}])
    finally:
        s.close()


def test_stand_ins_replace_submodules_with_the_graders_linear_maps(zygote, ref):
    """A module built on lower pieces runs with known linear maps in their place (before the
    parameters are copied in, drawing nothing); a name that is no submodule is the student's error."""
    x = torch.rand(2, 3, 4, generator=torch.Generator().manual_seed(2))
    weight, bias = torch.rand(4, 4, generator=torch.Generator().manual_seed(3)), torch.rand(4)
    torch.manual_seed(5)
    expected_module = ref.MultiHeadAttention(4, 4, 3, 0.0, 2)
    expected_module.out_proj = torch.nn.Linear(4, 4)
    with torch.no_grad():
        expected_module.out_proj.weight.copy_(weight)
        expected_module.out_proj.bias.copy_(bias)
        expected = expected_module.eval()(x)
    s = session(zygote, {"rng": "import torch\n\ndef draw():\n    return torch.rand(3)\n"})
    try:
        plan = s.plan([
            {"let": "m", "call": MHA, "args": [4, 4, 3, 0.0, 2], "seed": 5, "train": False,
             "stand_in": {"out_proj": {"weight": weight, "bias": bias}}},
            {"let": "out", "call": "m", "args": [x], "return": True},
            {"let": "after", "call": "rng.draw", "return": True},
            {"let": "bad", "call": MHA, "args": [4, 4, 3, 0.0, 2], "stand_in": {"nowhere": {"weight": weight}}},
        ])
        torch.manual_seed(5)
        ref.MultiHeadAttention(4, 4, 3, 0.0, 2)
        drawn = torch.rand(3)
    finally:
        s.close()
    assert torch.allclose(plan.values["out"], expected, atol=1e-6)
    assert torch.equal(plan.values["after"], drawn), "the swap draws no random numbers"
    with pytest.raises(StudentFailure, match="nowhere"):
        plan.values["bad"]


PROBED = {"probed": """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Identity()])
            self.drop = nn.Dropout(0.25)
            self.size = 3
            self.register_buffer("future", torch.triu(torch.ones(3, 3), diagonal=1))
            self.loose = torch.ones(2, 2)
            self.extra = nn.Parameter(torch.zeros(1))

        def forward(self, x):
            return x @ self.future



    def bump(t):
        t.add_(1)
        return t * 2


    def nothing():
        return None
"""}


def test_describe_parameters_and_unregistered_report_a_module_by_the_names_asked(zygote):
    s = session(zygote, PROBED)
    try:
        plan = s.plan([{"let": "m", "call": "probed.Net"},
                       {"let": "info", "describe": "m", "attrs": ["size", "drop", "drop.p", "blocks", "future", "none"],
                        "return": True},
                       {"let": "params", "parameters": "m", "return": True},
                       {"let": "plain", "unregistered": "m", "return": True}])
    finally:
        s.close()
    info = plan.values["info"]
    assert info["params"] == {"blocks.0.weight": [3, 3], "blocks.0.bias": [3], "extra": [1]}
    assert info["buffers"] == {"future": [[3, 3], "torch.float32"]} and info["tensors"] == {"loose": [2, 2]}
    attrs = info["attrs"]
    assert set(attrs) == {"size", "drop", "drop.p", "blocks", "future"}   # one it lacks is left out
    assert attrs["size"] == 3 and attrs["drop.p"] == 0.25
    assert attrs["drop"]["class"] == "Dropout" and "Dropout" in attrs["drop"]["torch"]
    assert attrs["blocks"]["items"] == ["Linear", "Identity"] and "ModuleList" in attrs["blocks"]["torch"]
    assert attrs["future"] == {"class": "Tensor", "shape": [3, 3], "dtype": "torch.float32"}
    assert sorted(plan.values["params"]) == ["blocks.0.bias", "blocks.0.weight", "extra"]
    assert torch.equal(plan.values["plain"]["loose"], torch.ones(2, 2))


def test_data_what_and_result_make_a_functions_answer_and_its_arguments_visible(zygote):
    x = torch.arange(3.0)
    s = session(zygote, PROBED)
    try:
        plan = s.plan([{"let": "x", "data": x},
                       {"let": "y", "call": "probed.bump", "args": [{"$ref": "x"}], "result": "bump()", "return": True},
                       {"let": "x_after", "attr": "x", "return": True},
                       {"let": "n", "call": "probed.nothing", "what": "nothing()", "result": "nothing()"},
                       {"let": "bad", "call": "probed.bump", "args": ["text"], "what": "bump('text')"}])
    finally:
        s.close()
    assert torch.equal(plan.values["y"], (x + 1) * 2) and torch.equal(plan.values["x_after"], x + 1)
    assert plan.errors["n"] == "nothing() returned NoneType, expected a tensor"
    assert plan.errors["bad"].startswith("bump('text') raised AttributeError")


def test_buffers_are_transposed(zygote):
    x = torch.rand(2, 3, generator=torch.Generator().manual_seed(3))
    s = session(zygote, PROBED)
    try:
        plan = s.plan([{"let": "m", "call": "probed.Net"},
                       {"let": "out", "call": "m", "args": [x], "transpose_buffers": "future", "return": True}])
    finally:
        s.close()
    future = torch.triu(torch.ones(3, 3), diagonal=1)
    assert torch.allclose(plan.values["out"], x @ future.T)


def test_params_keep_and_params_digest(zygote):
    from autograder.sandbox import protocol
    torch.manual_seed(5)
    linear = torch.nn.Linear(3, 3)
    drawn = {"blocks.0.weight": linear.weight.detach(), "blocks.0.bias": linear.bias.detach()}
    digests = {**{k: protocol.digest(v) for k, v in drawn.items()}, "extra": protocol.digest(torch.zeros(1))}
    s = session(zygote, PROBED)
    try:
        plan = s.plan([{"let": "strict", "call": "probed.Net", "params": drawn},
                       {"let": "kept", "call": "probed.Net", "params": drawn, "params_keep": ["extra"]},
                       {"let": "own", "call": "probed.Net", "seed": 5, "params_digest": digests},
                       {"let": "other", "call": "probed.Net", "seed": 6, "params_digest": digests}])
    finally:
        s.close()
    assert "extra ['extra']" in plan.errors["strict"] and "kept" not in plan.errors
    assert "own" not in plan.errors and plan.errors["other"].startswith(protocol.PARAMS_DIFFER)


BUMPER = {"bumper": """\
    import torch

    def bump(x):
        x.add_(1)
        return x * 2

    def keep(x):
        return x * 2
    """}


PRINTER = {"printer": """\
    import sys
    def say(n):
        print("line", n)
        print("x" * n, end="")
        return n
    def flood():
        for _ in range(100):
            sys.stdout.write("y" * 10_000)
    """}


def test_printed_is_what_a_call_wrote_to_stdout_bounded(zygote):
    from autograder.sandbox.protocol import PLAN_STRING
    s = session(zygote, PRINTER)
    try:
        plan = s.plan([{"let": "a", "call": "printer.say", "args": [3], "printed": True, "return": True},
                       {"let": "b", "call": "printer.say", "args": [1], "return": True},   # not asked: not kept
                       {"let": "c", "call": "printer.flood", "printed": True},
                       {"let": "d", "call": "printer.missing", "printed": True}])
    finally:
        s.close()
    assert plan.printed["a"] == "line 3\nxxx" and plan.values["a"] == 3
    assert "b" not in plan.printed
    assert plan.printed["c"] == "y" * PLAN_STRING          # the first PLAN_STRING characters of a million
    with pytest.raises(StudentFailure, match="defines no missing"):
        plan.printed["d"]


def test_an_argument_comes_back_only_where_the_call_changed_it(zygote):
    x, y = torch.arange(3.0), torch.tensor([float("nan"), 1.0])
    s = session(zygote, BUMPER)
    try:
        plan = s.plan([{"let": "x", "data": x}, {"let": "y", "data": y},
                       {"let": "bumped", "call": "bumper.bump", "args": [{"$ref": "x"}], "return": True},
                       {"let": "kept", "call": "bumper.keep", "args": [{"$ref": "y"}], "return": True},
                       {"let": "x_after", "attr": "x", "return": True, "changed_from": "x"},
                       {"let": "y_after", "attr": "y", "return": True, "changed_from": "y"}])
    finally:
        s.close()
    assert plan.unchanged == {"y_after"}
    assert plan.values["y_after"] is y                       # the grader's own tensor, not a copy from the child
    assert torch.equal(plan.values["x_after"], x + 1) and plan.values["x_after"] is not x
    assert torch.equal(plan.values["bumped"], (x + 1) * 2)


def test_a_call_sends_back_only_the_arguments_it_changed(zygote):
    x, y = torch.arange(3.0), torch.tensor([float("nan"), 1.0])
    s = session(zygote, BUMPER)
    try:
        plan = s.plan([{"let": "bumped", "call": "bumper.bump", "args": [x], "return": True, "changed_args": True},
                       {"let": "kept", "call": "bumper.keep", "args": [y], "return": True, "changed_args": True},
                       {"let": "text", "call": "bumper.keep", "args": ["ab"], "return": True, "changed_args": True},
                       {"let": "bad", "call": "bumper.bump", "args": ["ab"], "changed_args": True}])
    finally:
        s.close()
    assert torch.equal(plan.changed_args["bumped"][0], x + 1) and torch.equal(plan.values["bumped"], (x + 1) * 2)
    assert plan.changed_args["kept"] == [None] and plan.changed_args["text"] == [None]  # NaN is itself
    assert plan.values["text"] == "abab"
    with pytest.raises(StudentFailure, match="AttributeError"):  # a call that failed changed nothing
        plan.changed_args["bad"]


@pytest.mark.parametrize("step, why", [
    ({"let": "a", "attr": "x", "changed_from": "x"}, "goes with `return`"),
    ({"let": "a", "attr": "x", "changed_args": True}, "goes with `call`"),
    ({"let": "a", "attr": "x", "return": True, "changed_from": "nope"}, "names an earlier `data`"),
    ({"let": "a", "attr": "x", "return": True, "changed_from": "n"}, "holding one tensor"),
])
def test_changed_from_names_an_earlier_tensor_sent_as_data(zygote, step, why):
    s = session(zygote)
    with pytest.raises(ValueError, match=why):
        s.plan([{"let": "x", "data": torch.ones(2)}, {"let": "n", "data": [1, 2]}, step])
    assert s.pid is None


# A hostile child answers "unchanged" for what it likes: for a step the grader never allowed it,
# the reply is malformed; where it is allowed, the grader reads back its own tensor, which the
# child was sent and so could have sent back anyway.
LIAR = """\
    import sys
    import torch
    sys.modules["autograder.sandbox.child"].OPS["plan"] = lambda request: {
        "values": {}, "records": {}, "errors": {}, "unchanged": [s["let"] for s in request["steps"] if s.get("return")]}

    def ready():
        return True
    """


def test_a_child_claiming_unchanged_gets_back_only_what_it_was_sent(zygote):
    x = torch.arange(3.0)
    s = session(zygote, {"liar": LIAR})
    try:
        assert s.plan([{"let": "ok", "call": "liar.ready", "return": True}]).values["ok"] is True
        plan = s.plan([{"let": "x", "data": x}, {"let": "x_after", "attr": "x", "return": True, "changed_from": "x"}])
        assert plan.values["x_after"] is x
        with pytest.raises(StudentFailure, match="malformed answer"):  # an answer it never sent
            s.plan([{"let": "x", "data": x}, {"let": "out", "call": "liar.ready", "args": [{"$ref": "x"}],
                                               "return": True}])
    finally:
        s.close()


TOY = """\
    import torch

    class Toy(torch.nn.Module):
        def __init__(self, d):
            super().__init__()
            self.proj = torch.nn.Linear(d, d)

        def forward(self, x):
            if x.shape[0] == 5:
                while True:
                    pass
            if x.shape[0] == 4:
                return x @ torch.ones(7, 7)
            return self.proj(x)
    """


def _toy_probes(rows):
    return [("toy", "Toy", (3,), dict(inputs=[torch.ones(n, 3)], init_seed=1)) for n in rows]


def test_a_loop_of_module_probes_answers_as_one_probe_each_in_two_round_trips(zygote):
    from autograder.grading import probes
    s = StudentSession(zygote, {"toy": textwrap.dedent(TOY)}, timeout=1.0)
    sent = []
    request = s._request
    s._request = lambda steps, **kw: sent.append(len(steps)) or request(steps, **kw)
    try:
        alone = [next(probes.modules(s, _toy_probes([n]))) for n in (2, 4, 3)]
        sent.clear()
        replies = list(probes.modules(s, _toy_probes([2, 4, 3])))
        assert sent == [3, 6]   # the first alone, as a loop's first check; the rest together
        for one, batched in zip(alone, replies):
            if isinstance(one, StudentFailure):
                assert type(batched) is StudentFailure and str(batched) == str(one)
            else:
                assert torch.equal(batched["outputs"][0], one["outputs"][0]) and batched["info"] == one["info"]
        assert "mat1 and mat2 shapes cannot be multiplied" in str(replies[1])
        fault = s.faults[-1]   # the shapes explained for it are its own probe's: its steps alone
        assert [step["let"] for step in fault.steps] == ["m_1", "out0_1"] and fault.where.line == 13

        # A loop that stops at its second check never runs the probe that hangs on its own: the
        # probes run together did, but that costs the submission no budget and breaks nothing.
        sent.clear()
        budget = s.deadline - time.monotonic()
        loop = probes.modules(s, _toy_probes([2, 3, 5]))
        assert not isinstance(next(loop), StudentFailure)
        assert not isinstance(next(loop), StudentFailure)
        assert sent == [3, 6, 3] and s.broken == {} and s.deaths == {}
        assert s.deadline - time.monotonic() > budget - 0.5
        assert "did not finish within 1 s of CPU time" in str(next(loop))   # read: it runs alone, as a check would
        [why] = s.broken.values()
        assert list(s.broken) == ["toy.Toy.forward"] and why.endswith("an infinite loop?)")
    finally:
        s.close()


def test_reload_loads_the_graders_weights_before_each_later_call(zygote):
    """``reload`` copies the grader's parameters in before a module's 2nd, 3rd ... call during a
    step, whether the student's code calls it as ``m(x)`` or ``m.forward(x)``; None leaves the
    weights as they are; after the step the module is called as before."""
    s = session(zygote, {"loop": """
        import torch

        class Scale(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.ones(1))

            def forward(self, x):
                return x * self.w

        def three_calls(m, x):
            return torch.stack([m(x), m.forward(x), m(x)])
    """})
    x = torch.ones(1)
    try:
        plan = s.plan([
            {"let": "m", "call": "loop.Scale"},
            {"let": "out", "call": "loop.three_calls", "args": [{"$ref": "m"}, x], "return": True,
             "reload": {"m": [{"w": torch.tensor([2.0])}, None]}},
            {"let": "after", "call": "m", "args": [x], "return": True},
            {"let": "again", "call": "loop.three_calls", "args": [{"$ref": "m"}, x], "return": True},
        ])
    finally:
        s.close()
    assert plan.values["out"].flatten().tolist() == [1.0, 2.0, 2.0]
    assert plan.values["after"].tolist() == [2.0]
    assert plan.values["again"].flatten().tolist() == [2.0, 2.0, 2.0], "no reload once its step is over"


HOG = "import torch\nkept = []\ndef grow(mib):\n    kept.append(torch.ones(mib << 18))\n    return len(kept)\n"


def test_a_plan_with_memory_runs_in_a_child_of_its_own_held_to_it_by_the_kernel(zygote):
    """``memory``: the plan runs in a fresh child whose address space the kernel lets grow by at most
    that much; past it a step fails; the session's own child (and what it holds) serves the next plan."""
    s = StudentSession(zygote, {"hog": HOG})
    try:
        assert s.plan([{"let": "n", "call": "hog.grow", "args": [1], "return": True}]).values["n"] == 1
        own = s.pid
        assert s.plan([{"let": "n", "call": "hog.grow", "args": [8], "return": True}], memory=64 << 20).values["n"] == 1
        grows = s.plan([{"let": f"g{i}", "call": "hog.grow", "args": [16]} for i in range(8)], memory=64 << 20)
        assert not grows.failed("g0") and "allocate memory" in grows.failed("g7")
        assert s.pid == own and s.plan([{"let": "n", "call": "hog.grow", "args": [1], "return": True}]).values["n"] == 2
        with pytest.raises(ValueError, match="memory"):
            s.plan([{"let": "n", "call": "hog.grow", "args": [1]}], memory=0)
    finally:
        s.close()


LOWER = """
import torch


def double(x):
    return x * 2


def twice(x):
    return double(x) + 0
"""
HIGHER = """
import lower
from lower import double


def uses_both(x):
    return double(x), lower.double(x)


def save(x, path):
    torch_ = __import__("torch")
    torch_.save({"x": x}, path)
"""
STAND_IN = """
def triple(x):
    return x * 3
"""


def test_replace_hands_a_call_the_graders_stand_in_by_name_and_puts_it_back(zygote):
    """``replace``: each name (the module's own import and the lower module's attribute alike) is the
    stand-in's during the call only; a module the submission lacks is left out."""
    s = StudentSession(zygote, {"lower": LOWER, "higher": HIGHER, "grader": STAND_IN})
    x = torch.tensor([1.0, 2.0])
    try:
        plan = s.plan([{"let": "a", "call": "higher.uses_both", "args": [x], "return": True,
                        "replace": {"higher.double": "grader.triple", "lower.double": "grader.triple",
                                    "absent.double": "grader.triple"}},
                       {"let": "b", "call": "higher.uses_both", "args": [x], "return": True}])
        assert all(torch.equal(v, x * 3) for v in plan.values["a"]), plan.values["a"]
        assert all(torch.equal(v, x * 2) for v in plan.values["b"]), plan.values["b"]
        with pytest.raises(ValueError, match="replace"):
            s.plan([{"let": "a", "call": "higher.uses_both", "args": [x], "replace": {"double": "grader.triple"}}])
    finally:
        s.close()


def test_files_travel_as_bytes_and_a_clean_child_has_torch_but_never_the_submission(zygote):
    """``read_file`` sends a file's bytes back (``remove``: and removes it), ``write_file`` writes the
    grader's; a ``clean`` plan runs in a fresh child that never got the submission: torch's own
    ``torch.load`` there, and none of the submission's modules."""
    s = StudentSession(zygote, {"lower": LOWER, "higher": HIGHER})
    path = f"/tmp/plan-test-{time.monotonic_ns()}.pth"
    x = torch.arange(5.0)
    try:
        plan = s.plan([{"let": "save", "call": "higher.save", "args": [x, path]},
                       {"let": "file", "read_file": path, "remove": True, "return": True},
                       {"let": "again", "read_file": path}])
        data = plan.values["file"]
        assert data.dtype == torch.uint8 and data.dim() == 1 and len(data) > 100
        assert "FileNotFoundError" in plan.failed("again")
        there = f"/tmp/plan-test-clean-{time.monotonic_ns()}.pth"
        clean = s.plan([{"let": "w", "write_file": there, "bytes": data},
                        {"let": "ck", "call": "torch.load", "args": [there], "kwargs": {"weights_only": True},
                         "return": True},
                        {"let": "gone", "read_file": there, "remove": True},
                        {"let": "f", "data": data}, {"let": "buf", "buffer": {"$ref": "f"}},
                        {"let": "ck2", "call": "torch.load", "args": [{"$ref": "buf"}], "kwargs": {"weights_only": True},
                         "return": True},
                        {"let": "theirs", "call": "higher.uses_both", "args": [x]}], clean=True)
        assert torch.equal(clean.values["ck"]["x"], x) and torch.equal(clean.values["ck2"]["x"], x)
        assert "higher" in clean.failed("theirs")
        with pytest.raises(ValueError, match="bytes"):
            s.plan([{"let": "w", "write_file": there}])
    finally:
        s.close()
