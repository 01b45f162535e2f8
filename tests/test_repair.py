"""The repair search (autograder/grading/repair.py): a verified one-edit repair of the student's own
code becomes the failed check's first sentence and its ``extra_data.repair``; it never changes a
score, a child's word is never a repair, and a correct submission pays nothing for it."""
import ast
import textwrap

import pytest

from autograder.grading import course, repair
from autograder.grading.runner import Grader
from banks import grade_sources, load, mutated_sources, reference_sources, stub_sources

ASSIGNMENT = "ch03_attention"
SOFTMAX_DIM = "attn_weights_from_scores: softmax over dim=0 instead of the last dim"


def test_candidates_name_the_edit_in_the_students_terms():
    source = textwrap.dedent("""\
        import torch


        def weights(scores):
            scaled = scores / scores.shape[-1] ** 0.5
            scaled = scaled - scaled.amax()
            return torch.softmax(scaled, dim=0)
        """)
    found = repair.candidates({"m": source}, ["m"], ["m.weights"])
    dims = [e for e in found if e.kind == "dimension"]
    assert dims and dims[0].line == 7 and found[0].kind == "dimension"  # the likeliest kind first
    fix = next(e for e in dims if e.new == "dim=-1")
    data = fix.data({"m": source})
    assert data == {"file": "m.py", "line": 7, "was": "return torch.softmax(scaled, dim=0)",
                    "now": "return torch.softmax(scaled, dim=-1)", "kind": "dimension",
                    "fix": "with `dim=-1` in place of `dim=0` in `torch.softmax(...)`", "last": 7}
    assert repair.sentence(data, "fix") == ("m.py line 7: with `dim=-1` in place of `dim=0` in "
                                            "`torch.softmax(...)` this check passes.")
    assert repair.sentence(data, "change") == "m.py line 7: a change of the dimension argument on this line " \
                                              "makes this check pass."
    assert "dim" not in repair.sentence(data, "line")
    kinds = {e.kind for e in found}
    assert {"operator", "constant", "removed", "order", "variable"} <= kinds, kinds
    # every candidate is one edit of this file that still parses, with a line inside it
    for e in found:
        compile(e.applied({"m": source})["m"], "m.py", "exec")
        assert 1 <= e.line <= source.count("\n")


def test_the_search_follows_a_model_into_the_submodules_its_class_built():
    """A check that called only the model's forward: its blocks' forward (``for block in
    self.blocks``) and their attention's (``self.att(x)``, a class imported from another file) are
    searched too, after the model's own lines; a class the model never builds is not."""
    attention = textwrap.dedent("""\
        class Attention:
            def forward(self, x):
                return x.softmax(dim=0)


        class Unused:
            def forward(self, x):
                return x * 3
        """)
    model = textwrap.dedent("""\
        import torch
        from attention import Attention


        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.att = Attention()

            def forward(self, x):
                return x + self.att(x)


        class Model(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.blocks = torch.nn.ModuleList([Block() for _ in range(n)])

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x * 2
        """)
    modules = {name: repair._parsed(name, text) for name, text in (("attention", attention), ("model", model))}
    found = [(m.name, f.name, tier) for m, f, tier in repair.targets(modules, ["model.Model"])]
    assert found[:2] == [("model", "forward", 0), ("model", "__init__", 0)], found
    assert ("model", "forward", 1) in found and ("attention", "forward", 1) in found, found
    assert found.index(("model", "forward", 1)) < found.index(("attention", "forward", 1))
    lines = [(e.module, e.line) for e in repair.candidates({"attention": attention, "model": model},
                                                            ["attention", "model"], ["model.Model"])]
    assert ("attention", 3) in lines and ("attention", 8) not in lines
    assert lines.index(("model", 21)) < lines.index(("attention", 3))


def test_an_edit_that_gives_a_line_of_the_reference_comes_first():
    """Where the student's line is not the reference's and one edit makes it so, that edit is tried
    first, before the likelier kinds; a line the student wrote as the reference did, between the
    reference's neighbours, comes after the lines it did not (an edit can only take it away), and
    the same line written a second time, elsewhere, does not."""
    source = textwrap.dedent("""\
        import torch


        def weights(scores, keys):
            scaled = scores / keys.shape[0] ** 0.5  # scale
            scaled = scaled - scaled.amax(dim=-1, keepdim=True)
            out = torch.softmax(scaled, dim=-1)
            return out
        """)
    reference = ["def weights(scores, keys):\n", "    scaled = scores / keys.shape[-1]**0.5\n",
                 "    scaled = scaled - scaled.amax(dim=-1, keepdim=True)\n", "    out = torch.softmax(scaled, dim=-1)\n",
                 "    return out\n"]
    known = {"m": repair.known_lines(reference)}
    plain = repair.candidates({"m": source}, ["m"], ["m.weights"])
    found = repair.candidates({"m": source}, ["m"], ["m.weights"], known=known)
    assert (found[0].line, found[0].new) == (5, "-1"), found[:3]
    lines = [e.line for e in found]  # the line the reference has too comes last, every edit of it
    assert max(i for i, line in enumerate(lines) if line == 5) < min(i for i, line in enumerate(lines) if line == 7)
    twice = source.replace("    return out\n", "    out = torch.softmax(scaled, dim=-1)\n    return out\n")
    def rank(text, line):
        edit = next(e for e in repair.candidates({"m": text}, ["m"], ["m.weights"]) if e.line == line)
        return repair._rank(edit, repair._parsed("m", text), known["m"])
    assert (rank(source, 7), rank(twice, 8), rank(twice, 7), rank(source, 5)) == (3, 2, 2, 1)
    # two statements in the reference's order: the swap that restores it first
    swapped = textwrap.dedent("""\
        import torch


        def weights(scores, keys):
            scaled = scaled / keys.shape[-1] ** 0.5
            scaled = scores
            return torch.softmax(scaled, dim=-1)
        """)
    order = repair.known_lines(["def weights(scores, keys):\n", "    scaled = scores\n",
                                "    scaled = scaled / keys.shape[-1] ** 0.5\n", "    return torch.softmax(scaled, dim=-1)\n"])
    first = repair.candidates({"m": swapped}, ["m"], ["m.weights"], known={"m": order})[0]
    assert first.kind == "order" and (first.first, first.last) == (5, 6), (swapped, first)
    assert plain[0].kind == "dimension" and plain[0].line == 7  # without it, the softmax's dim comes first
    assert sorted(map(repair.Edit.variant, found)) == sorted(map(repair.Edit.variant, plain))  # the same set
    assert repair._bare("x = f(a, 'b#c')  # note\n") == 'x=f(a,"b#c")' and repair._bare("y = 2  # n") == "y=2"
    assert {"m", "gpt_model", "multihead_attention"} & set(repair.reference_lines(course.get("ch04_gpt"))) \
        == {"gpt_model", "multihead_attention"}


def test_the_newer_edits_are_candidates_and_unused_values_come_first():
    source = textwrap.dedent("""\
        import torch
        from torch import nn


        def softmax(x):
            return torch.exp(x) / torch.exp(x.sum(dim=0))


        class Attention(nn.Module):
            def __init__(self, d, p):
                super().__init__()
                self.W_key, self.W_value = nn.Linear(d, d), nn.Linear(d, d)
                self.dropout = nn.Dropout(1 - p)

            def forward(self, q, x):
                keys = self.W_key(x)
                values = x
                scores = q.transpose(1, 2) @ keys
                return self.dropout(softmax(scores)) @ values
        """)
    fixes = {(e.line, e.new) for e in repair.candidates({"m": source}, ["m"], ["m.softmax", "m.Attention"])}
    assert {(6, "torch.exp(x).sum(dim=0)"), (13, "p"), (18, "q @ keys.transpose(1, 2)"),
            (17, "self.W_value(x)")} <= fixes, fixes
    # a value computed and never read: the edit that reads it comes before every other kind
    unread = source.replace("scores = q.transpose(1, 2) @ keys", "scores = q @ x.transpose(1, 2)")
    first = repair.candidates({"m": unread}, ["m"], ["m.Attention"])[0]
    assert (first.kind, first.new) in {("added", "self.W_value(x)"), ("variable", "keys")}, first
    # where the check raised, the lines whose values reach the raising line come first
    raised = repair.candidates({"m": source}, ["m"], ["m.Attention"], ("m", "Attention.forward", 18))
    lines = [e.line for e in raised]
    assert lines[0] == 18 and set(lines[:lines.index(16)]) == {18} and 17 not in lines[:lines.index(12)], lines


def test_a_sequences_order_a_negation_a_decimal_slip_and_a_fill_are_edits():
    source = textwrap.dedent("""\
        import torch


        def step(idx, logits, mask, near):
            idx_next = torch.argmax(logits[:, -1], dim=-1)
            scores = logits.masked_fill(~mask, -torch.inf)
            both = mask & near
            return torch.cat((idx_next, idx), dim=1), scores, both
        """)
    fixes = {(e.kind, e.line, e.new) for e in repair.candidates({"m": source}, ["m"], ["m.step"])}
    assert {("constant", 5, "torch.argmax(logits[:, -1], dim=-1, keepdim=True)"),  # argmax keeps its dim
            ("sign", 6, "mask"),                                 # the mask's `~` removed
            ("operator", 7, "mask | near"),                      # `&` for `|`
            ("arguments", 8, "(idx, idx_next)")} <= fixes, fixes  # the old tokens first, then the new one
    source = textwrap.dedent("""\
        import torch


        def norm(x, shortcut, use):
            scale = torch.zeros(x.shape[-1])
            if use and shortcut is not None and min(x.shape[0], 4) > 1:
                x = x + shortcut
            return scale * x / torch.sqrt(x.var(dim=-1) + 1e-6) + 0.44715 * x ** 0.5


        def layer_norm(x, mean, var, eps):
            return (x - mean) / torch.sqrt(var) + eps
        """)
    fixes = {(e.kind, e.line, e.new) for e in repair.candidates({"m": source}, ["m"], ["m.norm", "m.layer_norm"])}
    assert {("constant", 5, "torch.ones"),                     # initialised to ones, not zeros
            ("operator", 6, "use or shortcut is not None or min(x.shape[0], 4) > 1"),  # `and` for `or`
            ("operator", 6, "min(x.shape[0], 4) >= 1"), ("operator", 6, "max"),  # `>` for `>=`, max for min
            ("constant", 8, "1e-05"), ("constant", 8, "0.044715"),  # a decimal slip
            ("placement", 12, "(x - mean) / torch.sqrt(var + eps)")} <= fixes, fixes  # eps inside the root
    assert ("constant", 8, "5.0") not in fixes  # an exponent has edits of its own (-c, 1/c, 2c, c/2)


def test_einsum_axes_a_transpose_before_a_merge_and_a_forgotten_call_are_edits():
    """Two letters of an einsum operand swapped (``ed`` for ``de``), the heads merged without the
    transpose back (``.transpose(1, 2)`` before a reshape, not where one is already), a method
    named on a line of its own instead of called; another key the function reads (``source['b']``),
    ``sorted`` for ``list``, a bound of 0.0 for 1.0; an integer factor doubled, halved, off by one or
    dropped; two ``**`` entries of a dict in the other order."""
    source = textwrap.dedent("""\
        import torch


        def forward(self, x, w, b, n):
            q = torch.einsum("bnd,ed->bne", x, w)
            out = q.view(b, n, 2, 4)
            merged = out.reshape(b, n, 8)
            kept = out.transpose(1, 2).contiguous().view(b, n, 8)
            self.reset_cache
            return merged + kept
        """)
    found = {(e.kind, e.line, e.new) for e in repair.candidates({"m": source}, ["m"], ["m.forward"])}
    assert ("transpose", 5, '"bnd,de->bne"') in found and ("transpose", 5, '"bnd,ed->nbe"') in found
    assert ("transpose", 7, "out.transpose(1, 2).reshape(b, n, 8)") in found
    assert not any(kind == "transpose" and line == 8 and new.count("transpose") > 1 for kind, line, new in found)
    assert ("called", 9, "self.reset_cache()") in found
    assert repair._einsum_swaps("ij,jk->ik") == ["ji,jk->ik", "ij,kj->ik", "ij,jk->ki"]
    more = textwrap.dedent("""\
        def load(norm, source, tokens):
            norm.scale = source['g']
            norm.shift = source['g']
            vocab = list(set(tokens))
            return vocab if norm.eps > 1.0 else None
        """)
    found = {(e.kind, e.line, e.new) for e in repair.candidates({"m": more}, ["m"], ["m.load"])}
    assert ("variable", 3, "'b'") not in found  # only keys this function reads
    assert {("operator", 4, "sorted"), ("constant", 5, "0.0"), ("constant", 5, "10.0")} <= found, found
    sized = textwrap.dedent("""\
        def config(base, changes, emb):
            hidden = 2 * emb
            return {**changes, **base}, hidden + 4 * emb
        """)
    found = {(e.kind, e.line, e.new) for e in repair.candidates({"m": sized}, ["m"], ["m.config"])}
    assert {("constant", 2, "4"), ("constant", 2, "1"), ("constant", 3, "2"), ("removed", 3, "emb"),
            ("arguments", 3, "{**base, **changes}")} <= found, found
    # a dict before a key read: the keys the function reads are still its string keys
    keyed_after = textwrap.dedent("""\
        def config(base, changes):
            merged = {**changes, **base}
            return max(merged['n'], merged['m'])
        """)
    found = {(e.kind, e.line, e.new) for e in repair.candidates({"m": keyed_after}, ["m"], ["m.config"])}
    assert {("variable", 3, "'m'"), ("arguments", 2, "{**base, **changes}")} <= found, found
    keyed = more.replace("source['g']\n    norm.shift", "source['g']\n    norm.bias = source['b']\n    norm.shift")
    assert ("variable", 4, "'b'") in {(e.kind, e.line, e.new) for e in repair.candidates(
        {"m": keyed}, ["m"], ["m.load"])}
    assert repair._einsum_swaps("...ij,jk") == [] and repair._einsum_swaps("i" * 7 + "->i") == []


def test_the_same_slip_at_each_place_a_method_forgotten_repeat_a_fallback_and_a_keyword_are_edits():
    """The same edit made at each of its places on a line (``[:, :w]`` twice for ``[-w:]`` twice),
    a method the file calls on that name elsewhere (``item.strip()``, twice), ``repeat`` where each
    copy in a row was meant (``repeat_interleave``), the fallback of ``.get`` another entry the
    function reads, a keyword argument not meant (``start=1``); and every candidate parses (a slice's
    edit once came in parentheses, ``x[(a:b)]``: a syntax error, no candidate at all)."""
    source = textwrap.dedent("""\
        def keep(self, keys, values, w, cfg, words):
            self.k, self.v = keys[:, :w], values[:, :w]
            shared = keys.repeat(1, w, 1, 1)
            heads = cfg.get("groups", 1) * cfg["heads"]
            return [item for item in words if item], shared, heads, enumerate(words, start=1)


        def clean(words):
            return [item.strip() for item in words]
        """)
    found = {(e.kind, e.line, e.new, e.times): e for e in repair.candidates({"m": source}, ["m"], ["m.keep"])}
    assert {("slice", 2, "-w:", 2), ("method", 5, "item.strip()", 2), ("method", 5, "item.strip()", 1),
            ("operator", 3, "keys.repeat_interleave(w, dim=1)", 1), ("constant", 4, 'cfg["heads"]', 1),
            ("removed", 5, "", 1)} <= set(found), sorted(found)
    twice = found["slice", 2, "-w:", 2]
    assert twice.text == "    self.k, self.v = keys[:, -w:], values[:, -w:]\n"
    assert twice.phrase() == "with `-w:` in place of `:w` at each of its 2 places on the line"
    for e in found.values():
        ast.parse(e.applied({"m": source})["m"])
    for assignment, module in (("ch02_text_data", "data_sampling"), ("efficient_attention", "sliding_window")):
        text = (course.get(assignment).solutions / f"{module}.py").read_text()
        parsed = repair._Module(module, text)
        for function in (f for functions in parsed.defs.values() for f in functions):
            for e in repair.edits(parsed, function):
                ast.parse(e.applied({module: text})[module])


def test_a_line_one_run_of_tokens_from_the_references_is_rewritten_to_it():
    """A mistake no operator writes (a pattern's characters, a filter left out, ``x *`` dropped, a
    range from 1): the student's line made the reference's nearest line, where only one run of
    tokens differs and the rest of the line is the same; the student's spacing and comment kept,
    and nothing offered where the line is the student's own (other names), the reference's already,
    or the rewrite would not parse."""
    reference = ["def split(text):\n", "    parts = re.split(r'([,.]|--)', text)\n", "    parts = re.split(r'([,.]|--|\\s)', text)\n",
                 "    return [p.strip() for p in parts if p.strip()]\n",
                 "def gelu(x, n):\n", "    pos = torch.arange(1, n + 1)\n", "    return 0.5 * x * (1 + pos)\n"]
    source = textwrap.dedent("""\
        import re


        def split(text):
            \"\"\"parts = re.split(r'([,.]|--)', text)\"\"\"
            parts = re.split(r"([,.]|\\s)", text)  # mine
            return [p.strip() for p in parts]


        def gelu(x, n):
            pos = torch.arange(n)
            total = sum(w * v for w, v in zip(x, pos))
            return 0.5 * (1 + pos)
        """)
    known = {"m": repair.known_lines(reference)}
    found = [e for name in ("split", "gelu") for e in repair.candidates({"m": source}, ["m"], [f"m.{name}"], known=known)
             if e.kind in ("rewritten", "added", "removed") and e.old != e.new and "(" not in e.where]
    shown = {(e.kind, e.line, e.old, e.new) for e in found}
    assert {("rewritten", 6, 'r"([,.]|\\s)"', "r'([,.]|--|\\s)'"), ("added", 7, "]", "if p.strip()]"),
            ("rewritten", 11, "n", "1, n + 1"), ("added", 13, "(", "x * (")} <= shown, sorted(shown)
    by_line = {e.line: e for e in found if e.kind in ("rewritten", "added")}
    assert by_line[6].text == "    parts = re.split(r'([,.]|--|\\s)', text)  # mine\n"
    assert by_line[13].text == "    return 0.5 * x * (1 + pos)\n" and by_line[13].phrase() == "with `x * (` in place of `(`"
    assert not {e.line for e in found if e.kind == "rewritten"} & {5, 12}  # the docstring; the student's own line
    first = repair.candidates({"m": source}, ["m"], ["m.split"], known=known)[0]
    assert (first.kind, first.line) == ("rewritten", 6), first  # a line of the reference: tried first
    assert repair.sentence(first.data({"m": source}), "change") == \
        "m.py line 6: a change of a few of its tokens on this line makes this check pass."
    # a rewrite that would not parse is no candidate (the reference's line goes on below it)
    short = repair._parsed("m", "def f(a):\n    return a + 1\n")
    assert not repair._rewritten(short, short.defs["f"][0], repair.known_lines(["    return a + 1 +\n", "        2\n"]))
    assert repair._rewritten(short, short.defs["f"][0], repair.known_lines(["    return a + 1 + 2\n"]))


def test_a_twin_written_for_its_sibling_comes_first():
    """`self.norm2(x)` where `self.norm1` is never read: the twin put back is the first candidate;
    and a sibling name (`bias_k` for `bias_v`) is tried with the operators, not after every kind."""
    source = textwrap.dedent("""\
        from torch import nn


        class Block(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.norm1, self.norm2, self.ff = nn.LayerNorm(d), nn.LayerNorm(d), nn.Linear(d, d)

            def forward(self, x, bias_k, bias_v):
                shortcut = x
                x = self.norm2(x) + bias_k
                x = x + shortcut
                return self.ff(self.norm2(x)) * bias_k
        """)
    order = [(e.kind, e.line, e.new) for e in repair.candidates({"m": source}, ["m"], ["m.Block"])]
    assert order[0] == ("variable", 11, "self.norm1"), order[:5]
    kinds = [k for k, _, _ in order]
    assert order.index(("variable", 11, "bias_v")) < kinds.index("removed"), order
    assert order.index(("variable", 12, "shortcut")) > kinds.index("order")  # no sibling: last, as before


class _FakeSession:
    """What the search uses of a session, without a child: ``plans`` answers as a test needs, and
    ``used`` is the CPU seconds its child would have spent."""
    sources, timeout, used = {"m": "x = 1\n"}, 5.0, 0.0

    def vary(self, variants):
        pass

    def cpu_seconds(self):
        return self.used


def test_a_check_no_candidate_can_pass_stops_its_search_at_once():
    """A plan that needs a child of its own (a memory measurement) is not run in the search: the
    first candidate shows it, and the rest of the pool is left for the other checks."""
    Session = _FakeSession
    pool = [repair.Edit("m", 1, 1, f"x = {i}\n", 1, "constant", "1", str(i)) for i in range(2, 40)]
    calls = []

    def passes(variant):
        calls.append(variant)
        variant.plan([{"let": "r", "call": "m.f"}], memory=2 ** 30)  # raises: not run in the search
    check = repair.Failed(0, lambda v: _swallowing(passes, v), ("m.f",), None)
    hit, tried, timed_out = repair._first_passing(check, pool, Session(), repair.Work(Session(), 60))
    assert hit is None and tried == 1 and len(calls) == 1 and not timed_out


def test_a_candidate_right_up_to_a_memory_measurement_goes_on_to_its_confirmation():
    """A check that compares values first and then measures memory (a plan in a child of its own,
    which the search does not run): the candidate whose values are right is the one to confirm;
    those whose values are wrong never reach the measurement and are not."""
    class Session(_FakeSession):
        def plans(self, requests, timeout):
            return [v == 5 for _, _, v in requests]  # only candidate 5 answers the first plan right
    pool = [repair.Edit("m", 1, 1, f"x = {i}\n", 1, "constant", "1", str(i)) for i in range(2, 12)]

    def passes(variant):
        if not variant.plan([{"let": "r", "call": "m.f"}]):
            raise AssertionError("wrong values")
        variant.plan([{"let": "r", "call": "m.g"}], memory=2 ** 20)  # raises: not run in the search
    check = repair.Failed(0, lambda v: _swallowing(passes, v), ("m.f",), None)
    hit, tried, _ = repair._first_passing(check, pool, Session(), repair.Work(Session(), 60))
    assert hit is not None and hit[0] is pool[5] and not hit[1], (hit, tried)


def test_a_round_trip_is_no_larger_than_the_time_left_holds():
    """Candidates cost 10 ms of the child's CPU each and the bound is 0.2 s: after the first round
    trip of 8, a second of 16 would need 0.16 s of the 0.12 left and be cut short by the bound, losing
    all 16 answers (the fix among them); one sized to what is left holds the fix and finds it."""
    from autograder.sandbox.session import StudentFailure

    class Session(_FakeSession):
        def plans(self, requests, timeout):
            cost = 0.01 * len(requests)
            self.used += min(cost, timeout)
            if cost > timeout:
                raise StudentFailure("did not finish within its CPU seconds")
            return [v == 12 for _, _, v in requests]  # candidate 12 is the fix
    session = Session()
    pool = [repair.Edit("m", 1, 1, f"x = {i}\n", 1, "constant", "1", str(i)) for i in range(30)]
    check = repair.Failed(0, lambda v: _swallowing(lambda v: v.plan([{"call": "m.f"}]), v), ("m.f",), None)
    work = repair.Work(session, 0.2)
    hit, tried, timed_out = repair._first_passing(check, pool, session, work)
    assert hit is not None and hit[0] is pool[12], (tried, session.used)


def test_a_round_trip_one_slow_candidate_lost_is_run_again_in_halves():
    """Candidate 9's edit makes the check loop for as long as it may: the child is stopped and the
    whole round trip of 16 (the fix, 12, among them) has no answer. Its halves are run again, and
    again, until the slow one is alone; the fix is found, and the slow one cost a few times the
    batch's expected time, not the whole bound."""
    from autograder.sandbox.session import StudentFailure

    class Session(_FakeSession):
        trips = 0

        def plans(self, requests, timeout):
            self.trips += 1
            variants = [v for _, _, v in requests]
            if 9 in variants:
                self.used += timeout
                return [StudentFailure("did not finish within its CPU seconds")] * len(requests)
            self.used += 0.001 * len(requests)
            return [v == 12 for v in variants]
    session = Session()
    pool = [repair.Edit("m", 1, 1, f"x = {i}\n", 1, "constant", "1", str(i)) for i in range(30)]
    check = repair.Failed(0, lambda v: _swallowing(lambda v: v.plan([{"call": "m.f"}]), v), ("m.f",), None)
    hit, tried, timed_out = repair._first_passing(check, pool, session, repair.Work(session, 2.0))
    assert hit is not None and hit[0] is pool[12] and not timed_out, (tried, session.used)
    assert session.used < 0.5 and session.trips <= 10, (session.used, session.trips)


def _swallowing(passes, variant):
    try:
        return passes(variant)
    except Exception:
        return False


def test_names_unpacked_and_left_unread_and_plain_attributes_do_not_come_first():
    """The book unpacks `b, num_tokens, d_in = x.shape` and reads one of the three; its class keeps
    `self.d_out = d_out`. Neither is an unread value the student meant to use: a softmax over the
    wrong dim is still the first candidate, not `b` put in every place or `self.d_out(x)`."""
    source = textwrap.dedent("""\
        import torch
        from torch import nn


        class Attention(nn.Module):
            def __init__(self, d_in, d_out):
                super().__init__()
                self.d_out = d_out
                self.W_query = nn.Linear(d_in, d_out)

            def forward(self, x):
                b, num_tokens, d_in = x.shape
                queries = self.W_query(x)
                scores = queries @ queries.transpose(1, 2) / num_tokens
                return torch.softmax(scores, dim=1)
        """)
    found = repair.candidates({"m": source}, ["m"], ["m.Attention"])
    assert (found[0].kind, found[0].line, found[0].new) == ("dimension", 15, "dim=-1"), found[:3]
    assert not any(e.new in ("self.d_out(x)", "b", "d_in") for e in found[:20])


def test_a_sign_is_edited_where_it_sits_before_a_later_line_compensates():
    """A minus on the wrong half, or a power not inverted, has a one-edit repair on its own line; an
    operator swapped on a later line passes too (it compensates). The sign comes first, so the
    repair shown is the line the student got wrong."""
    source = textwrap.dedent("""\
        import torch


        def rotate(x, cos, sin, base):
            x1, x2 = x[..., :2], x[..., 2:]
            rotated = torch.cat((x2, -x1), dim=-1)
            freq = base ** (torch.arange(2) / 4)
            return x * cos + rotated * sin * freq
        """)
    found = repair.candidates({"m": source}, ["m"], ["m.rotate"])
    line_of = {(e.line, e.new): i for i, e in enumerate(found)}
    moved, inverted = line_of[6, "(-x2, x1)"], line_of[7, "-(torch.arange(2) / 4)"]
    compensating = min(i for (line, new), i in line_of.items() if line == 8 and "-" in new and "cos" in new)
    assert moved < compensating and inverted < compensating, found[:12]
    assert found[moved].kind == found[inverted].kind == "sign"
    assert found[moved].applied({"m": source})["m"].splitlines()[5].strip() == "rotated = torch.cat((-x2, x1), dim=-1)"


def test_a_stub_has_no_candidates():
    source = "def f(x):\n    raise NotImplementedError('write f')\n"
    assert repair.candidates({"m": source}, ["m"], ["m.f"]) == []


@pytest.fixture(scope="module")
def grader():
    with Grader(ASSIGNMENT, repair_seconds=60, budget=600) as g:  # unbounded in time here: the tests judge what it finds
        yield g


@pytest.fixture(scope="module")
def softmax_mutant():
    mutant = next(m for m in load(ASSIGNMENT, "mutants").MUTANTS if m.name == SOFTMAX_DIM)
    return mutated_sources(ASSIGNMENT, mutant)


def _line_of(sources, text):
    return next(i for i, line in enumerate(sources["simple_attention.py"].splitlines(), 1) if text in line)


def test_a_failed_check_gets_a_verified_repair_at_the_edited_line(grader, softmax_mutant, tmp_path):
    result = grade_sources(grader, ASSIGNMENT, tmp_path / "s", softmax_mutant)
    repaired = [t for t in result["tests"] if t.get("extra_data", {}).get("repair")]
    assert repaired, [t["output"] for t in result["tests"] if t["status"] != "passed"]
    data = repaired[0]["extra_data"]["repair"]
    assert data["file"] == "simple_attention.py" and data["kind"] == "dimension"
    assert data["line"] == _line_of(softmax_mutant, data["was"]) and "dim=0" in data["was"]
    assert "dim=-1" in data["now"] or "dim=1" in data["now"]
    # the default shows the line and the kind of change, not the edited text
    assert repaired[0]["output"].startswith(f"simple_attention.py line {data['line']}: a change of the dimension")
    assert data["now"] not in repaired[0]["output"]
    assert result["extra_data"]["repair_search"]["found"] >= 1


def test_a_pattern_no_operator_writes_is_repaired_as_the_references_line(tmp_path):
    """The split's pattern without its double dash (no operator edits a string's characters): the
    repair makes the line the reference's, verified, at that line, and `fix` shows the pattern."""
    sources = reference_sources("ch02_text_data")
    wrong = sources["simple_tokenizer.py"].replace(r"""|--|\s)', text)
    return [item.strip()""", r"""|\s)', text)
    return [item.strip()""", 1)
    assert wrong != sources["simple_tokenizer.py"]
    with Grader("ch02_text_data", repair_seconds=60, budget=600, hints="fix") as g:
        result = grade_sources(g, "ch02_text_data", tmp_path / "s", {**sources, "simple_tokenizer.py": wrong})
    repaired = [t for t in result["tests"] if t.get("extra_data", {}).get("repair")]
    assert repaired, [t["output"] for t in result["tests"] if t["status"] != "passed"]
    data = repaired[0]["extra_data"]["repair"]
    line = next(i for i, text in enumerate(wrong.splitlines(), 1) if r"""|\s)', text)""" in text)
    assert (data["file"], data["line"], data["kind"]) == ("simple_tokenizer.py", line, "rewritten"), data
    assert "|--|" in data["now"] and "|--|" not in data["was"]
    assert repaired[0]["output"].startswith(f"simple_tokenizer.py line {line}: with `r'([,.:;?_!")
    assert {t["score"] for t in result["tests"] if t.get("extra_data", {}).get("repair")} == {0}


def test_the_search_never_changes_a_score(softmax_mutant, tmp_path):
    with Grader(ASSIGNMENT, hints="none", budget=600) as plain:
        without = grade_sources(plain, ASSIGNMENT, tmp_path / "none", softmax_mutant)
    with Grader(ASSIGNMENT, hints="fix", repair_seconds=60, budget=600) as searching:
        with_search = grade_sources(searching, ASSIGNMENT, tmp_path / "fix", softmax_mutant)
    assert "repair_search" not in without["extra_data"]
    assert not any("repair" in t.get("extra_data", {}) for t in without["tests"])
    assert any("repair" in t.get("extra_data", {}) for t in with_search["tests"])
    assert with_search["score"] == without["score"] and \
        with_search["extra_data"]["parts"] == without["extra_data"]["parts"]
    assert [(t["name"], t["score"], t["status"]) for t in with_search["tests"]] == \
        [(t["name"], t["score"], t["status"]) for t in without["tests"]]
    fixed = next(t for t in with_search["tests"] if "repair" in t.get("extra_data", {}))
    assert "with `dim=" in fixed["output"]  # the fix level shows the edit


FORGER = '''
import sys as _sys
_child = _sys.modules.get("autograder.sandbox.child")
if _child is not None:
    def _claim(request):  # every candidate "passed": the child's word, which is no verdict
        return {"replies": [{"ok": True, "passed": True, "values": {}, "records": {}, "errors": {},
                             "repair": {"file": "simple_attention.py", "line": 1}} for _ in request["plans"]]}
    _child.OPS["plans"] = _claim
'''


def test_a_child_that_claims_success_gets_no_repair(grader, softmax_mutant, tmp_path):
    sources = dict(softmax_mutant)
    sources["simple_attention.py"] += FORGER
    result = grade_sources(grader, ASSIGNMENT, tmp_path / "forger", sources)
    assert result["score"] < result["max_score"]
    assert not any("repair" in t.get("extra_data", {}) for t in result["tests"]), \
        [t["output"] for t in result["tests"] if t["status"] != "passed"]
    assert result["extra_data"]["repair_search"]["found"] == 0


def test_a_correct_submission_pays_nothing(grader, tmp_path, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the repair search ran on a correct submission")
    monkeypatch.setattr(repair, "search", never)
    result = grade_sources(grader, ASSIGNMENT, tmp_path / "ok", reference_sources(ASSIGNMENT))
    assert result["score"] == result["max_score"] and "repair_search" not in result["extra_data"]


def test_blank_stubs_parse_once_and_reach_no_bound(grader, tmp_path, monkeypatch):
    """Forty checks fail on the blank stubs, none with an edit to try: each file is parsed once for
    the whole search (it was once per check, and then the search said its time ran out)."""
    parsed = []
    real = repair._Module
    monkeypatch.setattr(repair, "_Module", lambda name, source: parsed.append(name) or real(name, source))
    repair._parsed.cache_clear()
    result = grade_sources(grader, ASSIGNMENT, tmp_path / "blank", stub_sources(ASSIGNMENT))
    searched = result["extra_data"]["repair_search"]
    assert searched["checks"] >= 20 and searched["candidates"] == 0 and searched["bound"] is None, searched
    assert sorted(parsed) == sorted(set(parsed)), parsed


def test_a_submission_whose_failures_are_all_named_searches_less(softmax_mutant, tmp_path, monkeypatch):
    """The catalogue named every failed check's mistake: the search adds only the line, so it gets
    repair.NAMED_SHARE of the bound; a failure nobody named gets all of it."""
    bounds = []
    monkeypatch.setattr(repair, "SHARE", 0.0)  # the bound is then MIN_SECONDS, whatever the machine's speed
    monkeypatch.setattr(repair, "search", lambda failed, session, own, new, seconds, **kw: (
        bounds.append(seconds) or ({}, {"checks": len(failed), "candidates": 0, "seconds": 0, "found": 0,
                                        "bound": None})))
    unnamed = dict(softmax_mutant, **{"simple_attention.py": reference_sources(ASSIGNMENT)["simple_attention.py"]
                                      .replace("attn_scores[i] = torch.dot(x_i, query)",
                                               "attn_scores[i] = torch.dot(x_i, query) + 0.125 * i")})
    named = []
    with Grader(ASSIGNMENT) as plain:
        for name, sources in (("named", softmax_mutant), ("unnamed", unnamed)):
            result = grade_sources(plain, ASSIGNMENT, tmp_path / name, sources)
            named.append(all(t.get("extra_data", {}).get("mistake") for t in result["tests"] if t["status"] != "passed"))
    assert named == [True, False]
    assert bounds == [pytest.approx(repair.MIN_SECONDS * repair.NAMED_SHARE), pytest.approx(repair.MIN_SECONDS)]


def test_the_search_bound_counts_cpu_seconds_not_the_wall_clock():
    """The bound is work (this process's CPU and the children's, read from outside them), so the
    wait a busy machine adds uses none of it, and a child's own work does."""
    import time

    class Children:  # what StudentSession.cpu_seconds reads from /proc
        used = 0.0

        def cpu_seconds(self):
            return self.used

    children = Children()
    work = repair.Work(children, 0.2)
    time.sleep(0.3)  # waiting, as beside other jobs: no CPU used
    assert not work.over() and work.left() > 0.15
    children.used = 0.25  # the children's CPU seconds count
    assert work.over() and work.used() >= 0.25


def test_the_class_report_counts_repairs_by_kind():
    from types import SimpleNamespace

    from autograder.grading.result import Check, SubmissionResult
    from autograder.platforms import classreport

    data = {"file": "simple_attention.py", "line": 91, "was": "a", "now": "b", "kind": "dimension", "fix": "with"}

    def student(name, repaired):
        checks = [Check("simple_attention: softmax", "simple_attention", 0, 2, "failed", "wrong",
                        repair=data if repaired else None),
                  Check("simple_attention: sums", "simple_attention", 2, 2, "passed", "")]
        result = SubmissionResult.build(checks, [], "namespaces", 0.1, assignment=ASSIGNMENT)
        return SimpleNamespace(name=name, folder=name, result=result, status="graded", feedback=None,
                               assignment=ASSIGNMENT, result_file=None)

    summary = classreport.summarize([student("ada", True), student("bo", True), student("cy", False)], "class")
    repairs, = summary["assignments"][0]["repairs"]
    assert repairs["kind"] == "dimension" and repairs["students"] == ["ada", "bo"]
    assert any("repairs, by kind: dimension (2)" in line for line in classreport.terminal_lines(summary))
    # and the repair survives the result file
    check = student("ada", True).result.checks[0]
    assert Check.from_json(check.to_json()).repair == data
