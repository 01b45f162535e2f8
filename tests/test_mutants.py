"""Proof that the hidden suites bite, fairly: every mutant in each assignment's bank
(``tests/<assignment>/mutants.py``) loses points where it lives, only there, and is named right.

For each assignment with a bank, the reference (solutions/<assignment>) must score full
marks, the blank stubs (assignments/<assignment>) nothing, and each mutant (one realistic
mistake applied to the reference) must
- lose points in every part it declares, with feedback text on every failed check;
- keep full marks in every part it does not declare (one mistake, one part);
- be named right: where the bank declares a name, the feedback names that mistake and no
  other; where it declares none, the feedback names none (a hint that the evidence does
  not show is worse than no hint).
The points per part come from grading the reference (they live on the hidden checks).
Every submission is graded once, by one ``Grader``; the results are cached for the module.
Run with ``-s`` to see the summary printed by the last test.
"""
from pathlib import Path

import pytest

from autograder.platforms import classreport
from autograder.grading import course
from autograder.grading.result import SubmissionResult
from banks import banks, describe, mutated_sources, part_points, reference_sources, student_functions, stub_sources

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

BANKS = banks("mutants")
CASES = [(assignment, m) for assignment, bank in BANKS for m in bank.MUTANTS]
IDS = [f"{assignment}: {m.name}" for assignment, m in CASES]


@pytest.fixture(scope="module")
def grade(graded):
    """grade(assignment, key, sources) -> results dict (``key`` names the case; the session's
    ``graded`` grades each submission once)."""
    return lambda assignment, key, sources: graded(assignment, sources)


@pytest.fixture(scope="module")
def points(grade):
    """points[assignment] -> {part: points}, from the reference's full marks."""
    return {assignment: part_points(grade(assignment, "reference", reference_sources(assignment)))
            for assignment, _ in BANKS}


def named_mistakes(result):
    """The mistake names the checks recorded (each test's extra_data)."""
    return [name for t in result["tests"] if (name := t.get("extra_data", {}).get("mistake"))]


def test_every_bank_is_well_formed():
    assert BANKS, "no assignment has a mutant bank"
    for assignment, bank in BANKS:
        parts = course.get(assignment).parts
        names = [m.name for m in bank.MUTANTS]
        functions = len(student_functions(assignment))
        assert len(bank.MUTANTS) >= functions, (
            f"{assignment}: {len(bank.MUTANTS)} mutants for {functions} functions to write: a bank shows at least "
            "one plausible mistake per function a student writes, in every part, each losing points in its part only")
        assert len(set(names)) == len(names), f"{assignment}: mutant names must be unique"
        for m in bank.MUTANTS:
            assert m.parts and set(m.parts) <= set(parts), f"{assignment}: {m.name}: unknown part in {m.parts}"
            assert m.old != m.new
        assert {p for m in bank.MUTANTS for p in m.parts} == set(parts), f"{assignment}: every part has mutants"


@pytest.mark.parametrize("assignment", [a for a, _ in BANKS])
def test_reference_gets_full_marks(grade, assignment):
    result = grade(assignment, "reference", reference_sources(assignment))
    assert result["score"] == result["max_score"] > 0, describe(result)
    parts = result["extra_data"]["parts"]
    assert set(parts) == set(course.get(assignment).parts), "every part of the manifest has checks"
    assert all(got == most > 0 for got, most in parts.values()), describe(result)


@pytest.mark.parametrize("assignment", [a for a, _ in BANKS])
def test_blank_stubs_get_zero(grade, points, assignment):
    result = grade(assignment, "stubs", stub_sources(assignment))
    assert result["max_score"] == sum(points[assignment].values()), describe(result)
    assert result["score"] == 0, describe(result)
    assert all(t["output"].strip() for t in result["tests"]), "every failed check explains itself"
    # a stub's answers are no mistake of the student's (kit.blank_stub, DESIGN.md, "How a check avoids naming a blank stub's mistake")
    assert named_mistakes(result) == [], f"mistakes named for blank stubs: {named_mistakes(result)}"


@pytest.mark.parametrize("assignment, mutant", CASES, ids=IDS)
def test_mutant_loses_points(grade, points, assignment, mutant):
    result = grade(assignment, mutant.name, mutated_sources(assignment, mutant))
    assert result["max_score"] == sum(points[assignment].values()), describe(result)
    parts = result["extra_data"]["parts"]
    for part in mutant.parts:
        assert part in parts, f"{mutant.name}: the hidden suites have no checks for {part}\n{describe(result)}"
        got, most = parts[part]
        assert got < most, f"{mutant.name}: full marks in {part} ({got}/{most}), the suites miss it\n{describe(result)}"
    assert result["score"] < result["max_score"], describe(result)
    silent = [t["name"] for t in result["tests"] if t["status"] != "passed" and not t["output"].strip()]
    assert not silent, f"{mutant.name}: failed checks without feedback: {silent}"
    lost = [t["name"] for t in result["tests"] if t["status"] != "passed" and any(k in t["name"] for k in mutant.keeps)]
    assert not lost, f"{mutant.name}: checks that do not use what the mistake touches lost points: {lost}\n{describe(result)}"
    elsewhere = {p: v for p, v in parts.items() if p not in mutant.parts and v[0] < v[1]}
    assert not elsewhere, f"{mutant.name}: also charged outside its part(s) {mutant.parts}: {elsewhere}\n{describe(result)}"


@pytest.mark.parametrize("assignment, mutant", CASES, ids=IDS)
def test_mutant_is_named_right(grade, assignment, mutant):
    names = sorted(set(named_mistakes(grade(assignment, mutant.name, mutated_sources(assignment, mutant)))))
    if mutant.named is None:
        assert not names, f"{mutant.name}: the bank declares no known mistake, the feedback names {names}"
    else:
        assert names, f"{mutant.name}: the feedback names no mistake, expected one like {mutant.named!r}"
        wrong = [n for n in names if mutant.named not in n]
        assert not wrong, f"{mutant.name}: the feedback also names {wrong}, expected only {mutant.named!r}"
    result = grade(assignment, mutant.name, mutated_sources(assignment, mutant))
    feedback = " ".join(t["output"] for t in result["tests"])
    for fragment in getattr(mutant, "says", ()):  # "yours" is the student's: never the wrong way round
        assert fragment in feedback, f"{mutant.name}: the feedback does not say {fragment!r}\n{describe(result)}"


def test_banks_name_nine_mistakes_in_ten():
    """Each bank declares a name for at least 90% of its mutants: the feedback teaches what went
    wrong, not only where (each declared name is checked by test_mutant_is_named_right)."""
    for assignment, bank in BANKS:
        named = sum(m.named is not None for m in bank.MUTANTS)
        assert named >= 0.9 * len(bank.MUTANTS), f"{assignment}: {named} of {len(bank.MUTANTS)} mutants named"


def bank_class(grade, assignment, bank):
    """A class of the whole bank, one student per mutant: its class report's summary."""
    students = [classreport.Student(m.name, m.name, SubmissionResult.from_json(
        grade(assignment, m.name, mutated_sources(assignment, m))), "graded") for m in bank.MUTANTS]
    return classreport.summarize(students, f"the mutant bank of {assignment}")


@pytest.mark.parametrize("assignment, bank", BANKS, ids=[a for a, _ in BANKS])
def test_class_report_names_the_banks_mistakes_commonest_first(grade, assignment, bank):
    """The report's named mistakes, their counts and who made them are the bank's declared
    names, and the commonest come first."""
    summary = bank_class(grade, assignment, bank)
    reported = summary["assignments"][0]["mistakes"]
    counts = [len(m["students"]) for m in reported]
    assert counts == sorted(counts, reverse=True)
    declared = {}
    for m in bank.MUTANTS:
        if m.named:
            declared.setdefault(m.named, set()).add(m.name)
    for entry in reported:
        fragments = [f for f in declared if f in entry["mistake"]]
        assert fragments, f"the report names {entry['mistake']!r}, which the bank declares for no mutant"
        assert set(entry["students"]) <= set().union(*(declared[f] for f in fragments)), entry
    for fragment, mutants in declared.items():  # every declared mutant is listed under its name
        listed = set().union(*(set(e["students"]) for e in reported if fragment in e["mistake"]))
        assert mutants <= listed, (fragment, sorted(mutants - listed))
    # the commonest reported mistake is one of the bank's commonest declared ones
    top = max(len(v) for v in declared.values())
    assert any(f in reported[0]["mistake"] and len(declared[f]) >= top - 2 for f in declared), reported[0]
    assert classreport.e(reported[0]["mistake"]) in classreport.render(summary)


def test_summary(grade):
    """Not a check: prints how many mutants lose points and which mistakes the feedback names."""
    caught, missed, named_right, named_other, unnamed, extra, elsewhere = [], [], [], [], [], [], []
    for assignment, m in CASES:
        try:
            result = grade(assignment, m.name, mutated_sources(assignment, m))
        except Exception as exc:  # reported by test_mutant_loses_points; keep the summary going
            missed.append(f"{m.name} (could not be graded: {exc})")
            continue
        parts = result["extra_data"]["parts"]
        loses = all(part in parts and parts[part][0] < parts[part][1] for part in m.parts)
        (caught if loses else missed).append(m.name)
        outside = {p: v for p, v in parts.items() if p not in m.parts and v[0] < v[1]}
        if outside:
            elsewhere.append(f"{m.name} -> {outside}")
        names = named_mistakes(result)
        if m.named is None:
            if names:
                extra.append(f"{m.name} -> {sorted(set(names))}")
        elif names and all(m.named in n for n in names):
            named_right.append(m.name)
        elif names:
            named_other.append(f"{m.name} -> {sorted(set(names))}")
        else:
            unnamed.append(m.name)
    with_hint = sum(m.named is not None for _, m in CASES)
    lines = [
        "",
        "=" * 30 + " mutant summary " + "=" * 30,
        f"bank size: {len(CASES)} ({', '.join(f'{a}: {len(b.MUTANTS)}' for a, b in BANKS)}); lose points in their declared part(s): {len(caught)}; missed: {len(missed)}",
        *(f"  MISSED: {name}" for name in missed),
        f"also charged outside their declared part(s): {len(elsewhere)}",
        *(f"  {entry}" for entry in elsewhere),
        f"feedback names the expected mistake: {len(named_right)} of {with_hint} mutants with a known name",
        *(f"  named: {name}" for name in named_right),
        *(f"  named something else too (a wrong hint): {entry}" for entry in named_other),
        *(f"  not named: {name}" for name in unnamed),
        f"mutants declared unnamed whose feedback names a mistake (a wrong hint, or a name to declare): {len(extra)}",
        *(f"  {entry}" for entry in extra),
    ]
    for assignment, bank in BANKS:
        (report,) = bank_class(grade, assignment, bank)["assignments"]
        lines.append(f"{assignment}: the class report's commonest named mistakes: "
                     + "; ".join(f"{m['mistake']} ({len(m['students'])})" for m in report["mistakes"][:5]))
    print("\n".join(lines))
