"""Who shares work beyond the book: a class's similarity report, ``similarity.csv`` and ``similarity.html``.

``python -m autograder similarity CLASS --assignment A --graded GRADED --out DIR``. Every honest
student types the book's listings, so whole-file similarity flags the whole class. Here two kinds
of evidence are weighed, each discounted by what the course gives everyone and by how common it is:

- **code**: each student's hand-in files are parsed (Python's ``ast``, never run) and every
  statement is a fingerprint: its canonical text, with the names the file binds as one, literals
  as their kind, no-op wrappers (``[x][0]``, ``x + 0``) dropped, and the dead statements (``pass``,
  ``if False:``, an expression with no call, an assignment nothing reads, what follows a
  ``return``) left out first. A file is its set of fingerprints: reordering its statements,
  renaming its names or padding it with dead code changes nothing. The fingerprints of the
  course's own material (the stubs, the reference solution and what it builds on, the support
  files, the notebook's code) are removed first: base code. A fingerprint left that k students
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
text (``sandbox.submission``: no link followed, sizes bounded) and parsed, never run; the
results are read as data (``shards``: the class run's or the merged shards' summary.json).
"""
import ast
import bisect
import csv
import hashlib
import html
import io
import json
import math
import os
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from . import classreport, report, shards
from .files import display_name, own_folder, write_atomic
from ..grading import course
from ..paths import ROOT
from ..sandbox.submission import SubmissionError, printable

CONFIDENT = 4         # weighted shared statements for a code score of 1 - 1/e of its share
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

OWN = "_"                              # every name the file itself binds, normalised to one
COMMUTATIVE = (ast.Add, ast.Mult)      # operands put in a canonical order
IDENTITY = ((ast.Add, 0), (ast.Sub, 0), (ast.Mult, 1), (ast.Div, 1), (ast.Pow, 1))  # x op c is x
LISTS = ("body", "orelse", "finalbody", "handlers", "cases")  # the statements nested in a statement


def _binds(tree):
    """(names, attribute names) a file binds: the names assigned, defined, imported and its
    parameters; the attributes it sets and its functions (methods are read as attributes). They are
    the student's own, normalised away; what it only reads (torch, range, .softmax) stays."""
    names, attributes = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            attributes.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
            attributes.add(node.name)
        elif isinstance(node, (ast.ClassDef, ast.ExceptHandler)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names, attributes


def _targets(stmt):
    """The assignment targets of ``stmt`` ([] where it assigns nothing)."""
    return stmt.targets if isinstance(stmt, ast.Assign) else \
        [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []


def _reads(tree):
    """The names read somewhere other than in assignments to themselves (``x = x + 1`` alone reads
    nothing that counts)."""
    loads = Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    for stmt in ast.walk(tree):
        targets = {n.id for t in _targets(stmt) for n in ast.walk(t) if isinstance(n, ast.Name)}
        if targets and getattr(stmt, "value", None) is not None:
            loads.subtract(n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name) and n.id in targets)
    return {name for name, count in loads.items() if count > 0}


def _dead(stmt, reads, local):
    """Whether ``stmt`` does nothing: ``pass``, an expression without a call (a docstring, ``x``,
    ``(x)``), or, in a function, an assignment to names that nothing reads."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr):
        return not any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr))
                       for n in ast.walk(stmt.value))
    targets = _targets(stmt)
    names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return local and bool(targets) and all(isinstance(t, (ast.Name, ast.Tuple, ast.List, ast.Starred))
                                           for t in targets) and not names & reads


def _live(body, reads, local, removed):
    """``body`` without its dead statements: those ``_dead`` says, the branch an ``if``/``while`` on a
    constant never takes (the one it always takes kept in its place) and what follows a ``return``,
    ``raise``, ``break`` or ``continue``. ``removed`` counts them."""
    out = []
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.While)) and isinstance(stmt.test, ast.Constant) \
                and not (isinstance(stmt, ast.While) and stmt.test.value):
            out += _live(stmt.body if stmt.test.value else stmt.orelse, reads, local, removed)
            removed[0] += 1
            continue
        if _dead(stmt, reads, local):
            removed[0] += 1
            continue
        _prune(stmt, reads, local or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)), removed)
        out.append(stmt)
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            removed[0] += len(body) - body.index(stmt) - 1
            break
    return out


def _prune(node, reads, local, removed):
    for name in LISTS:
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            setattr(node, name, _live(value, reads, local, removed))
        elif isinstance(value, list):  # except handlers, match cases
            for child in value:
                _prune(child, reads, local, removed)


def _unwrapped(node):
    """``node`` without the wrappers that change nothing: ``[x][0]``, ``(x,)[0]``, ``x + 0``, ``0 + x``,
    ``x * 1``, ``x / 1``, ``x if True else y``."""
    while True:
        if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.List, ast.Tuple)) \
                and len(node.value.elts) == 1 and isinstance(node.slice, ast.Constant) \
                and node.slice.value == 0 and not isinstance(node.value.elts[0], ast.Starred):
            node = node.value.elts[0]
        elif isinstance(node, ast.BinOp) and any(isinstance(node.op, op) and isinstance(node.right, ast.Constant)
                                                 and node.right.value == c for op, c in IDENTITY):
            node = node.left
        elif isinstance(node, ast.BinOp) and isinstance(node.op, COMMUTATIVE) and \
                isinstance(node.left, ast.Constant) and node.left.value == (0 if isinstance(node.op, ast.Add) else 1):
            node = node.right
        elif isinstance(node, ast.IfExp) and isinstance(node.test, ast.Constant):
            node = node.body if node.test.value else node.orelse
        else:
            return node


def _canon(node, own):
    """The canonical text of a statement's own code (its nested statements left out: they are
    fingerprinted on their own): the file's own names (``own``, as ``_binds`` gives them) as one,
    literals as their kind, no-op wrappers dropped, ``x += y`` as ``x = x + y``, the operands of
    ``+`` and ``*`` in a canonical order."""
    if isinstance(node, str):
        return OWN if node in own[0] else node
    if not isinstance(node, ast.AST):
        return repr(node)
    node = _unwrapped(node)
    if isinstance(node, ast.Name):
        return OWN if node.id in own[0] else node.id
    if isinstance(node, ast.Attribute):
        return f"Attribute({_canon(node.value, own)} {OWN if node.attr in own[1] else node.attr})"
    if isinstance(node, ast.Constant):
        return type(node.value).__name__
    if isinstance(node, ast.AugAssign):
        node = ast.Assign([node.target], ast.BinOp(node.target, node.op, node.value))
    parts = []
    for name, value in ast.iter_fields(node):
        if name in ("ctx", "type_comment", "kind") or (name in LISTS and isinstance(value, list)
                                                       and value and not isinstance(value[0], ast.expr)):
            continue
        parts.append("[" + ",".join(_canon(v, own) for v in value) + "]" if isinstance(value, list)
                     else _canon(value, own))
    if isinstance(node, ast.BinOp) and isinstance(node.op, COMMUTATIVE):
        parts[0], parts[2] = sorted((parts[0], parts[2]))
    return f"{type(node).__name__}({' '.join(parts)})"


def _nested(body):
    """Every statement (and except handler, match case) in ``body``, nested ones included."""
    for node in body:
        yield node
        for name in LISTS:
            value = getattr(node, name, None)
            if isinstance(value, list) and value and not isinstance(value[0], ast.expr):
                yield from _nested(value)


def fingerprint(text, base=frozenset()):
    """{fingerprint: [(start, end) of its lines in ``text``]} of one Python file's text (parsed,
    never run), the fingerprints in ``base`` left out; None where the text is not Python. A
    fingerprint is one statement's canonical text, its dead statements and no-op wrappers dropped
    first (``_canon``): a file's fingerprints do not depend on the order of its statements."""
    try:
        return _fingerprint(ast.parse(text), text, base)
    except (SyntaxError, ValueError, RecursionError):  # RecursionError: nested deeper than Python reads
        return None


def _fingerprint(tree, text, base):
    removed = [1]
    while removed[0]:  # an assignment read only by a dead one is dead too
        removed = [0]
        tree.body = _live(tree.body, _reads(tree), False, removed)
    own = _binds(tree)
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    prints = defaultdict(list)
    for node in _nested(tree.body):
        code = _canon(node, own)
        key = int.from_bytes(hashlib.blake2b(code.encode(), digest_size=8).digest(), "big")
        if key not in base:
            # a compound statement's own code is its first line; a simple one's, all its lines
            where = getattr(node, "pattern", node)  # a match case's place is its pattern's
            last = where.lineno if any(isinstance(getattr(node, name, None), list) for name in LISTS) else \
                where.end_lineno
            prints[key].append((starts[where.lineno - 1], starts[last] - 1))
    return dict(prints)


def base_hashes(texts):
    """The fingerprints of the course's own material (a set)."""
    return frozenset().union(*(fingerprint(text) or () for text in texts.values()))


def _fingerprint_all(texts, base):
    return [fingerprint(text, base) for text in texts]


def default_workers(files):
    """Processes that parse ``files`` files: one per core where there are enough to pay for them."""
    return max(1, min(os.cpu_count() or 1, files // 100))


def fingerprint_class(submissions, boilerplate, workers=None, base=()) -> tuple:
    """([{file name: fingerprints}] per submission, the course's material removed; [student/file that
    is not Python]). Each distinct text is parsed once (a file handed in as the course gave it,
    ``base``, has no fingerprint of its own: it is not parsed at all), on ``workers`` processes
    (default: one per core for a large class)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    given = set(base)
    jobs = list(dict.fromkeys(text for s in submissions for text in s.files.values() if text not in given))
    workers = workers or default_workers(len(jobs))
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            done = list(pool.map(_fingerprint_all, [jobs[i::workers] for i in range(workers)], [boilerplate] * workers))
        prints = [None] * len(jobs)
        for i, chunk in enumerate(done):
            prints[i::workers] = chunk
    else:
        prints = _fingerprint_all(jobs, boilerplate)
    made = dict(zip(jobs, prints))
    unparsed = [f"{s.name}/{name}" for s in submissions for name, text in s.files.items()
                if text in made and made[text] is None]
    return [{name: made.get(text) or {} for name, text in s.files.items()} for s in submissions], unparsed


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
    own = [set().union(*files.values()) for files in prints]
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


def _regions(places):
    """(start, end) places in a text, sorted and merged."""
    merged = []
    for start, end in sorted(places):
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
    first."""
    found = []
    for name_a, fa in prints_a.items():
        for name_b, fb in prints_b.items():
            common = fa.keys() & fb.keys()
            if common:
                found.append((len(common), name_a, name_b, _regions(p for h in common for p in fa[h]),
                              _regions(p for h in common for p in fb[h])))
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
    out.append('<footer class="small"><p>Written by <code>python -m autograder similarity</code>. Code: one '
               "fingerprint per statement, parsed (the file's own names as one, literals as their kind, dead statements "
               "and no-op wrappers dropped: the order of statements does not count), the course's stubs, reference and support files removed first; a fingerprint k students share counts "
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
    prints, unparsed = fingerprint_class(submissions, boilerplate, workers, base=texts.values())
    if unparsed:
        notes.append(f"not Python (no code compared): {', '.join(unparsed)}")
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
