"""Hostile submissions cannot cheat, break the grader, or cost anyone else their grade.

The whole bank (tests/hostile.py) is graded in ONE class run of the CLI, in a subprocess,
with correct and blank submissions interleaved. Then: every case gets exactly its expected
score (undeserved points = 0), the run completes with one JSON per student (grader
crashes = 0), the neighbours get 100 and 0, nothing was written, connected to or left
running outside the sandbox. Also: an interrupted class run resumes without regrading,
and the fallback without namespaces says so loudly.
"""
import csv
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time

import pytest

from autograder.grading.grade import fingerprint
from autograder.platforms.files import display_name, result_stem
from autograder.platforms.report import csv_cell
from autograder.paths import ROOT, SOLUTIONS
from hostile import CASES, SIMPLE_FUNCTIONS, copy_base, hardcoded_book_module, materialize

NEIGHBOURS = {"00_good": "good", "15_blank": "blank", "16_good": "good", "zz_blank": "blank", "zz_good": "good"}
TIMEOUT = "2"   # seconds per check: enough for an honest probe, short for the hanging ones


def _cli(*args, env=None, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "autograder", "grade", *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kwargs)


def _processes_named(prefix):
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/comm") as handle:
                if handle.read().startswith(prefix):
                    found.append(int(entry))
        except (OSError, ValueError):
            pass
    return found


def _context(markers, port, token, out, blank):
    """The placeholders of tests/hostile.py."""
    return {"MARKERS": str(markers), "PORT": str(port), "UNIX": token + "u", "PID": str(os.getpid()),
            "REPO": str(ROOT), "OUT": str(out), "TOKEN": token, "BLANK_PRINT": fingerprint(blank),
            "FUNCTIONS": repr(SIMPLE_FUNCTIONS), "HARDCODED": hardcoded_book_module(),
            "SOLUTION": repr((SOLUTIONS / "ch03_attention" / "simple_attention.py").read_text())}


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    classdir, out, markers = root / "class", root / "graded", root / "markers"
    markers.mkdir()
    token = secrets.token_hex(5)
    # Listeners in the grader's process that the network attack aims at.
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    tcp.setblocking(False)
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    udp.setblocking(False)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind("\0" + token + "u")
    unix.listen(8)
    unix.setblocking(False)

    for name, base in NEIGHBOURS.items():
        copy_base(base, classdir / name)
    ctx = _context(markers, port, token, out, classdir / "zz_blank")
    for case in CASES:
        materialize(case, classdir / (case.folder or case.name), ctx)

    env = {**os.environ, "HOSTILE_SECRET": token}
    started = time.perf_counter()
    run = _cli(classdir, "--out", out, "--timeout", TIMEOUT, env=env)
    stdout, stderr = run.communicate(timeout=900)
    seconds = time.perf_counter() - started

    intrusions = []
    for listener in (tcp, unix):
        try:
            listener.accept()
            intrusions.append(f"connection on {listener.getsockname()!r}")
        except BlockingIOError:
            pass
    try:
        udp.recvfrom(64)
        intrusions.append("datagram on the UDP port")
    except BlockingIOError:
        pass
    for s in (tcp, udp, unix):
        s.close()
    results = {}
    for folder in sorted(classdir.iterdir()):
        path = out / f"{result_stem(folder.name)}.json"
        results[folder.name] = json.loads(path.read_text()) if path.exists() else None
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        grades = {row["student"]: row for row in csv.DictReader(handle)}
    return dict(root=root, out=out, markers=markers, token=token, rc=run.returncode, stdout=stdout,
                stderr=stderr, results=results, grades=grades, intrusions=intrusions, seconds=seconds)


def _row(bank, case):
    """The case's line in grades.csv (its name as the CSV writes it)."""
    return bank["grades"][csv_cell(display_name(case.folder or case.name))]


def test_the_class_run_completes_with_a_result_for_every_student(bank):
    assert bank["rc"] == 0, bank["stdout"] + bank["stderr"]          # 1 would mean "the grader failed"
    refused = {c.folder or c.name for c in CASES if not c.graded}
    missing = [name for name, result in bank["results"].items() if result is None and name not in refused]
    assert not missing, f"no result for {missing}: {bank['stdout']}"
    assert len(bank["grades"]) == len(CASES) + len(NEIGHBOURS), "grades.csv must list every student"
    assert len(CASES) >= 50


def test_nothing_printed_or_written_is_a_terminal_sequence_or_a_formula(bank):
    for stream in ("stdout", "stderr"):
        assert "\x1b" not in bank[stream] and "\x07" not in bank[stream], bank[stream][-2000:]
    for name in bank["grades"]:
        assert name[:1] not in "=+-@", f"grades.csv cell {name!r} would run as a formula"
    for case in CASES:
        if case.folder[:1] in ("=", "+", "-", "@"):
            assert "'" + case.folder in bank["grades"] and _row(bank, case)["score"] == str(case.score), case.folder


def test_the_class_report_lists_everyone_as_plain_text(bank):
    summary = json.loads((bank["out"] / "summary.json").read_text())
    assert summary["students"] == len(bank["grades"]) and summary["graded"] == sum(
        r is not None for r in bank["results"].values())
    page = (bank["out"] / "report.html").read_text()
    assert "\x1b" not in page and "\x07" not in page and page.count("<script") == 1
    assert [row["student"] for row in summary["rows"]] == [csv_name.removeprefix("'") if csv_name[1:2] in "=+-@"
                                                           else csv_name for csv_name in bank["grades"]]


def test_neighbours_keep_their_grades(bank):
    for name, base in NEIGHBOURS.items():
        result = bank["results"][name]
        assert result["score"] == (100 if base == "good" else 0), (name, result["score"])
        assert result["extra_data"]["isolation"] == "namespaces"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hostile_case_gets_exactly_its_score(bank, case):
    if not case.graded:   # refused as a whole: listed in grades.csv with no score and the reason
        row = _row(bank, case)
        assert row["score"] == "" and row["status"].startswith("not graded") and case.note in row["status"], row
        return
    result = bank["results"][case.folder or case.name]
    assert result is not None, f"{case.name}: no result (grader crash?)"
    assert result["score"] == case.score, (
        f"{case.name} ({case.category}): {result['score']} points, expected {case.score}; failed: "
        + "; ".join(f"{t['name']}: {t['output']}" for t in result["tests"] if t["status"] == "failed"))
    assert result["max_score"] == 100
    for test in result["tests"]:
        if test["status"] == "failed":   # a clear reason, in one line
            assert test["output"].strip() and "\n" not in test["output"], test
            assert "internal grader error" not in test["output"], test
    if case.note:
        texts = [result["output"]] + [t["output"] for t in result["tests"]]
        assert any(case.note in text for text in texts), (case.note, texts)


def test_nothing_escaped_the_sandbox(bank):
    assert not bank["intrusions"]
    assert not list(bank["markers"].iterdir()), "a submission's file was loaded or written by the grader"
    token = bank["token"]
    for path in (f"/tmp/pwned-{token}", f"/tmp/escape-{token}", ROOT / "pwned", bank["out"] / "evil.json"):
        assert not os.path.lexists(path), path
    deadline = time.monotonic() + 5
    while _processes_named(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_named(token), "a submission's process outlived its grading"


def test_summary(bank, capsys):
    rows = [(c, int(_row(bank, c)["score"] or 0)) for c in CASES]  # empty: not graded, no points
    undeserved = sum(max(0, got - c.score) for c, got in rows)
    crashes = sum(not _row(bank, c)["status"].startswith(("graded", "not graded")) for c in CASES)
    crashes += bank["rc"] != 0
    with capsys.disabled():
        print(f"\nhostile bank: {len(rows)} cases, {undeserved} undeserved points, {crashes} grader crashes, "
              f"class run {bank['seconds']:.1f} s")
    assert undeserved == 0 and crashes == 0


def test_an_interrupted_class_run_resumes_without_regrading(tmp_path):
    classdir, out = tmp_path / "class", tmp_path / "graded"
    bases = {"a_good": "good", "b_blank": "blank", "c_simple": "simple", "d_good": "good", "e_blank": "blank"}
    for name, base in bases.items():
        copy_base(base, classdir / name)
    run = _cli(classdir, "--out", out, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(out.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)   # the CLI and its zygote, mid-class
    run.wait()
    finished = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("*.json")}
    assert finished and len(finished) < len(bases), "the run was not interrupted midway"
    for data, _ in finished.values():
        json.loads(data)                 # no half-written result
    run = _cli(classdir, "--out", out)
    stdout, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stdout + stderr
    for name, (data, mtime) in finished.items():
        path = out / name
        assert path.read_bytes() == data and path.stat().st_mtime_ns == mtime, f"{name} was regraded"
    scores = {name: json.loads((out / f"{name}.json").read_text())["score"] for name in bases}
    assert scores == {"a_good": 100, "b_blank": 0, "c_simple": 15, "d_good": 100, "e_blank": 0}


def test_without_namespaces_the_report_says_so_loudly(tmp_path):
    from autograder.grading.runner import Grader
    folder = tmp_path / "blank"
    copy_base("simple", folder)
    with Grader(isolation="off", unsafe_same_uid=True) as grader:   # our own test data: trusted
        result = grader.grade(folder)
    assert result["score"] == 15
    assert result["extra_data"]["isolation"].startswith("limits only")
    assert result["output"].startswith("WARNING: the submission ran WITHOUT full isolation (limits only: ")
    assert result["extra_data"]["fully_isolated"] is False


@pytest.mark.parametrize("seed", [1, 2])
def test_a_class_of_random_hostile_and_honest_students_is_graded_to_the_end(tmp_path, seed):
    """Property: whatever mix of attacks and honest work a class holds, graded with two jobs,
    every honest student gets exactly their score, no attack earns a point it should not,
    the run ends within its budget and grades.csv lists everyone."""
    rng = random.Random(seed)
    classdir, out, markers = tmp_path / "class", tmp_path / "graded", tmp_path / "markers"
    markers.mkdir()
    honest = {f"honest_{i}": rng.choice(["good", "blank", "simple"]) for i in range(3)}
    for name, base in honest.items():
        copy_base(base, classdir / name)
    ctx = _context(markers, 9, secrets.token_hex(5), out, classdir / "honest_0")
    hostile = rng.sample(CASES, 4)
    for case in hostile:
        materialize(case, classdir / (case.folder or case.name), ctx)
    started = time.perf_counter()
    run = _cli(classdir, "--out", out, "--timeout", TIMEOUT, "--jobs", "2")
    stdout, stderr = run.communicate(timeout=300)
    assert time.perf_counter() - started < 240, "the class run went over its budget"
    assert run.returncode == 0, stdout + stderr
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        grades = {row["student"]: row for row in csv.DictReader(handle)}
    assert len(grades) == len(honest) + len(hostile)
    expected = {"good": 100, "blank": 0, "simple": 15}
    for name, base in honest.items():
        assert int(grades[name]["score"]) == expected[base], (name, grades[name], [c.name for c in hostile])
    for case in hostile:
        assert int(grades[csv_cell(display_name(case.folder or case.name))]["score"]) <= case.score, (case.name, grades)
    assert not list(markers.iterdir())


def test_a_result_that_cannot_be_written_costs_only_that_student(tmp_path):
    classdir, out = tmp_path / "class", tmp_path / "graded"
    for name in ("b_blank", "c_blank"):
        copy_base("blank", classdir / name)
    (out / "b_blank.json").mkdir(parents=True)   # where b's result goes: cannot be replaced by a file
    run = _cli(classdir, "--out", out, "--jobs", "1")
    stdout, stderr = run.communicate(timeout=300)
    assert run.returncode == 1, stdout + stderr               # a result was lost: the instructor must know
    assert "b_blank: graded (0), but the result was not saved: Is a directory" in stdout, stdout
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        grades = {row["student"]: row["status"] for row in csv.DictReader(handle)}
    assert grades["c_blank"] == "graded" and "not saved" in grades["b_blank"]   # the class went on
    assert json.loads((out / "c_blank.json").read_text())["score"] == 0
