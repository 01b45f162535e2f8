"""An exception from the student's code is explained by shapes: which of their tensors had which
shape at the failing line, and what the book's code has there (grading/shapes.py).

The child reports the innermost frame of the submission's code (names, a line number, shapes);
the grader checks that report as data, reads the line from the sources it holds, runs the same
steps on the reference and names only what differs; where nothing does, it lists and stops."""
import re
import textwrap
import time

import pytest
import torch

from autograder.grading import shapes
from autograder.grading.runner import Grader
from autograder.sandbox.session import Fault, StudentFailure, StudentSession, Where, read_where
from autograder.sandbox.zygote import Zygote
from banks import reference_sources, stub_sources

EDITS = {
    # the heads joined with torch.cat along the tokens: out_proj then cannot multiply
    "cat on the wrong dim": ("ch03_attention", "multihead_attention.py",
                             "context_vec = (attn_weights @ values).transpose(1, 2)\n"
                             "        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
                             "context_vec = torch.cat((attn_weights @ values).unbind(1), dim=1)"),
    "view without transpose": ("ch03_attention", "multihead_attention.py",
                               "keys = keys.transpose(1, 2)\n        queries = queries.transpose(1, 2)\n"
                               "        values = values.transpose(1, 2)\n", ""),
    "matmul in ch04": ("ch04_gpt", "gpt_model.py", "return self.out_head(x)", "return x @ self.out_head.weight"),
    "cat in a loop": ("ch04_gpt", "generate.py", "idx = torch.cat((idx, idx_next), dim=1)",
                      "idx = torch.cat((idx, idx_next), dim=0)"),
}


@pytest.fixture(scope="module")
def grade(tmp_path_factory):
    """grade(assignment, sources) -> the failed checks' outputs, the result."""
    with Grader() as grader:
        def run(assignment, sources):
            folder = tmp_path_factory.mktemp("submission") / assignment
            folder.mkdir()
            for name, text in sources.items():
                (folder / name).write_text(text)
            result = grader.grade(folder, assignment)
            return [t["output"] for t in result["tests"] if t["status"] != "passed"], result
        yield run


def edited(key):
    assignment, module, old, new = EDITS[key]
    sources = reference_sources(assignment)
    assert sources[module].count(old) == 1
    sources[module] = sources[module].replace(old, new)
    return assignment, sources


SHAPE = r"\((\d+), (\d+), (\d+)\)"


def test_torch_cat_on_the_wrong_dim_names_the_tensor_and_the_books_shape(grade):
    assignment, sources = edited("cat on the wrong dim")
    outputs, _ = grade(assignment, sources)
    said = [o for o in outputs if "In your `MultiHeadAttention.forward`" in o]
    assert said, outputs
    source = sources["multihead_attention.py"].splitlines()
    line = 1 + next(i for i, text in enumerate(source) if text.strip() == "return self.out_proj(context_vec)")
    for output in said:
        assert f"line {line}: `return self.out_proj(context_vec)`)" in output
        found = re.search(rf"your `context_vec` has shape {SHAPE} where the book's code has shape {SHAPE}", output)
        b, heads_times_tokens, head_dim, *book = map(int, found.groups())
        assert book[0] == b and heads_times_tokens * head_dim == book[1] * book[2] and heads_times_tokens > book[1]
        assert f"The book's `MultiHeadAttention.forward` returns a tensor of shape ({b}, {book[1]}, {book[2]})" \
            in output
        # the tensors that are as the book's are not named as different
        assert not re.search(r"your `(keys|queries|values|attn_weights|x)` has shape", output)


def test_a_view_without_the_transpose_names_the_heads_shapes_beside_the_books(grade):
    outputs, _ = grade(*edited("view without transpose"))
    said = [o for o in outputs if "In your `MultiHeadAttention.forward`" in o]
    assert said, outputs
    for output in said:
        assert "`attn_scores.masked_fill_(mask_bool, -torch.inf)`" in output
        for name in ("keys", "queries", "values"):  # yours (b, tokens, heads, d), the book's (b, heads, tokens, d)
            assert re.search(rf"your `{name}` has shape \((\d+), (\d+), (\d+), (\d+)\) where the book's code has "
                             r"shape \(\1, \3, \2, \4\)", output), output


def test_a_matmul_that_cannot_multiply_in_ch04_lists_the_tensors_and_what_the_book_returns(grade):
    outputs, _ = grade(*edited("matmul in ch04"))
    # generate's checks run the same GPTModel (with the grader's stand-ins): its call, not the book's, is theirs
    said = [o for o in outputs if "In your `GPTModel.forward`" in o and not o.startswith("generate.")]
    assert said, outputs
    for output in said:
        batch, tokens, emb = map(int, re.search(rf"`x` {SHAPE}", output).groups())
        assert f"`in_idx` ({batch}, {tokens})" in output and f"`pos_embeds` ({tokens}, {emb})" in output
        vocab = int(re.search(r"mat2 shapes cannot be multiplied \(\d+x\d+ and (\d+)x\d+\)", output).group(1))
        assert f"The book's `GPTModel.forward` returns a tensor of shape ({batch}, {tokens}, {vocab}) there." in output
        assert "where the book's code has" not in output  # every tensor of theirs is as the book's


def test_a_line_in_a_loop_lists_the_tensors_and_claims_nothing_of_the_book(grade):
    outputs, _ = grade(*edited("cat in a loop"))
    said = [o for o in outputs if "In your `generate_text_simple`" in o]
    assert said, outputs
    for output in said:
        batch, tokens = map(int, re.search(r"`idx` \((\d+), (\d+)\)", output).groups())
        assert f"`idx_next` ({batch}, 1)" in output
        assert "the book's" not in output  # idx changes in the loop: no step of the book's to compare with


def test_a_renamed_tensor_whose_successors_are_the_books_is_not_blamed(grade):
    """The bonus notebook's combined class keeps the permuted qkv under the name qkv (the book's code holds
    the unpermuted one there) and merges the heads with view(b, num_tokens, embed_dim), x's width: the
    queries, keys and values made from its qkv are the book's, so qkv is not named; the merge's own line is
    shown with the values it is given (the book's (2, 7, 8)) beside the shape it asks for."""
    from banks import load, mutated_sources
    mutant = next(m for m in load("efficient_attention", "mutants").MUTANTS if "bonus notebook's view" in m.name)
    outputs, _ = grade("efficient_attention", mutated_sources("efficient_attention", mutant))
    said = [o for o in outputs if "In your `MultiHeadAttentionCombinedQKV.forward`" in o]
    assert said, outputs
    for output in said:
        assert "`context_vec = context_vec.contiguous().view(b, num_tokens, embed_dim)`" in output
        assert "where the book's code has" not in output, output  # no tensor of theirs blamed
        assert ("The tensor your line reshapes holds 112 values, as the book's (2, 7, 8) does; your line asks for "
                "(2, 7, 6): size 6 in dimension 2, where the book's is 8.") in output, output


def test_what_a_tensor_makes_and_what_a_view_asks_are_read_from_the_evidence():
    source = ("def f(x):\n    qkv = x.view(2, 3)\n    qkv = qkv.permute(1, 0)\n    q, k = qkv\n    s = q + k\n"
              "    y = s.view(5)\n    return y\n")
    # the successors of each one's last value before the failing line 6: qkv's (line 3) made q and k (line 4),
    # not the qkv of line 3 itself, which read the one before; x, an argument, made the first qkv
    assert shapes._made_from(source, "f", 6, ["qkv", "q", "x"]) == {"qkv": ["q", "k"], "q": ["s"], "x": ["qkv"]}
    asked = shapes._asked("RuntimeError: shape '[2, 7, 6]' is invalid for input of size 112", (2, 7, 8))
    assert "holds 112 values, as the book's (2, 7, 8) does" in asked and "size 6 in dimension 2" in asked
    # silent where the values are not the book's, two sizes differ, or the book's shape is unknown
    assert shapes._asked("shape '[2, 7, 6]' is invalid for input of size 100", (2, 7, 8)) == ""
    assert shapes._asked("shape '[2, 6, 6]' is invalid for input of size 112", (2, 7, 8)) == ""
    assert shapes._asked("shape '[2, 7, 6]' is invalid for input of size 112", None) == ""


@pytest.mark.parametrize("assignment", ["ch03_attention", "ch04_gpt"])
def test_correct_and_blank_submissions_get_no_shape_sentence(grade, assignment):
    outputs, result = grade(assignment, reference_sources(assignment))
    assert result["score"] == result["max_score"] and not outputs
    outputs, result = grade(assignment, stub_sources(assignment))
    assert outputs and not any("In your `" in o for o in outputs)  # NotImplementedError: not written yet


# -- the child's report is untrusted data -----------------------------------------------------------
SOURCES = {"mine": "import torch\n\ndef f(x):\n    y = x @ x\n    return y\n"}
GOOD = {"module": "mine", "function": "f", "line": 4, "tensors": {"x": [2, 3], "ys": [[2], [3, 1]]}}


def test_a_well_formed_report_is_read_as_names_numbers_and_shapes():
    assert read_where(GOOD, SOURCES) == Where("mine", "f", 4, (("x", (2, 3)), ("ys", ((2,), (3, 1)))))


@pytest.mark.parametrize("forged", [
    {**GOOD, "module": "solutions"},                          # not a module of the submission
    {**GOOD, "module": "../mine"},
    {**GOOD, "function": "f<script>alert(1)</script>"},       # markup
    {**GOOD, "function": "f`) **you pass**"},
    {**GOOD, "line": 99},                                     # beyond the file
    {**GOOD, "line": True},
    {**GOOD, "tensors": {"<b>x</b>": [2]}},
    {**GOOD, "tensors": {"x": [2.5]}},
    {**GOOD, "tensors": {"x": [-1]}},
    {**GOOD, "tensors": {"x": "(2, 3)"}},
    {**GOOD, "tensors": {"x": [1] * 100}},                    # over the caps
    {**GOOD, "tensors": {f"t{i}": [1] for i in range(100)}},
    {**GOOD, "tensors": {"x": [[1]] * 100}},
    {**GOOD, "extra": 1},
    [1, 2],
])
def test_a_forged_report_is_dropped(forged):
    assert read_where(forged, SOURCES) is None


@pytest.fixture(scope="module")
def zygote():
    z = Zygote()
    yield z
    z.close()


def test_a_forged_report_on_the_channel_keeps_the_error_and_drops_the_shapes(zygote):
    """A submission that rewrites the child's reply: the step's error still reaches the student,
    the forged report does not; the child's own report of the same error is kept (the test bites)."""
    forger = textwrap.dedent("""\
        import sys
        import torch
        child = sys.modules["autograder.sandbox.child"]
        own = child.OPS["plan"]

        def forged(request):
            reply = own(request)
            for name in reply["errors"]:
                reply.setdefault("wheres", {})[name] = {"module": "mine", "function": "f<b>", "line": 4,
                                                        "tensors": {"x": [2, 3]}}
            return reply

        def ready(forge):
            if forge:
                child.OPS["plan"] = forged
            return True

        def f(x):
            y = x @ x
            return y
        """)
    s = StudentSession(zygote, {"mine": forger})
    try:
        steps = [{"let": "out", "call": "mine.f", "args": [torch.ones(2, 3)], "return": True}]
        plan = s.plan(steps)
        with pytest.raises(StudentFailure, match="mat1 and mat2 shapes cannot be multiplied"):
            plan.values["out"]
        assert [f.where for f in s.faults] == [Where("mine", "f", 19, (("x", (2, 3)),))]
        s.faults.clear()
        assert s.plan([{"let": "ok", "call": "mine.ready", "args": [True], "return": True}]).values["ok"]
        plan = s.plan(steps)
        with pytest.raises(StudentFailure, match="mat1 and mat2 shapes cannot be multiplied"):
            plan.values["out"]
        assert s.faults == []
    finally:
        s.close()


def test_the_books_shapes_come_from_the_failing_call_not_an_earlier_one(zygote):
    """The first call (one sequence of two tokens, as many as heads) passes even without the
    transpose; the second fails: the book's shapes are those of the second call."""
    _, sources = edited("view without transpose")
    s = StudentSession(zygote, {name.removesuffix(".py"): text for name, text in sources.items()})
    try:
        plan = s.plan([{"let": "m", "call": "multihead_attention.MultiHeadAttention", "args": [4, 4, 6, 0.0, 2],
                        "seed": 1},
                       {"let": "out0", "call": "m", "args": [torch.ones(1, 2, 4)], "return": True},
                       {"let": "out1", "call": "m", "args": [torch.ones(2, 6, 4)], "return": True}])
        assert plan.failed("out0") is None
        said = shapes.explain(s.fault(plan.failed("out1")), s.sources, "ch03_attention")
    finally:
        s.close()
    assert "your `keys` has shape (2, 6, 2, 2) where the book's code has shape (2, 2, 6, 2)" in said, said


def test_a_shape_the_book_changes_from_call_to_call_in_the_step_is_not_claimed(zygote):
    """generate calls the model on 4, then 5 tokens; the student's model fails on the second call
    (positions for 4 tokens, always). The book's tok_embeds has 4 tokens in its first call, 5 in
    its second: which call failed is unknown, so no shape of it is claimed as the book's."""
    sources = reference_sources("ch04_gpt")
    sources["gpt_model.py"] = sources["gpt_model.py"].replace(
        "torch.arange(seq_len, device=in_idx.device)", "torch.arange(4, device=in_idx.device)")
    cfg = {"vocab_size": 11, "context_length": 8, "emb_dim": 4, "n_heads": 2, "n_layers": 1, "drop_rate": 0.0,
           "qkv_bias": False}
    s = StudentSession(zygote, {name.removesuffix(".py"): text for name, text in sources.items()})
    try:
        plan = s.plan([{"let": "m", "call": "gpt_model.GPTModel", "args": [cfg], "seed": 1, "train": False},
                       {"let": "out", "call": "generate.generate_text_simple", "args": [
                           {"$ref": "m"}, torch.zeros(2, 4, dtype=torch.long), 2, 8], "return": True}])
        said = shapes.explain(s.fault(plan.failed("out")), s.sources, "ch04_gpt")
    finally:
        s.close()
    assert "In your `GPTModel.forward`" in said and "`tok_embeds` (2, 5, 4)" in said, said
    assert "the book's" not in said, said


def test_an_error_inside_a_comprehension_is_placed_at_its_functions_line(zygote):
    source = "import torch\n\ndef h(x):\n    w = torch.ones(4, 4)\n    return [t @ w for t in (x, x)]\n"
    s = StudentSession(zygote, {"mine": source})
    try:
        plan = s.plan([{"let": "out", "call": "mine.h", "args": [torch.ones(2, 3)], "return": True}])
        assert "mat1 and mat2 shapes cannot be multiplied" in plan.failed("out")
        assert [f.where for f in s.faults] == [Where("mine", "h", 5, (("x", (2, 3)), ("w", (4, 4))))]
    finally:
        s.close()


def test_the_students_line_is_shown_from_their_source_whatever_backticks_it_holds():
    source = "import torch\n\ndef f(x):\n    y = x @ x  # `oops` <b>not markup</b>\n    return y\n"
    fault = Fault("error", Where("mine", "f", 4, (("x", (2, 3)),)), ())
    said = shapes.explain(fault, {"mine": source}, "ch03_attention")
    assert said == ("In your `f` (mine.py line 4: `` y = x @ x  # `oops` <b>not markup</b> ``), your tensors "
                    "had these shapes: `x` (2, 3).")


# -- a forged where costs the grader bounded work ----------------------------------------------
def _generated(loops, names):
    """A module whose ``f`` is ``loops`` nested loops around a list of ``names`` names, then the
    line that fails: what a generator writes to make every walk of ``f`` cost loops x names."""
    lines = ["import torch", "", "def f(x):", *(" " * (d + 1) + f"for i{d} in x:" for d in range(loops)),
             " " * (loops + 1) + "y = [" + ",".join(["x"] * names) + "]",
             " " * (loops + 1) + "z = x @ x", " return z"]
    return "\n".join(lines) + "\n", loops + 5


def test_a_forged_where_into_a_huge_function_walks_a_bounded_number_of_nodes(monkeypatch):
    """The child names the function and line; a submission can point them into a generated
    function (before: every loop around the line walked again, 10 s a check for 240 KiB). The
    walk stops at the bound, the tensors are still listed, and the feedback says why no
    comparison with the book follows."""
    source, line = _generated(98, 2 * shapes.MAX_FUNCTION_NODES)
    assert len(source) <= shapes.MAX_SOURCE_CHARS   # the function's bound is the one that holds
    walked = []
    walk = shapes.ast.walk

    def counted(node):
        for n in walk(node):
            walked.append(n)
            yield n
    monkeypatch.setattr(shapes.ast, "walk", counted)
    fault = Fault("error", Where("mine", "f", line, (("x", (2, 3)), ("y", (3,)))), ())
    started = time.process_time()
    said = shapes.explain(fault, {"mine": source}, "ch03_attention")
    seconds = time.process_time() - started
    assert len(walked) <= shapes.MAX_FUNCTION_NODES + 1, len(walked)
    assert said == (f"In your `f` (mine.py line {line}: `z = x @ x`), your tensors had these shapes: `x` (2, 3), "
                    f"`y` (3,). The grader did not compare them with the book's code: `f` is too large to analyse "
                    f"(over {shapes.MAX_FUNCTION_NODES:,} syntax nodes).")
    assert seconds < 5, seconds   # generous: parsing the module is most of it


def test_a_forged_where_into_a_file_over_the_bound_is_not_parsed(monkeypatch):
    """The 240 KiB module of the attack: not parsed at all, said so."""
    source, line = _generated(98, 120_000)
    assert len(source) > shapes.MAX_SOURCE_CHARS
    parsed = []
    monkeypatch.setattr(shapes.ast, "parse", lambda *args, **kwargs: parsed.append(args) or pytest.fail("parsed"))
    fault = Fault("error", Where("mine", "f", line, (("x", (2, 3)),)), ())
    said = shapes.explain(fault, {"mine": source}, "ch03_attention")
    assert not parsed
    assert said.endswith(f"your tensors had these shapes: `x` (2, 3). The grader did not compare them with the "
                         f"book's code: this file is too large to analyse ({len(source) >> 10} KiB; the bound is "
                         f"{shapes.MAX_SOURCE_CHARS >> 10} KiB)."), said


def test_names_assigned_in_any_loop_around_the_line_are_not_settled():
    """One walk of the outermost loop finds what every loop around the line assigns: ``w``,
    assigned in the outer loop only, has no last value at the line either."""
    source = ("def f(x):\n    for a in x:\n        w = a\n        for b in x:\n            y = b @ w\n"
              "    v = x\n    return y\n")
    assert shapes._statement(source, "f", 5, ["x", "w", "y", "v"]) == (["x"], None)


@pytest.mark.parametrize("bound, value, reason", [
    ("MAX_BOOK_CALLS", 1, "the book's `GPTModel.forward` returned more than 1 times in that step."),
    ("BOOK_SECONDS", 0.0, "replaying it took over 0 s of CPU."),
])
def test_the_replay_of_the_books_code_stops_being_watched_over_its_bound(zygote, monkeypatch, bound, value, reason):
    """generate calls the book's model twice in the failing step: over a bound of one recorded
    call (or no time at all), the replay is watched no further and no book shape is claimed."""
    sources = reference_sources("ch04_gpt")
    sources["gpt_model.py"] = sources["gpt_model.py"].replace(
        "torch.arange(seq_len, device=in_idx.device)", "torch.arange(4, device=in_idx.device)")
    cfg = {"vocab_size": 11, "context_length": 8, "emb_dim": 4, "n_heads": 2, "n_layers": 1, "drop_rate": 0.0,
           "qkv_bias": False}
    s = StudentSession(zygote, {name.removesuffix(".py"): text for name, text in sources.items()})
    try:
        plan = s.plan([{"let": "m", "call": "gpt_model.GPTModel", "args": [cfg], "seed": 1, "train": False},
                       {"let": "out", "call": "generate.generate_text_simple", "args": [
                           {"$ref": "m"}, torch.zeros(2, 4, dtype=torch.long), 2, 8], "return": True}])
        fault = s.fault(plan.failed("out"))
    finally:
        s.close()
    assert shapes.SKIPPED not in shapes.explain(fault, s.sources, "ch04_gpt")   # within the bounds
    monkeypatch.setattr(shapes, bound, value)
    said = shapes.explain(fault, s.sources, "ch04_gpt")
    assert "`tok_embeds` (2, 5, 4)" in said and said.endswith(shapes.SKIPPED + reason), said
