"""The suite kit: cases, seeds from a check's name, one mistake matcher, one lower-part rule."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.grading import course
from autograder.grading.kit import Case, blank_stub, compiles, known_mistake, lower_part_wrong, once, seed_of


def test_a_case_reads_as_the_tuple_it_replaces():
    args, expected, what, mistakes = Case((1, 2), 3, "add on (1, 2)")
    assert (args, expected, what, mistakes) == ((1, 2), 3, "add on (1, 2)", None)


def test_a_seed_depends_on_its_checks_name_only():
    first = seed_of("test_hidden_x.py::test_a")
    assert first == seed_of("test_hidden_x.py::test_a")          # the same on every run
    assert first != seed_of("test_hidden_x.py::test_b")          # another check, other inputs
    assert first != seed_of("test_hidden_x.py::test_a", salt=1)  # a check's second input differs
    assert 0 <= first < 2 ** 31


def test_the_reference_cache_computes_once_per_key_and_stores_no_failure():
    calls = []

    def compute():
        calls.append(1)
        return [len(calls)]
    assert once(("test_kit", "a"), compute) is once(("test_kit", "a"), compute) and len(calls) == 1
    assert once(("test_kit", "b"), compute) == [2]              # another key, its own result

    def broken():
        calls.append(1)
        raise RuntimeError("grader's machine lacks it")
    for _ in range(2):
        with pytest.raises(RuntimeError):
            once(("test_kit", "broken"), broken)
    assert len(calls) == 4                                     # a failure is tried again, never kept


def test_an_id_is_a_key_only_of_what_the_cache_keeps_and_tensors_key_by_value():
    import torch
    from autograder.grading.kit import by_value, keep, kept
    fresh = torch.nn.Linear(2, 2)
    assert not kept(fresh)                 # a fresh object's id may be reused once it is freed
    module = once(("test_kit", "kept module"), lambda: keep(torch.nn.Linear(2, 2)))
    assert kept(module) and not kept(torch.nn.Linear(2, 2))
    a, b = torch.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    assert by_value(a) == by_value(b) and hash(by_value(a)) == hash(by_value(b))
    for other in (a.reshape(3, 2), a.double(), a + 1):   # shape, dtype and values each part of the key
        assert by_value(other) != by_value(a)


def test_every_chapter_helper_uses_the_kits_cache_only():
    # one reference cache: no helper keeps a dictionary or functools cache of its own
    suites = Path(__file__).resolve().parents[1] / "autograder" / "suites"
    for path in suites.glob("*/*.py"):
        text = path.read_text()
        for private in ("functools.cache", "lru_cache", "_CACHE = {}", "_ANSWERS = {}", "_MODULES = {}"):
            assert private not in text, f"{path.name} keeps a cache of its own ({private}): use kit.once"


def _checks_of(assignment):
    """The names seeds are derived from (``file::function``) of an assignment's hidden checks."""
    import ast
    names = []
    for path in sorted((Path(__file__).resolve().parents[1] / "autograder" / "suites" / assignment).glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                name = f"{path.stem}::{node.name}"
                assert name not in names, f"{name} defined twice: the second hides the first"
                names.append(name)
    return names


@pytest.mark.parametrize("assignment", course.names())
def test_a_checks_seeds_do_not_move_when_checks_are_added_or_moved(assignment):
    checks = _checks_of(assignment)
    seeds = {name: [seed_of(name, salt) for salt in range(6)] for name in checks}
    # another check added first, or the checks in another order or file: every seed stays
    again = {name: [seed_of(name, salt) for salt in range(6)] for name in ["test_added_first", *reversed(checks)]}
    assert all(again[name] == seeds[name] for name in checks)
    every = [s for values in seeds.values() for s in values]
    assert len(set(every)) == len(every)      # no two inputs of the assignment share a seed


def test_the_seeds_fixture_gives_the_checks_own_seeds():
    # pytest's fixture and the direct run both hand a check seeds_of(its file, its function)
    import inspect

    from autograder.grading.runner import _Collector, seeds_of
    assert "seeds_of(request.path.stem, request.node.originalname)" in inspect.getsource(_Collector.seeds)
    assert seeds_of("test_hidden_x", "test_y")(3) == seed_of("test_hidden_x::test_y", 3)


@pytest.mark.parametrize("assignment", course.names())
def test_checks_with_seeds_still_run_without_pytest_per_grading(assignment):
    # a fixture the direct run cannot give sends every grading through pytest.main (twice as slow)
    from autograder.grading import course
    from autograder.grading.runner import _Suites, _switch_to
    _switch_to(course.get(assignment))  # as a grading does: two chapters' suites share module names
    assert _Suites(course.get(assignment)).direct


def test_the_closest_mistake_wins_and_ties_are_all_named():
    fit = lambda a, v: abs(a - v) if abs(a - v) <= 0.5 else None  # noqa: E731
    assert known_mistake(1.0, {"near": 1.4, "exact": 1.0, "far": 9.0}, fit) == "exact"
    assert known_mistake(1.0, {"a": 1.0, "b": lambda: 1.0}, fit) == "a or b"
    assert known_mistake(1.0, {"broken": lambda: 1 / 0, "far": 9.0}, fit) is None
    assert known_mistake(1.0, lambda: {"made late": 1.0}, fit) == "made late"


def test_a_lower_part_excuses_only_when_it_lost_points_and_is_really_written():
    def student(failed, passed, source="x = 1\n"):
        return SimpleNamespace(failed_parts=set(failed), passed_parts=set(passed), sources={"low": source})
    assert lower_part_wrong(student({"low"}, {"low"}), "low")
    assert not lower_part_wrong(student({"low"}, set()), "low")            # blank or forged: no points of its own
    assert lower_part_wrong(student({"low"}, set(), "def f(:\n"), "low")   # does not compile: really the student's
    assert not lower_part_wrong(student(set(), {"low"}), "low")            # lost nothing: nothing to excuse
    assert compiles("x = 1") and not compiles("def f(:") and not compiles(None)


def test_the_engine_options_refuse_what_would_grade_wrongly():
    import pytest

    from autograder.grading.engine import Options
    assert Options(hidden=["/a"]).hidden == ("/a",)
    for bad in (dict(isolation="partial"), dict(jobs=0), dict(timeout=0)):
        with pytest.raises(ValueError):
            Options(**bad)


def test_the_cli_refuses_a_timeout_or_jobs_the_options_would_refuse():
    import argparse

    import pytest

    from autograder.cli import _at_least
    assert _at_least(float, 0, above=True)("2.5") == 2.5 and _at_least(int, 0)("0") == 0
    for parse, text in ((_at_least(float, 0, above=True), "0"), (_at_least(float, 0, above=True), "nan"),
                        (_at_least(int, 0), "-1"), (_at_least(int, 0), "two")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


def test_a_check_beside_a_blank_stub_names_what_is_not_written_instead_of_a_mistake():
    """kit.blank_stub, which the runner applies to every failed check that would name a mistake."""
    raised = ["train_model_simple() raised NotImplementedError: train_model_simple: replace this line with "
              "your code (training.py line 40)", "NotImplementedError: Net.forward: replace this line with your code"]
    assert blank_stub(raised) == ("not written yet: 2 functions: train_model_simple, Net.forward (a stub raised "
                                  "NotImplementedError during this check)")
    assert blank_stub(["RuntimeError: mat1 and mat2 shapes cannot be multiplied"]) is None
    assert blank_stub(["NotImplementedError: my own message"]) is None and blank_stub([]) is None
