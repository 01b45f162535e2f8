"""The one result: totals added up once, written as the result file has always been, read back whole."""
import json

from autograder.grading.result import NAMES_MISTAKE, REDUCED_WARNING, Check, KnownMistake, SubmissionResult, failure
from autograder.platforms import gradescope, report

CHECKS = [Check("b: first", "b", 3, 3, "passed", ""), Check("a: second", "a", 0, 2, "failed", "off by 1"),
          Check("b: third", "b", 0, 4, "failed", "wrong shape")]


def test_parts_and_totals_are_added_up_when_the_result_is_built():
    result = SubmissionResult.build(CHECKS, ["x.py: ignored"], "namespaces", 1.23456, protections={"held": []},
                                    assignment="ch03_attention", suites="d1")
    assert (result.score, result.max_score) == (3, 9)
    assert [(p.name, p.score, p.max_score) for p in result.parts] == [("b", 3, 7), ("a", 0, 2)]  # as they ran
    assert result.part("a").max_score == 2 and result.part("c") is None and not result.part("b").full_marks
    assert result.execution_time == 1.235 and result.fully_isolated and result.output == "x.py: ignored"
    assert [c.name for c in result.failed] == ["a: second", "b: third"]
    reduced = SubmissionResult.build(CHECKS, [], "reduced: no namespaces", 0.0)
    assert reduced.output == REDUCED_WARNING.format(why="reduced: no namespaces") and not reduced.fully_isolated


def test_the_result_file_keeps_its_shape_and_reads_back_whole():
    result = SubmissionResult.build(CHECKS, [], "namespaces", 0.5, protections={"held": ["seccomp"]},
                                    assignment="ch03_attention", suites="d1").with_notes(["y.py is not valid"])
    data = result.to_json()
    assert list(data) == ["score", "max_score", "execution_time", "output", "tests", "extra_data"]
    assert list(data["extra_data"]) == ["parts", "isolation", "fully_isolated", "protections", "assignment", "suites"]
    assert data["extra_data"]["parts"] == {"b": [3, 7], "a": [0, 2]}
    assert list(data["tests"][0]) == ["name", "part", "score", "max_score", "status", "output", "visibility"]
    assert data["output"] == "y.py is not valid"
    text = json.dumps(data, indent=1)
    again = SubmissionResult.from_json(json.loads(text))
    assert again == result and json.dumps(again.to_json(), indent=1) == text
    # a key this version does not know (a newer grader's) is kept, in its place at the end
    data["extra_data"]["later"] = {"x": 1}
    assert SubmissionResult.from_json(data).to_json() == data


def test_every_rendering_reads_the_same_totals():
    """A result whose checks would add up to other totals than its parts say: renderings show the parts'."""
    result = SubmissionResult.from_json({
        "score": 7, "max_score": 9, "execution_time": 0.1, "output": "", "tests": [c.to_json() for c in CHECKS],
        "extra_data": {"parts": {"a": [1, 2], "b": [6, 7]}, "isolation": "namespaces", "fully_isolated": True}})
    assert "**Score: 7 / 9**" in report.markdown(result, "s") and "| a | 1 / 2 |" in report.markdown(result, "s")
    assert "  total    7/9" in report.table(result, "s")
    assert gradescope.to_gradescope(result)["output"].splitlines()[-2:] == ["a: 1 / 2", "b: 6 / 7"]
    assert report.class_csv([("alice", result, "graded")], ["ch03_attention"]).splitlines()[1].startswith("alice,7,9,")
    assert 'name="score" value="7"' in report.junit([("alice", result, "graded")])


def test_a_recognised_mistake_is_a_field_every_rendering_reads():
    named = Check("a: named", "a", 0, 2, "failed", "off.", mistake="no scaling")
    assert str(KnownMistake("off.", "no scaling")) == "off." + NAMES_MISTAKE.format("no scaling")
    result = SubmissionResult.build([*CHECKS, named], [], "namespaces", 0.1)
    data = result.to_json()
    assert data["tests"][-1]["extra_data"] == {"mistake": "no scaling"}
    assert all("extra_data" not in t for t in data["tests"][:-1])  # a check without one keeps its shape
    assert SubmissionResult.from_json(json.loads(json.dumps(data))) == result
    shown = gradescope.to_gradescope(result)["tests"]
    assert shown[-1]["extra_data"] == {"mistake": "no scaling"} and "extra_data" not in shown[0]
    xml = report.junit([("alice", result, "graded")])
    assert '<property name="mistake" value="no scaling" />' in xml and xml.count('type="KnownMistake"') == 1


def test_a_picture_travels_beside_the_mistake_in_extra_data():
    drawn = {"title": "t", "tokens": ["a", "b"], "yours": [[1.0, 0.0], [0.5, 0.5]], "expected": [[1.0, 0.0], [0.0, 1.0]]}
    check = Check("a: pictured", "a", 0, 2, "failed", "off.", mistake="no scaling", picture=drawn)
    data = check.to_json()
    assert data["extra_data"] == {"mistake": "no scaling", "picture": drawn} and "picture" not in data
    assert Check.from_json(json.loads(json.dumps(data))) == check
    assert "extra_data" not in Check("a: plain", "a", 2, 2, "passed", "").to_json()


def test_a_student_message_that_imitates_the_sentence_names_no_mistake():
    """Only a check's KnownMistake names one: a child's error ending in the very sentence does not."""
    from autograder.grading.diagnose import FLOAT_MASK
    from autograder.grading.runner import _Check, _Collector
    from autograder.sandbox.session import StudentFailure

    check = _Check("t::c", None, (), (), 2, "doc", "a")
    collector = _Collector(None)
    forged = "boom" + NAMES_MISTAKE.format("a forged name")
    collector.record(check, False, True, StudentFailure(forged))
    collector.record(check, False, True, AssertionError(forged))
    collector.record(check, False, True, failure("off.", "no scaling"))
    collector.record(check, False, True, failure("off.", None))
    # a failure's own text names only one of diagnose's fixed mistakes (never the child's words)
    collector.record(check, False, True, StudentFailure("x.masked_fill(mask, -inf): masked_fill_ only supports boolean masks"))
    assert [c.mistake for c in collector.checks] == [None, None, "no scaling", None, FLOAT_MASK]
    assert collector.checks[-1].output.endswith(NAMES_MISTAKE.format(FLOAT_MASK))
    assert collector.checks[0].output == forged and collector.checks[2].output.endswith("with: no scaling.")
