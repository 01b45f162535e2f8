"""Grader-side fairness: what a missing or broken module costs, and crash messages kept whole.

(The banks prove the rest: tests/test_alternatives.py, every correct style at full marks;
tests/test_mutants.py, every mistake charged in its own part only and named right.)
"""
from test_grader import cli, submission

from autograder.grading.result import SubmissionResult
from autograder.platforms import report


def test_a_missing_module_is_one_clear_line_everywhere(grader, tmp_path):
    folder = submission(tmp_path, "no_exercises")
    (folder / "exercises.py").unlink()
    result = grader.grade(folder)
    assert result["extra_data"]["parts"]["exercises"] == [0, 15]
    assert result["score"] == 85, "the other parts do not need exercises.py"
    failed = [t for t in result["tests"] if t["status"] == "failed"]
    assert failed and all(t["output"] == "exercises.py is missing from your submission" for t in failed), failed
    typed = SubmissionResult.from_json(result)
    assert "exercises.py is missing from your submission" in report.markdown(typed, "s")
    assert "No module named" not in report.markdown(typed, "s") + report.table(typed, "s")
    run = cli("grade", folder, "--json", tmp_path / "r.json")
    assert "exercises.py is missing from your submission" in run.stdout and "No module named" not in run.stdout
    assert "exercises.py is missing from your submission" in (tmp_path / "r.json").read_text()


def test_a_module_that_does_not_import_costs_only_what_uses_it(grader, tmp_path):
    # exercises.py imports multihead_attention, which imports this broken causal_attention.py
    folder = submission(tmp_path, "syntax", edits=[
        ("causal_attention.py", "def mask_future_scores(attn_scores):", "def mask_future_scores(attn_scores)")])
    result = grader.grade(folder)
    parts = result["extra_data"]["parts"]
    assert parts["causal_attention"] == [0, 25]
    assert parts["simple_attention"] == [15, 15] and parts["self_attention"] == [20, 20]
    # only the wrapper builds CausalAttention, and it is judged on stand-in heads then;
    # MultiHeadAttention and exercises 3.1 and 3.3 never touch it, and exercise 3.2 builds the
    # grader's stand-in for the wrapper
    assert parts["multihead_attention"] == [25, 25] and parts["exercises"] == [15, 15], parts
    failed = [t for t in result["tests"] if t["status"] == "failed"]
    from autograder.grading.diagnose import SYNTAX
    from autograder.grading.result import NAMES_MISTAKE
    assert all(t["output"] == "causal_attention.py could not be imported: SyntaxError in causal_attention.py "
               "line 29: expected ':'" + NAMES_MISTAKE.format(SYNTAX) for t in failed), [t["output"] for t in failed]
    assert all(t["extra_data"]["mistake"] == SYNTAX for t in failed)  # named as data, from the failure itself


def test_a_crash_message_is_kept_whole(grader, tmp_path):
    long = "the student's message " * 60 + "END"
    folder = submission(tmp_path, "crash", edits=[
        ("simple_attention.py", "    return inputs @ inputs.T\n", f"    raise ValueError({long!r})\n")])
    result = grader.grade(folder)
    [failed] = [t for t in result["tests"] if t["status"] == "failed"]
    assert failed["output"].endswith(f"raised ValueError: {long} (simple_attention.py line 63)"), failed["output"]
