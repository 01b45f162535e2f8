"""Size of report.html and seconds to write it (summary.json included) for a large class.

The class is made from the results of an earlier class run (its summary.json and result JSONs):
``--students`` students, each given one of those results in turn under a name of its own. Each
round writes the report in a fresh process, as a class run does (matplotlib's import included);
prints the median and the spread.

    python -m autograder grade some-class/ --out graded/some-class
    python benchmarks/class_report.py graded/some-class [--students 200] [--rounds 5]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUND = """
import json, sys, time
from pathlib import Path
from autograder import classreport
rows = json.loads(Path(sys.argv[1]).read_text())
students = [classreport.Student(r["student"], r["student"], r["result"], r["status"], r["feedback"], None) for r in rows]
started = time.perf_counter()
classreport.write(Path(sys.argv[2]), students, "benchmark")
print(time.perf_counter() - started)
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graded", type=Path, help="a class run's output folder")
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    source = json.loads((args.graded / "summary.json").read_text())["rows"]
    rows = []
    for i in range(args.students):
        row = source[i % len(source)]
        result = json.loads((args.graded / row["result"]).read_text()) if row.get("result") else None
        rows.append({"student": f"student-{i:04d}", "result": result, "status": row["status"],
                     "feedback": f"student-{i:04d}.md" if result else None})
    seconds = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "rows.json").write_text(json.dumps(rows))
        for _ in range(args.rounds):
            done = subprocess.run([sys.executable, "-c", ROUND, str(Path(tmp) / "rows.json"), tmp], cwd=ROOT,
                                  capture_output=True, text=True)
            if done.returncode:
                sys.exit(done.stderr)
            seconds.append(float(done.stdout))
        size = (Path(tmp) / "report.html").stat().st_size
        summary = (Path(tmp) / "summary.json").stat().st_size
    print(f"{args.students} students: report.html {size / 1024:.0f} KiB, summary.json {summary / 1024:.0f} KiB; "
          f"written in median {statistics.median(seconds):.2f} s (min {min(seconds):.2f}, max {max(seconds):.2f}, "
          f"{len(seconds)} fresh processes)")


if __name__ == "__main__":
    main()
