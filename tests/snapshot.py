"""Every file a class run writes for every bank, to prove a refactoring or a speed-up changed nothing.

    python tests/snapshot.py OUT            grade the reference, the blank stubs, every mutant and
                                            every alternative of every assignment as one class; the
                                            results land in OUT/ (times taken out)
    python tests/snapshot.py --diff A B     the files that differ between two snapshots; exit 1 if any

Take one on main, one on the branch, and diff them: scores, feedback, grades.csv, report.html and
summary.json are then byte-identical or the diff names where they are not. A result records the
digests of the suites and of the engine it was graded by (``DIGESTS``), which any change to them
changes: the diff compares files with those taken out and says how many differ only in them. Each student is a folder
``<kind>-<n>`` holding ``<assignment>/`` (so the assignment is found from the folder's name);
OUT/index.txt says which variant each student is.
"""
import html
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from banks import earlier_sources, load, mutated_sources, reference_sources, stub_sources  # noqa: E402
from autograder.grading import course  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# what a run may honestly vary: how long it took, and the feedback of mistakes that read memory
# never written or draw unseeded random numbers
VOLATILE = re.compile(r'"(execution_time|seconds|elapsed)": [0-9.e-]+|\d+\.\d+ s\b')


# the grader's own version, as a result records it (course.suites_digest, course.engine_digest)
DIGESTS = re.compile(rb'"(suites|engine)": "[0-9a-f]{16}"')

VARIES = ("mutant attn_scores_loop's outer loop skips the last token",
          "mutant dropout_attn_weights does not seed the generator")


def variants():
    """[(student folder name, assignment, description, {file: text or bytes})]"""
    found = []
    for a in course.assignments():
        found.append((f"{a.name}-reference", a.name, "the reference", reference_sources(a.name)))
        found.append((f"{a.name}-blank", a.name, "the blank stubs", stub_sources(a.name)))
        mutants = load(a.name, "mutants")
        for n, mutant in enumerate(mutants.MUTANTS if mutants else ()):
            found.append((f"{a.name}-m{n:03d}", a.name, f"mutant {mutant.name}", mutated_sources(a.name, mutant)))
        alternatives = load(a.name, "alternatives")
        for n, alternative in enumerate(alternatives.ALTERNATIVES if alternatives else ()):
            files = {**earlier_sources(a.name), **alternative.files()}
            found.append((f"{a.name}-a{n:03d}", a.name, f"alternative {alternative.name}", files))
    return found


def _untimed(match):
    """A time taken out; a JSON field keeps a value (a string), so the file is still JSON."""
    key = match.group(0).split(":")[0]
    return f'{key}: "<time>"' if key.startswith('"') else "<time>"


def take(out):
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=False)
    index = []
    with tempfile.TemporaryDirectory() as tmp:
        classdir = Path(tmp) / "class"
        for student, assignment, description, files in variants():
            folder = classdir / student / assignment
            folder.mkdir(parents=True)
            for name, data in files.items():
                (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
            index.append(f"{student}\t{description}")
        done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(classdir), "--out",
                               str(out / "graded"), "--jobs", "1"], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": "0"})  # a set's order, sorted() ties
    (out / "index.txt").write_text("\n".join(index) + "\n")
    (out / "stdout.txt").write_text(VOLATILE.sub("<time>", done.stdout.replace(str(out), "<out>")))
    for path in (out / "graded").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".md", ".html", ".csv", ".xml"):
            path.write_text(VOLATILE.sub(_untimed, path.read_text()))
    print(f"{len(index)} submissions graded into {out} (exit {done.returncode})")
    return done.returncode


def diff(a, b):
    a, b = Path(a), Path(b)
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    index = dict(line.split("\t") for line in (a / "index.txt").read_text().splitlines())
    varying = _feedback(a, index) | _feedback(b, index)  # which the class's pages and summary quote
    differ, digests_only, varies = [], [], {}
    for n in names:
        if not (a / n).is_file() or not (b / n).is_file():
            differ.append(n)
        elif (a / n).read_bytes() == (b / n).read_bytes():
            continue
        elif index.get(n.stem) in VARIES:
            varies[n] = index[n.stem]
        elif _without(a / n) == _without(b / n):
            digests_only.append(n)
        elif _without(a / n, varying) == _without(b / n, varying):
            varies[n] = "it quotes feedback that varies by design"
        else:
            differ.append(n)
    for name, why in varies.items():
        print(f"varies run to run by design: {name} ({why})")
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(names) - len(differ) - len(digests_only) - len(varies)} of {len(names)} files byte-identical")
    if digests_only:
        changed = ", ".join(sorted(_digest_names(a, b, digests_only)))
        print(f"{len(digests_only)} files differ only in the grader's digests ({changed}), identical otherwise")
    return 1 if differ else 0


def _without(path, texts=()):
    """The file with the grader's digests taken out, and each of ``texts``."""
    data = DIGESTS.sub(rb'"\1": "<digest>"', path.read_bytes())
    for text in texts:
        data = data.replace(text, b"<varies>")
    return data


def _feedback(snapshot, index):
    """Each line of feedback of the students whose feedback varies by design, as the class's
    files write it (plain, in JSON and in HTML)."""
    texts = set()
    for path in (snapshot / "graded").rglob("*.json"):
        if index.get(path.stem) in VARIES:
            for test in json.loads(path.read_text()).get("tests", []):
                for line in filter(None, str(test.get("output", "")).splitlines()):
                    texts |= {line.encode(), json.dumps(line)[1:-1].encode(), html.escape(line).encode()}
    return texts


def _digest_names(a, b, names):
    """Which of the digests changed between the two snapshots, in these files."""
    return {m.group(1).decode() for n in names for m in DIGESTS.finditer((a / n).read_bytes())
            if m.group(0) not in (b / n).read_bytes()}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--diff"] and len(sys.argv) == 4:
        sys.exit(diff(*sys.argv[2:]))
    if len(sys.argv) == 2:
        sys.exit(take(sys.argv[1]))
    sys.exit(__doc__)
