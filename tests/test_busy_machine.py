"""The same grade on a busy server: limits count the submission's own work, not the machine's load.

A probe's and a submission's time limits are CPU seconds of the sandboxed child, read from the
host's /proc by the grader (sandbox/cputime.py); the wall clock is only a backstop against a
child that sleeps or blocks. So CPU hogs on every core (tests/load.py, started and ended here by
their pids) change no verdict: a probe that needs most of its limit still passes when the wall
clock says it took several times that, an infinite loop still ends at its CPU limit, and a
sleeping child still ends at the backstop. The class run below grades every assignment's
reference and mistakes from its bank beside the hogs, with more grading jobs than cores, and
must give every student the score an idle machine gives. (tests/test_nbgrader_autograde.py runs
every assignment's ``nbgrader autograde`` beside hogs too.)"""
import csv
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from autograder.paths import ROOT
from autograder.sandbox import cputime
from autograder.sandbox.session import StudentFailure, StudentSession
from autograder.sandbox.zygote import Zygote
import banks
from load import cpu_hogs

BUSY = textwrap.dedent("""\
    import time

    def work(cpu_seconds):
        # CPU time, not wall time: what the grader's limit counts
        end = time.process_time() + cpu_seconds
        n = 0
        while time.process_time() < end:
            n += 1
        return cpu_seconds

    def stall():
        time.sleep(10 ** 6)
    """)


@pytest.fixture(scope="module")
def zygote():
    z = Zygote(warm=())
    yield z
    z.close()


def test_a_probe_that_needs_most_of_its_limit_passes_on_a_busy_machine(zygote):
    s = StudentSession(zygote, {"busy": BUSY}, timeout=1.0)
    try:
        s.plan([{"let": "warm", "call": "busy.work", "args": [0.0]}], needs="busy.work")  # the child is up
        with cpu_hogs(60):
            started = time.monotonic()
            plan = s.plan([{"let": "r", "call": "busy.work", "args": [0.6], "return": True}], needs="busy.work")
            elapsed = time.monotonic() - started
        assert plan.values["r"] == 0.6
        # the hogs really held the cores: a wall-clock limit of 1 s would have failed this probe
        assert elapsed > 1.0, f"the hogs did not slow the probe ({elapsed:.2f} s): nothing was proved"
    finally:
        s.close()


def test_an_infinite_loop_ends_at_its_cpu_limit_on_a_busy_machine(zygote):
    s = StudentSession(zygote, {"busy": BUSY}, timeout=0.5)
    try:
        with cpu_hogs(60):
            started = time.monotonic()
            with pytest.raises(StudentFailure) as failure:
                s.plan([{"let": "r", "call": "busy.work", "args": [10 ** 6]}], needs="busy.work")
            elapsed = time.monotonic() - started
        assert "did not finish within 0.5 s of CPU time" in str(failure.value)
        assert elapsed < cputime.backstop(0.5), "the CPU limit, not the backstop, ended it"
    finally:
        s.close()


def test_a_stalled_child_ends_at_the_wall_clock_backstop(zygote, monkeypatch):
    monkeypatch.setattr(cputime, "BACKSTOP_EXTRA", 2.0)
    s = StudentSession(zygote, {"busy": BUSY}, timeout=0.5)
    try:
        started = time.monotonic()
        with pytest.raises(StudentFailure) as failure:
            s.plan([{"let": "r", "call": "busy.stall"}], needs="busy.stall")
        elapsed = time.monotonic() - started
    finally:
        s.close()
    assert "the 3 s wall-clock backstop" in str(failure.value) and "sleeping or blocked" in str(failure.value)
    assert 3.0 <= elapsed < 10.0


def test_the_backstop_is_generous_and_bounded():
    assert cputime.backstop(5.0) == 35.0 and cputime.backstop(0.5) == 30.5
    assert cputime.past(5.0, 5.0, 6.0).startswith("5 s of CPU time (it used 5.0 s in 6.0 s")
    assert cputime.past(5.0, 4.9, 34.0) is None          # a busy machine: waiting, not running long
    assert "wall-clock backstop" in cputime.past(5.0, 0.1, 35.0)


def test_the_repair_search_counts_cpu_seconds_on_a_busy_machine(tmp_path, monkeypatch):
    """The search's bound is CPU seconds (repair.Work), not the wall clock: beside hogs on every core
    its clock runs far slower than the wall (the hogs' time is not its work), and it finds the repair
    an idle machine finds. The CPU seconds are not load-free either (measured here: a search of 0.3
    s of CPU idle took 1.8 to 2.3 beside 3 hogs a core, as parent and child wake each other hundreds
    of times, and 6.5 to 8.3 s of wall time), so the test asserts the ratio, not a fixed bound."""
    from autograder.grading import repair
    from autograder.grading.runner import Grader
    assignment = "ch03_attention"
    # no catalogued name for it: the repair is the feedback's only pointer to the line
    sources = banks.reference_sources(assignment)
    sources["causal_attention.py"] = sources["causal_attention.py"].replace(
        "return attn_weights @ values", "return attn_weights @ values + 0.125")  # its repair: dozens of candidates in
    walls, real = [], repair.search

    def timed(*args, **kwargs):
        started = time.monotonic()
        try:
            return real(*args, **kwargs)
        finally:
            walls.append(time.monotonic() - started)
    monkeypatch.setattr(repair, "search", timed)
    monkeypatch.setattr(repair, "reference_lines", lambda assignment: {})  # a long search, not its fix first

    def repairs(result):
        return [t["extra_data"]["repair"] for t in result["tests"] if "repair" in t.get("extra_data", {})]
    with Grader(assignment, repair_seconds=60) as unbounded:
        idle = banks.grade_sources(unbounded, assignment, tmp_path / "idle", sources)
        found = repairs(idle)
        assert found and found[0]["line"] == next(i for i, line in enumerate(
            sources["causal_attention.py"].splitlines(), 1) if "+ 0.125" in line)
        with cpu_hogs(300):
            busy = banks.grade_sources(unbounded, assignment, tmp_path / "busy", sources)
    searched = busy["extra_data"]["repair_search"]
    assert repairs(busy) == found, searched
    # the wall clock (the old bound's) would have read the whole wait
    assert searched["seconds"] < 0.5 * walls[-1], (searched, walls)
    print(f"\nthe search: {idle['extra_data']['repair_search']['seconds']:.2f} s of CPU idle; beside the "
          f"hogs {searched['seconds']:.2f} s of CPU in {walls[-1]:.2f} s of wall time")


def _class(folder):
    """Every assignment's reference, blank stubs and the first mistake of its bank."""
    students = {}
    for assignment, bank in banks.banks("mutants"):
        kinds = {"reference": banks.reference_sources(assignment), "blank": banks.stub_sources(assignment)}
        for i, mutant in enumerate(bank.MUTANTS[:1]):
            kinds[f"mutant{i}"] = banks.mutated_sources(assignment, mutant)
        for kind, sources in kinds.items():
            student = folder / f"{assignment}-{kind}" / assignment
            student.mkdir(parents=True)
            for name, text in sources.items():
                (student / name).write_text(text)
            students[f"{assignment}-{kind}"] = assignment
    return students


def _scores(out):
    """{student: {column: value}} of the class's grades.csv: every assignment's score and parts."""
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        return {row.pop("student"): row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_a_class_beside_cpu_hogs_gets_the_grades_of_an_idle_machine(tmp_path):
    students = _class(tmp_path / "class")

    def grade(out, jobs):
        run = subprocess.run([sys.executable, "-m", "autograder", "grade", tmp_path / "class", "--out", out,
                              "--jobs", str(jobs)], cwd=ROOT, capture_output=True, text=True, timeout=3000)
        assert run.returncode in (0, 1), run.stderr[-3000:]
        return _scores(out)

    idle = grade(tmp_path / "idle", 1)
    with cpu_hogs(2400, per_core=2):
        started = time.monotonic()
        busy = grade(tmp_path / "busy", 4)
        print(f"\nthe class of {len(students)} beside the hogs: {time.monotonic() - started:.0f} s")
    assert set(idle) == set(students)
    assert all(idle[s][f"{a}:score"] == "100" for s, a in students.items() if s.endswith("-reference"))
    assert all(idle[s][f"{a}:score"] == "0" for s, a in students.items() if s.endswith("-blank"))
    assert busy == idle   # every score and every part's points
    shutil.rmtree(tmp_path / "class")
