"""Who shares work beyond the book: a class's similarity report, ``similarity.csv`` and ``similarity.html``.

``python -m autograder similarity CLASS --assignment A --graded GRADED --out DIR``. Every honest
student types the book's listings, so whole-file similarity flags the whole class. Here two kinds
of evidence are weighed, each discounted by what the course gives everyone and by how common it is:

- **code**: each student's hand-in files are tokenized and fingerprinted by copydetect (names,
  strings and comments normalised away, so renamed variables change nothing; every k-gram of 25
  characters of the normalised code is a fingerprint). The fingerprints of the course's own
  material (the stubs, the reference solution and what it builds on, the support files, the
  notebook's code) are removed first: copydetect's boilerplate. A fingerprint left that k students
  share counts 1/(k - 1) for each pair of them. A pair's code score is the weighted share of the
  smaller submission's own code that the two have in common, times a confidence that grows with
  how much that is (``1 - exp(-W / CONFIDENT)``);
- **shared wrong answers**: the digest of each failing check's answer, computed by the grader from
  the answer it received (``Check.answer_digest``). The same wrong answer given by k students
  counts 1/(k - 1) for each pair of them; per part (a mistake costs only its own part) the
  rarest one shared counts, and the parts add up as independent evidence
  (``1 - prod(1 - ANSWER_WEIGHT * w)``).

A pair's similarity is ``1 - (1 - code) * (1 - answers)``, in [0, 1]. It is evidence for a person
to read, never a verdict: nothing here changes a grade or any feedback. Student code is read as
text (``sandbox.submission``: no link followed, sizes bounded) and tokenized, never run; the
results are read as data (``shards``: the class run's or the merged shards' summary.json).
"""
import bisect
import csv
import html
import io
import json
import math
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from . import classreport, report, shards
from .files import display_name, own_folder, write_atomic
from ..grading import course
from ..paths import ROOT
from ..sandbox.submission import SubmissionError, printable

# copydetect's own defaults: k-grams of 25 characters of normalised code, window 1 (every k-gram kept)
NOISE = 25
WINDOW = 1
CONFIDENT = 100       # weighted shared fingerprints for a code score of 1 - 1/e of its share (~4 statements)
ANSWER_WEIGHT = 0.6   # what one wrong answer that only the two gave adds, on its own
THRESHOLD = 0.4       # pairs at or above it are shown on the page
SHOWN = 40            # at most this many pairs on the page
CONTEXT = 3           # lines kept around a shared region on the page
FILE_PAIRS = 6        # at most this many file pairs shown per pair
CSV_HEADER = ("student_a", "student_b", "similarity", "code", "answers", "shared_code_a", "shared_code_b",
              "shared_fingerprints", "shared_wrong_answers", "rarest_wrong_answer_students", "wrong_answer_checks")


class SimilarityError(Exception):
    """The class cannot be compared (the message says why): exit 2."""


@dataclass
class Submission:
    """One student's hand-in for the assignment, as text, and what their result recorded."""
    folder: str                        # the student's folder in the class (results are keyed by it)
    name: str                          # as shown
    files: dict                        # {file name: source text}: the hand-in files found
    answers: dict = field(default_factory=dict)  # {(check name, digest): part} of failed checks
    graded: bool = False               # a result was found
    failed: bool = False               # that result failed some check


@dataclass
class Pair:
    a: int
    b: int
    similarity: float
    code: float
    answers: float
    share_a: float                     # of a's own fingerprints, the share b has too
    share_b: float
    shared: int                        # fingerprints both have (beyond the course's)
    wrong: list                        # [(check name, students who gave that answer)], rarest first


# -- the course's own material -----------------------------------------------------------------

def base_texts(assignment):
    """{where: text} of everything the course gives every student for ``assignment``: its stubs,
    public tests and support files (assignments/), its reference (solutions/), the same of each
    module of an earlier assignment it builds on, and the code cells of its notebooks."""
    a = course.get(assignment)
    folders = [a.stubs, a.solutions] + [course.get(name).stubs for name in a.builds_on] + \
              [course.get(name).solutions for name in a.builds_on]
    texts = {}
    for folder in folders:
        for path in sorted(folder.glob("*.py")):
            texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for name in a.support:
        path = ROOT / "autograder" / "support" / name
        if path.is_file():
            texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for path in sorted(a.source.glob("*.ipynb")) if a.source.is_dir() else ():
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        code = ["".join(c["source"]) if isinstance(c.get("source"), list) else c.get("source", "")
                for c in cells if c.get("cell_type") == "code"]
        # IPython's magics are not Python: left out
        texts[str(path.relative_to(ROOT))] = "\n".join(line for cell in code for line in cell.splitlines()
                                                       if not line.lstrip().startswith(("%", "!")))
    return texts


# -- reading the class ---------------------------------------------------------------------------

def _results(graded, assignment):
    """{student folder: SubmissionResult} of ``assignment`` from graded folders (a class run's --out,
    a merge's, or each shard's): read as ``merge`` reads them, every file checked."""
    found = {}
    for folder in graded:
        try:
            _, students = shards._load_shard(Path(folder))
        except shards.MergeError as exc:
            raise SimilarityError(str(exc)) from None
        for student in students:
            if student.result is None or (student.result.assignment or student.assignment) != assignment:
                continue
            if student.folder in found:
                raise SimilarityError(f"{display_name(student.folder)} has two results of {assignment} "
                                      f"(in two of the graded folders given)")
            found[student.folder] = student.result
    return found


def read_class(class_folder, assignment, graded=()) -> tuple:
    """([Submission], notes): every student of ``class_folder`` who hands in ``assignment``, their
    hand-in files (read as text, never run) and the wrong answers their result records."""
    class_folder = Path(class_folder)
    if not class_folder.is_dir() or class_folder.is_symlink():
        raise SimilarityError(f"{class_folder} is not a folder of submissions")
    results = _results(graded, assignment)
    a = course.get(assignment)
    wanted = [f.module for f in a.hand_in]
    submissions, notes, unread = [], [], []
    for student in sorted(p for p in class_folder.iterdir() if not p.name.startswith(".")):
        if student.is_symlink() or not student.is_dir():
            continue
        found = course.find(student, assignment)
        sources = {}
        for folder, name in found.submissions:
            if name != assignment:
                continue
            try:
                sources, _ = course.submission_sources(folder, assignment)
            except SubmissionError:
                sources = {}
        files = {f"{m}.py": sources[m] for m in wanted if m in sources}
        result = results.pop(student.name, None)
        if not files:
            if result is not None:
                unread.append(display_name(student.name))
            continue
        answers = {}
        for check in result.checks if result else ():
            if not check.passed and isinstance(check.answer_digest, str):
                answers[check.name, check.answer_digest] = check.part
        submissions.append(Submission(student.name, printable(display_name(student.name)), files, answers,
                                      result is not None, bool(result and result.failed)))
    if unread:
        notes.append(f"graded, but no {assignment} file found in the class folder: {', '.join(unread)}")
    if results:
        notes.append(f"results of students not in the class folder, left out: "
                     f"{', '.join(display_name(n) for n in sorted(results))}")
    ungraded = [s.name for s in submissions if not s.graded]
    if ungraded and graded:
        notes.append(f"no result (code compared, wrong answers not): {', '.join(ungraded)}")
    if any(s.failed for s in submissions) and not any(s.answers for s in submissions):
        notes.append("no result records the digest of a wrong answer (graded by an earlier version: "
                     "`grade --regrade` records them): wrong answers not compared")
    return submissions, notes


# -- fingerprints ------------------------------------------------------------------------------

def _copydetect():
    """copydetect's fingerprint and comparison (its import loads matplotlib.pyplot: without a display)."""
    classreport._matplotlib()
    from copydetect import CodeFingerprint, compare_files
    return CodeFingerprint, compare_files


def fingerprint(name, text, boilerplate=None):
    """copydetect's CodeFingerprint of one Python file's text (tokenized by pygments, never run)."""
    CodeFingerprint, _ = _copydetect()
    return CodeFingerprint(name, NOISE, WINDOW, boilerplate=boilerplate, language="python", fp=io.StringIO(text))


def base_hashes(texts):
    """The fingerprints of the course's own material, as copydetect takes boilerplate (sorted, unique)."""
    import numpy as np
    hashes = set()
    for name, text in texts.items():
        hashes |= fingerprint(name, text).hashes
    return np.array(sorted(hashes), dtype=np.int64)


def _fingerprint_all(jobs, boilerplate, keep_text=True):
    prints = [fingerprint(name, text, boilerplate) for name, text in jobs]
    if not keep_text:  # a worker's: the parent has the text, so it does not travel back
        for fp in prints:
            fp.raw_code = None
    return prints


def default_workers(files):
    """Processes that tokenize ``files`` files: one per core where there are enough to pay for them."""
    return max(1, min(os.cpu_count() or 1, files // 100))


def fingerprint_class(submissions, boilerplate, workers=None, base=()) -> list:
    """[{file name: CodeFingerprint}] per submission, the course's material removed. Each distinct
    text is tokenized once (a file handed in as the course gave it, ``base``, has no fingerprint of
    its own: it is not tokenized at all), on ``workers`` processes (default: one per core for a
    large class; pygments' lexer is most of the time)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    CodeFingerprint, _ = _copydetect()
    texts = {}
    for s in submissions:
        for name, text in s.files.items():
            texts.setdefault(text, f"{s.folder}/{name}")
    given = set(base)
    jobs = [(name, text) for text, name in texts.items() if text not in given]
    workers = workers or default_workers(len(jobs))
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        chunks = [jobs[i::workers] for i in range(workers)]
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            done = list(pool.map(_fingerprint_all, chunks, [boilerplate] * workers, [False] * workers))
        prints = [None] * len(jobs)
        for i, chunk in enumerate(done):
            prints[i::workers] = chunk
        for (_, text), fp in zip(jobs, prints):
            fp.raw_code = text
    else:
        prints = _fingerprint_all(jobs, boilerplate)
    made = {text: fp for (_, text), fp in zip(jobs, prints)}
    for text in texts:
        if text not in made:  # the course's own file: nothing of it is the student's
            made[text] = CodeFingerprint("course", NOISE, WINDOW, filter=False, fp=io.StringIO(""))
    return [{name: made[text] for name, text in s.files.items()} for s in submissions]


# -- the scores --------------------------------------------------------------------------------

def rarity(students):
    """The weight of a piece of evidence that ``students`` students share: 1 for two, 1/(k - 1) for k."""
    return 1.0 / (students - 1)


def code_scores(own) -> tuple:
    """(weighted shared, shared, code score) matrices, n x n, from each student's own fingerprints
    (sets, the course's removed). A fingerprint that k students have weighs 1/(k - 1) (1 when only
    one student has it); a pair's share is what they have in common, weighed, over the smaller of
    their own code, weighed. Fingerprints with the same students are added up together: the work is
    one update per distinct group of students, not one per fingerprint."""
    import numpy as np
    n = len(own)
    postings = defaultdict(list)
    for i, hashes in enumerate(own):
        for h in hashes:
            postings[h].append(i)
    groups = defaultdict(int)
    for who in postings.values():
        groups[tuple(who)] += 1
    weighted, shared, mass = np.zeros((n, n)), np.zeros((n, n)), np.zeros(n)
    for who, count in groups.items():
        if len(who) == 1:
            mass[who[0]] += count
            continue
        weight = count * rarity(len(who))
        mass[list(who)] += weight
        index = np.ix_(who, who)
        weighted[index] += weight
        shared[index] += count
    np.fill_diagonal(weighted, 0)
    np.fill_diagonal(shared, 0)
    smaller = np.minimum.outer(mass, mass)
    share = np.divide(weighted, smaller, out=np.zeros_like(weighted), where=smaller > 0)
    code = np.clip(share, 0, 1) * (1 - np.exp(-weighted / CONFIDENT))
    return weighted, shared, code


def answer_scores(answers) -> tuple:
    """({(a, b): answers score}, {(a, b): [(check, students)]}) from each student's {(check, digest): part}."""
    postings = defaultdict(list)
    for i, given in enumerate(answers):
        for key in given:
            postings[key].append(i)
    best, listed = defaultdict(dict), defaultdict(list)
    for key, who in postings.items():
        if len(who) < 2:
            continue
        weight = rarity(len(who))
        part = answers[who[0]][key]
        for x in range(len(who)):
            for y in range(x + 1, len(who)):
                pair = (who[x], who[y])
                best[pair][part] = max(best[pair].get(part, 0.0), weight)
                listed[pair].append((key[0], len(who)))
    scores = {pair: 1 - math.prod(1 - ANSWER_WEIGHT * w for w in parts.values()) for pair, parts in best.items()}
    return scores, {pair: sorted(found, key=lambda c: (c[1], c[0])) for pair, found in listed.items()}


def compare(submissions, prints):
    """Every pair, the most similar first: [Pair]."""
    own = [set().union(*(fp.hashes for fp in files.values())) for files in prints]
    weighted, shared, code = code_scores(own)
    answers, wrong = answer_scores([s.answers for s in submissions])
    sizes = [len(h) for h in own]
    pairs = []
    for a in range(len(submissions)):
        for b in range(a + 1, len(submissions)):
            ans = answers.get((a, b), 0.0)
            c = float(code[a, b])
            pairs.append(Pair(a, b, 1 - (1 - c) * (1 - ans), c, ans,
                              float(shared[a, b] / sizes[a]) if sizes[a] else 0.0,
                              float(shared[a, b] / sizes[b]) if sizes[b] else 0.0,
                              int(shared[a, b]), wrong.get((a, b), [])))
    pairs.sort(key=lambda p: (-round(p.similarity, 9), submissions[p.a].folder, submissions[p.b].folder))
    return pairs


# -- the outputs -------------------------------------------------------------------------------

def _number(x):
    return f"{x:.4f}"


def csv_text(submissions, pairs):
    """similarity.csv: every pair, the most similar first; names a spreadsheet would run are escaped."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for p in pairs:
        rarest = p.wrong[0][1] if p.wrong else ""
        writer.writerow([report.csv_cell(submissions[p.a].name), report.csv_cell(submissions[p.b].name),
                         _number(p.similarity), _number(p.code), _number(p.answers), _number(p.share_a),
                         _number(p.share_b), p.shared, len(p.wrong), rarest,
                         report.csv_cell("; ".join(dict.fromkeys(check for check, _ in p.wrong)))])
    return out.getvalue()


def _escape(text):
    return html.escape(printable(text), quote=True)


def _regions(slices):
    """copydetect's slices (2 x N: starts, ends, in the raw text) as sorted, merged (start, end)."""
    pairs = sorted((int(s), int(e)) for s, e in zip(*slices)) if len(slices) and len(slices[0]) else []
    merged = []
    for start, end in pairs:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _code_html(text, regions):
    """The file with its shared regions marked, lines far from any region folded away; every
    character escaped (and controls, bidi overrides included, shown as '?')."""
    lines, starts, at = text.split("\n"), [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    marked = set()
    for start, end in regions:
        i = max(0, bisect.bisect_right(starts, start) - 1)  # the line the region starts on
        while i < len(lines) and starts[i] < end:
            marked.add(i)
            i += 1
    keep = {j for i in marked for j in range(i - CONTEXT, i + CONTEXT + 1) if 0 <= j < len(lines)}
    out, skipped = [], 0
    for i, line in enumerate(lines):
        if i not in keep:
            skipped += 1
            continue
        if skipped:
            out.append(f'<span class="fold">⋯ {skipped} line{"s" if skipped > 1 else ""} ⋯</span>')
            skipped = 0
        cells, pos = [], starts[i]
        end_of_line = pos + len(line)
        for start, end in regions:
            if end <= pos or start >= end_of_line:
                continue
            s, t = max(start, pos), min(end, end_of_line)
            cells.append(_escape(text[pos:s]) + "<mark>" + _escape(text[s:t]) + "</mark>")
            pos = t
        cells.append(_escape(text[pos:end_of_line]))
        out.append(f'<span class="ln">{i + 1}</span>{"".join(cells)}')
    if skipped:
        out.append(f'<span class="fold">⋯ {skipped} line{"s" if skipped > 1 else ""} ⋯</span>')
    return "\n".join(out)


def _file_pairs(prints_a, prints_b):
    """[(file of a, file of b, regions in a, regions in b)] of the file pairs that share fingerprints
    beyond the course's: a file beside the other's file of the same name first, then the most shared
    first (copydetect's compare_files gives the regions)."""
    _, compare_files = _copydetect()
    found = []
    for name_a, fa in prints_a.items():
        for name_b, fb in prints_b.items():
            common = len(fa.hashes & fb.hashes)
            if common:
                _, _, (slices_a, slices_b) = compare_files(fa, fb)
                found.append((common, name_a, name_b, _regions(slices_a), _regions(slices_b)))
    found.sort(key=lambda f: (f[1] != f[2], -f[0], f[1], f[2]))
    return [f[1:] for f in found[:FILE_PAIRS]]


STYLE = classreport.STYLE + """
.verdict { background: #fff4e5; border-left: 4px solid #d08a00; padding: .6em 1em; margin: .8em 0; }
.pair { border-top: 2px solid #ddd; margin-top: 1.4em; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: .8em; }
.sides pre { margin: 0; background: #f6f7f9; padding: .5em .6em; border-radius: 6px; overflow-x: auto;
             font-size: .8em; line-height: 1.35; white-space: pre; max-height: 40em; overflow-y: auto; }
.sides h4 { margin: .6em 0 .2em; font-size: .95em; overflow-wrap: anywhere; }
.sides > div { min-width: 0; }
mark { background: #ffe066; }
.ln { display: inline-block; width: 3.2em; color: #999; user-select: none; }
.fold { color: #888; font-style: italic; }
"""


def render(assignment, title, submissions, pairs, prints, notes, threshold, seconds):
    """similarity.html: the pairs at or above ``threshold`` (at most SHOWN), each with its evidence and
    the two submissions side by side, shared regions beyond the course's marked. No script, nothing
    loaded (its Content-Security-Policy forbids both), every name and line of code escaped."""
    flagged = [p for p in pairs if p.similarity >= threshold]
    shown = flagged[:SHOWN]
    name = lambda i: _escape(submissions[i].name)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
           f"<title>Similarity beyond the course: {_escape(title)} / {_escape(assignment)}</title>",
           '<link rel="icon" href="data:,">', f"<style>{STYLE}</style></head><body>",
           f"<header><h1>Similarity beyond the course: {_escape(title)} / {_escape(assignment)}</h1>",
           '<p class="verdict"><strong>Evidence for a person to read, never a verdict.</strong> A high score says '
           "where to look: two submissions share code beyond what the course gives everyone, or the same rare wrong "
           "answers. Students may have worked together as allowed, found the same idea, or used the same outside "
           "source. Nothing on this page changes a grade or any feedback.</p>",
           f'<p class="lead"><span data-stat="students">{len(submissions)}</span> students compared '
           f'(<span data-stat="pairs">{len(pairs)}</span> pairs) in {seconds:.1f} s; '
           f'<span data-stat="flagged">{len(flagged)}</span> pair{"s" if len(flagged) != 1 else ""} at or above '
           f"{threshold:g}{f', the first {SHOWN} shown' if len(flagged) > SHOWN else ''}. Every pair is in "
           "<code>similarity.csv</code>.</p></header>"]
    if notes:
        out.append("<ul class=\"notes\">" + "".join(f"<li>{_escape(n)}</li>" for n in notes) + "</ul>")
    out.append('<h2 id="pairs">Pairs, the most similar first</h2>')
    if shown:
        rows = []
        for i, p in enumerate(shown):
            wrong = f"{len(p.wrong)} (rarest: {p.wrong[0][1]} students)" if p.wrong else "none"
            rows.append([f'<td class="num">{i + 1}</td>', f'<td><a href="#pair-{i + 1}">{name(p.a)}</a></td>',
                         f'<td><a href="#pair-{i + 1}">{name(p.b)}</a></td>',
                         f'<td class="num">{p.similarity:.2f}</td>', f'<td class="num">{p.code:.2f}</td>',
                         f'<td class="num">{p.answers:.2f}</td>',
                         f'<td class="num">{p.share_a:.0%} / {p.share_b:.0%}</td>', f"<td>{wrong}</td>"])
        out.append(classreport._table(["#", "student", "student", "similarity", "code", "wrong answers",
                                       "own code shared", "shared wrong answers"], rows, "pairs"))
    else:
        out.append(f"<p>No pair reaches {threshold:g}: no two submissions share much beyond the course's material "
                   "or a rare wrong answer.</p>")
    for i, p in enumerate(shown):
        out.append(f'<section class="pair" id="pair-{i + 1}"><h3>{i + 1}. {name(p.a)} and {name(p.b)}: '
                   f"{p.similarity:.2f}</h3>")
        out.append(f"<p>Code: {p.code:.2f} ({p.shared} fingerprints beyond the course's in common: "
                   f"{p.share_a:.0%} of {name(p.a)}'s own, {p.share_b:.0%} of {name(p.b)}'s own). "
                   f"Wrong answers: {p.answers:.2f}.</p>")
        if p.wrong:
            out.append("<p>The same wrong answer, on these checks:</p><ul class=\"wrong\">" + "".join(
                f"<li>{_escape(check)}: given by {k} student{'s' if k != 1 else ''} of the class</li>"
                for check, k in p.wrong) + "</ul>")
        for file_a, file_b, regions_a, regions_b in (_file_pairs(prints[p.a], prints[p.b]) if p.shared else []):
            out.append('<div class="sides">')
            for who, file, regions in ((p.a, file_a, regions_a), (p.b, file_b, regions_b)):
                text = submissions[who].files[file]
                out.append(f"<div><h4>{name(who)}: {_escape(file)}</h4><pre>{_code_html(text, regions)}</pre></div>")
            out.append("</div>")
        out.append("</section>")
    out.append('<footer class="small"><p>Written by <code>python -m autograder similarity</code>. Code: copydetect '
               f"fingerprints (k-grams of {NOISE} characters of the code with names, strings and comments normalised), "
               "the course's stubs, reference and support files removed first; a fingerprint k students share counts "
               "1/(k - 1). Wrong answers: the digest of each failed check's answer, recorded by the grader; the same "
               "answer from k students counts 1/(k - 1). Marked: the regions the two share beyond the course's "
               f'material. <a href="{quote("similarity.csv")}">similarity.csv</a> holds every pair.</p></footer>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def run(class_folder, assignment, graded, out, threshold=THRESHOLD, title=None, workers=None) -> tuple:
    """Compare the class and write ``out``/similarity.csv and similarity.html; returns (submissions,
    pairs, notes, seconds). Raises SimilarityError."""
    started = time.perf_counter()
    submissions, notes = read_class(class_folder, assignment, graded)
    if len(submissions) < 2:
        raise SimilarityError(f"{class_folder}: fewer than two students hand in {assignment}: nothing to compare")
    texts = base_texts(assignment)
    boilerplate = base_hashes(texts)
    prints = fingerprint_class(submissions, boilerplate, workers, base=texts.values())
    pairs = compare(submissions, prints)
    out = Path(out)
    try:
        own_folder(out)
    except OSError as exc:
        raise SimilarityError(f"{out}: the folder cannot be used: {exc.strerror}") from None
    write_atomic(out / "similarity.csv", csv_text(submissions, pairs))
    seconds = time.perf_counter() - started
    page = render(assignment, title or display_name(Path(class_folder).resolve().name), submissions, pairs, prints,
                  notes, threshold, seconds)
    write_atomic(out / "similarity.html", page)
    return submissions, pairs, notes, time.perf_counter() - started


def main(args) -> int:
    """``python -m autograder similarity``: exit 0 written, 2 bad input."""
    class_folder = Path(args.class_folder)
    graded = [Path(g) for g in args.graded] if args.graded else []
    if not graded:
        default = Path("graded") / class_folder.resolve().name  # where `grade` writes by default
        graded = [default] if (default / "summary.json").is_file() else []
    out = Path(args.out) if args.out else (graded[0] if graded else Path("graded") / class_folder.resolve().name) \
        / classreport.similarity_folder(args.assignment)
    try:
        submissions, pairs, notes, seconds = run(class_folder, args.assignment, graded, out, args.threshold)
    except SimilarityError as exc:
        print(printable(f"error: {exc}"), file=sys.stderr)
        return 2
    flagged = [p for p in pairs if p.similarity >= args.threshold]
    print(printable(f"compared {len(submissions)} students of {args.assignment} ({len(pairs)} pairs) in {seconds:.1f} s"
                    f"{'' if graded else ' (no results given: code only)'}: {len(flagged)} pair"
                    f"{'s' if len(flagged) != 1 else ''} at or above {args.threshold:g}; {out / 'similarity.html'}, "
                    f"every pair in {out / 'similarity.csv'}"))
    for p in flagged[:5]:
        print(printable(f"  {p.similarity:.2f}  {submissions[p.a].name} and {submissions[p.b].name} (code {p.code:.2f}, "
                        f"wrong answers {p.answers:.2f})"))
    for note in notes:
        print(printable(f"note: {note}"))
    print("evidence for a person to read, never a verdict: no grade or feedback changed")
    return 0
