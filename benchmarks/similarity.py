"""Seconds for ``python -m autograder similarity`` on a generated class of 200, and where they go.

The class comes from the chapter-3 banks (tests/similarity_class.py: the reference, every
alternative and every mutant in turn, every file of every student made unique: its own local
names, a comment, blank lines), a tenth of the students copying an earlier one with the names
changed again. Its results are written as a class run writes them (summary.json and a result JSON
per student) without grading: each mutant's parts fail three checks with the mutant's own wrong
answer, a copier gives its source's answers. Each round runs the command in a fresh process, as an
instructor does; then one run in this process says where the time goes. Prints the figures; asserts nothing.

    python benchmarks/similarity.py [--students 200] [--rounds 3]
"""
import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from similarity_class import ASSIGNMENT, generated_class, write  # noqa: E402
from autograder.grading import course  # noqa: E402
from autograder.grading.result import Check, SubmissionResult  # noqa: E402
from autograder.platforms import classreport, similarity  # noqa: E402


def results(students, origin):
    """{student: SubmissionResult} as grading would roughly give them (three checks a part)."""
    parts = course.get(ASSIGNMENT).parts
    out = {}
    for name in students:
        kind, what = origin[name]
        wrong = set(what.parts) if kind == "mutant" else set()
        checks = []
        for part in parts:
            for j in range(3):
                check = f"{part}: check {j}"
                if part in wrong:
                    digest = hashlib.sha256(f"{what.name}/{check}".encode()).hexdigest()[:16]
                    checks.append(Check(check, part, 0, 5, "failed", "wrong values", answer_digest=digest))
                else:
                    checks.append(Check(check, part, 5, 5, "passed", ""))
        out[name] = SubmissionResult.build(checks, [], "namespaces", 1.0, assignment=ASSIGNMENT, suites="0" * 16)
    return out


def write_graded(folder, graded):
    folder.mkdir(parents=True)
    students = []
    for name, result in graded.items():
        (folder / f"{name}.json").write_text(json.dumps(result.to_json()))
        students.append(classreport.Student(name, name, result, "graded", f"{name}.html", f"{name}.json", ASSIGNMENT))
    classreport.write(folder, students, "generated")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        students, origin, copied = generated_class(args.students)
        write(tmp / "submitted", students)
        write_graded(tmp / "graded", results(students, origin))
        size = sum(len(t) for s in students.values() for t in s.values())
        files = sum(len(s) for s in students.values())
        seconds, cpu = [], []
        for k in range(args.rounds):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "autograder", "similarity", str(tmp / "submitted"),
                                   "--assignment", ASSIGNMENT, "--graded", str(tmp / "graded"),
                                   "--out", str(tmp / f"out-{k}")], cwd=ROOT, capture_output=True, text=True)
            seconds.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if done.returncode:
                sys.exit(done.stdout + done.stderr)
        out = tmp / "out-0"
        csv_size, page_size = (out / "similarity.csv").stat().st_size, (out / "similarity.html").stat().st_size
        print(f"{args.students} students, {files} files, {size / 1024:.0f} KiB of code; "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
        print(f"python -m autograder similarity, fresh process: median {statistics.median(seconds):.2f} s "
              f"(min {min(seconds):.2f}, max {max(seconds):.2f}, {len(seconds)} rounds), CPU (its processes "
              f"together) median {statistics.median(cpu):.2f} s; "
              f"similarity.csv {csv_size / 1024:.0f} KiB, similarity.html {page_size / 1024:.0f} KiB")

        # where the time goes, in this process
        stages = {}
        mark = time.perf_counter()
        subs, notes = similarity.read_class(tmp / "submitted", ASSIGNMENT, [tmp / "graded"])
        stages["read the sources and results"] = time.perf_counter() - mark
        mark = time.perf_counter()
        texts = similarity.base_texts(ASSIGNMENT)
        boilerplate = similarity.base_hashes(texts)
        stages["fingerprint the course's own material"] = time.perf_counter() - mark
        for workers in sorted({1, similarity.default_workers(files)}):
            mark = time.perf_counter()
            cpu = time.process_time()
            prints, _ = similarity.fingerprint_class(subs, boilerplate, workers, base=texts.values())
            stages[f"fingerprint the class ({workers} process{'es' if workers > 1 else ''})"] = (
                time.perf_counter() - mark)
            if workers == 1:
                stages["  of which CPU in this process"] = time.process_time() - cpu
        mark = time.perf_counter()
        pairs = similarity.compare(subs, prints)
        stages["compare every pair"] = time.perf_counter() - mark
        mark = time.perf_counter()
        similarity.render(ASSIGNMENT, "generated", subs, pairs, prints, notes, similarity.THRESHOLD, 0.0)
        stages["the page (the flagged pairs side by side)"] = time.perf_counter() - mark
        for stage, took in stages.items():
            print(f"  {stage:<52} {took:6.2f} s")
        index = {s.folder: i for i, s in enumerate(subs)}
        planted = {frozenset((index[a], index[b])) for a, b in copied.items()}
        flagged = [p for p in pairs if p.similarity >= similarity.THRESHOLD]
        found = sum(frozenset((p.a, p.b)) in planted for p in flagged)
        top = [frozenset((p.a, p.b)) in planted for p in pairs[:len(planted)]]
        print(f"{len(planted)} planted copies: {found} of them among the {len(flagged)} pairs at or above "
              f"{similarity.THRESHOLD}; {sum(top)} of the top {len(planted)} pairs are planted copies (the others: "
              "students given the same mutant, or bank alternatives written with the same style of a module)")


if __name__ == "__main__":
    main()
