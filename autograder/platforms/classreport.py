"""The class at a glance: ``summary.json`` and ``report.html`` from the results of a class.

Both come from the same results (``grading.result.SubmissionResult``) as ``grades.csv``: first the summary,
plain data for tools; then the page, rendered from the summary alone, so the two cannot
disagree. The page is one file that opens from disk with no network: the charts are matplotlib
SVG inline, the one script (sorting the students table) is inline and optional, and a
Content-Security-Policy forbids loading anything at all. Every name and every line of feedback
is untrusted text and is escaped.

``write(out, students, title)`` is the entry point for any class of results (the CLI's class
run and merge, an nbgrader course's autograded results). Nothing here imports torch.
"""
import base64
import hashlib
import html
import io
import json
import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple, Optional
from urllib.parse import quote

from . import report
from .files import write_atomic
from ..grading.result import SubmissionResult
from ..sandbox.submission import printable

FEEDBACK_LIMIT = 300        # characters of one line of feedback shown on the page
NAMES_SHOWN = 12            # students named inline before the rest fold into "and N more"
ROWS_SHOWN = 10             # checks failed without a name listed before the rest fold away


class Student(NamedTuple):
    folder: str                    # the submission folder's own name (sorting and duplicates)
    name: str                      # as shown (display_name of the folder)
    result: Optional[SubmissionResult]  # None when not graded
    status: str                    # "graded", or why not (grades.csv's status column)
    feedback: Optional[str] = None  # the Markdown feedback file, relative to the report
    result_file: Optional[str] = None  # the result JSON, relative to the report
    assignment: Optional[str] = None   # what the class run graded it as (None: it could not tell)


def _first_line(text):
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else "failed"
    return line if len(line) <= FEEDBACK_LIMIT else line[:FEEDBACK_LIMIT - 1] + "…"


def _number(value):
    """Scores as they are written in grades.csv: an int stays an int."""
    return int(value) if float(value).is_integer() else round(float(value), 2)


def _histogram(scores, max_score):
    """Counts per bin: about 20 bins of whole points; the last holds full marks alone when it can."""
    width = max(1, -(-int(max_score) // 20))
    bins = int(max_score // width) + 1
    counts = [0] * bins
    for score in scores:
        counts[min(int(score // width), bins - 1)] += 1
    return {"bin_width": width, "counts": counts}


def _assignment(key, entries):
    """The numbers of one assignment: entries are the Students graded in it."""
    results = [s.result for s in entries]
    max_score = max(r.max_score for r in results)
    scores = [r.score for r in results]
    parts = report.in_order(dict.fromkeys(p.name for r in results for p in r.parts), results[0])
    manifest = report.assignment_of(results[0])
    part_stats = []
    for part in parts:
        got = [(p.score, p.max_score) for p in (r.part(part) for r in results) if p]
        most = max(m for _, m in got)
        part_stats.append({"part": part, "max_score": _number(most), "students": len(got),
                           "full_marks": sum(g == m for g, m in got), "zero": sum(g == 0 for g, _ in got),
                           "mean": round(statistics.fmean(g for g, _ in got), 2)})
    checks, mistakes, unnamed, blank, repairs = {}, {}, {}, {}, {}
    for student in entries:
        not_started = report.unwritten(student.result)
        for part in not_started:  # a part not started counts once per student, not once per check
            blank.setdefault(part, []).append(student.name)
        for test in student.result.checks:
            check = checks.setdefault(test.name, {
                "check": test.name, "part": test.part, "description": test.description,
                "points": _number(test.max_score), "passed": 0, "failed": 0})
            if test.passed:
                check["passed"] += 1
                continue
            check["failed"] += 1
            if test.part in not_started:
                continue
            if test.repair:  # a verified one-edit repair (grading.repair): counted by its kind of change
                kind = repairs.setdefault(test.repair.get("kind", "?"), {"kind": test.repair.get("kind", "?"),
                                                                          "students": [], "checks": []})
                if student.name not in kind["students"]:
                    kind["students"].append(student.name)
                if test.name not in kind["checks"]:
                    kind["checks"].append(test.name)
            name = test.mistake  # recorded by the check that recognised it; feedback text is never parsed
            if name:
                mistake = mistakes.setdefault(name, {"mistake": name, "students": [], "checks": []})
                if student.name not in mistake["students"]:
                    mistake["students"].append(student.name)
                if test.name not in mistake["checks"]:
                    mistake["checks"].append(test.name)
                if test.picture and "picture" not in mistake:  # the first student's, shown beside it
                    mistake["picture"] = test.picture
            else:
                line = _first_line(test.output)
                # numbers differ from student to student; the wording is what repeats
                unnamed.setdefault(test.name, []).append((re.sub(r"-?\d[\d.e+-]*", "#", line), line, student.name))
    order = {p: i for i, p in enumerate(parts)}
    ranked_checks = sorted(checks.values(), key=lambda c: (-c["failed"] / (c["passed"] + c["failed"]),
                                                          order.get(c["part"], len(order))))
    without_name = []
    for name, failures in unnamed.items():
        commonest, count = Counter(key for key, _, _ in failures).most_common(1)[0]
        without_name.append({"check": name, "part": checks[name]["part"], "failed": len(failures),
                             "feedback": next(line for key, line, _ in failures if key == commonest),
                             "count": count, "students": [who for key, _, who in failures if key == commonest]})
    for part, who in blank.items():
        without_name.append({"check": f"{part}: not started", "part": part, "failed": len(who),
                             "feedback": report.not_written([]), "count": len(who), "students": who})
    without_name.sort(key=lambda u: (-u["failed"], order.get(u["part"], len(order))))
    return {
        "assignment": key, "title": manifest.title if manifest else key, "parts": parts,
        "max_score": _number(max_score), "graded": len(results),
        "median": _number(statistics.median(scores)), "mean": round(statistics.fmean(scores), 2),
        "at_zero": sum(s == 0 for s in scores), "at_full_marks": sum(s == max_score for s in scores),
        "histogram": _histogram(scores, max_score),
        "suites": sorted({r.suites or "" for r in results} - {""}),
        "part_stats": sorted(part_stats, key=lambda p: (p["full_marks"] / p["students"], order[p["part"]])),
        "checks": ranked_checks,
        "mistakes": sorted(mistakes.values(), key=lambda m: (-len(m["students"]), m["mistake"])),
        "repairs": sorted(repairs.values(), key=lambda r: (-len(r["students"]), r["kind"])),
        "failed_without_a_name": without_name,
    }


def _isolation(graded):
    held, missing, kinds = Counter(), {}, Counter()
    reduced = []
    for student in graded:
        result = student.result
        kinds[result.isolation or "unknown"] += 1
        if not result.fully_isolated:
            reduced.append(student.name)
        protections = result.protections or {}
        held.update(protections.get("held", []))
        for name, why in (protections.get("unavailable") or {}).items():
            missing.setdefault(name, Counter())[why] += 1
    names = list(dict.fromkeys([*held, *missing]))
    return {"graded": len(graded), "fully_isolated": len(graded) - len(reduced), "reduced": len(reduced),
            "reduced_students": reduced, "kinds": dict(kinds.most_common()),
            "protections": [{"protection": n, "held": held[n], "missing": sum(missing.get(n, {}).values()),
                             "why": missing[n].most_common(1)[0][0] if n in missing else ""} for n in names]}


def _assignment_of(student):
    return (student.result.assignment if student.result else None) or student.assignment or ""


def summarize(students, title) -> dict:
    """The class's numbers (summary.json) from its Students, in the order given."""
    graded = [s for s in students if s.result is not None]
    groups = {}
    for student in graded:
        groups.setdefault(_assignment_of(student), []).append(student)
    problems = []
    for student in students:
        notes = [line for line in (student.result.output if student.result else "").splitlines()
                 if line.strip() and not line.startswith("WARNING:")]  # isolation has its own section
        if student.result is None or student.status != "graded" or notes:
            problems.append({"student": student.name, "assignment": _assignment_of(student),
                             "status": student.status, "notes": notes,
                             "score": None if student.result is None else _number(student.result.score),
                             "feedback": student.feedback if student.result else None})
    rows = []
    for s in students:
        row = {"student": s.name, "assignment": _assignment_of(s), "status": s.status, "feedback": s.feedback,
               "result": s.result_file}
        if s.folder != s.name:  # a folder name shown otherwise (not UTF-8, control characters): kept exactly
            row["folder"] = s.folder
        if s.result is not None:
            row.update(score=_number(s.result.score), max_score=_number(s.result.max_score),
                       parts={p.name: [_number(p.score), _number(p.max_score)] for p in s.result.parts})
        rows.append(row)
    return {
        "title": title, "students": len(students), "graded": len(graded),
        "not_graded": sum(s.result is None for s in students),
        "assignments": [_assignment(key, groups[key]) for key in sorted(groups)],
        "problems": problems, "isolation": _isolation(graded), "rows": rows,
    }


def terminal_lines(summary, limit=3) -> list:
    """A few lines of the summary for the end of a class run's output."""
    lines = []
    for a in summary["assignments"]:
        lines.append(f"{a['assignment'] or 'class'}: {a['graded']} graded, median {a['median']}, mean {a['mean']}, "
                     f"{a['at_zero']} at 0, {a['at_full_marks']} at full marks ({a['max_score']})")
        weakest = [p for p in a["part_stats"] if p["full_marks"] < p["students"]][:limit]
        if weakest:
            lines.append("  parts least often at full marks: " + ", ".join(
                f"{p['part']} {p['full_marks']} of {p['students']}" for p in weakest))
        if a["mistakes"]:
            lines.append("  commonest named mistakes: " + "; ".join(
                f"{m['mistake']} ({len(m['students'])})" for m in a["mistakes"][:limit]))
        if a.get("repairs"):
            lines.append("  verified one-edit repairs, by kind: " + "; ".join(
                f"{r['kind']} ({len(r['students'])})" for r in a["repairs"][:limit]))
    iso = summary["isolation"]
    if iso["graded"]:
        lines.append(f"isolation: {iso['fully_isolated']} of {iso['graded']} ran fully isolated"
                     + (f", {iso['reduced']} with reduced isolation" if iso["reduced"] else ""))
    return [printable(line) for line in lines]


# -- the page -------------------------------------------------------------------------------

def _svg(figure, name, label):
    """A matplotlib figure as an inline <svg>: deterministic (fixed hash salt, no date), its ids
    prefixed so that two charts on one page cannot share one, scaled by the page's CSS."""
    import matplotlib
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": f"autograder-{name}", "svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r'\s(width|height)="[\d.]+pt"', "", text, count=2)
    text = re.sub(r'id="([^"]+)"', rf'id="{name}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{name}-\1"', text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{html.escape(label)}" ', 1).strip()


def charts(assignments):
    """Every chart of the page: {its id: its <svg>}, drawn from the summary's assignments."""
    drawn = {}
    for i, a in enumerate(assignments):
        drawn[f"a{i}-hist"] = _histogram_svg(a, f"a{i}-hist")
        drawn[f"a{i}-parts"] = _parts_svg(a, f"a{i}-parts")
    return drawn


class Painter:
    """Draws the charts in a helper interpreter started when a class run starts: its import of
    matplotlib (~0.3 s) then runs beside the grader's import of torch, on a core that would sit
    idle, instead of after the last submission. Where it fails, ``write`` draws them itself.

    The request is one line, not "all of stdin": a process forked later (a parallel worker)
    holds a copy of the pipe, so an end of file might never come."""

    def __init__(self):
        from ..paths import ROOT
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                 "from autograder.platforms.classreport import _paint; _paint()", str(ROOT)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8")
        except OSError:
            self.process = None

    def draw(self, assignments):
        """The charts as ``charts`` draws them, or None where the helper could not."""
        try:
            out, _ = self.process.communicate(json.dumps(assignments) + "\n", timeout=60)
            drawn = json.loads(out)
        except (AttributeError, OSError, ValueError, subprocess.TimeoutExpired):  # none started, or it failed
            self.close()
            return None
        names = {f"a{i}-{kind}" for i in range(len(assignments)) for kind in ("hist", "parts")}
        ok = isinstance(drawn, dict) and set(drawn) == names and all(isinstance(v, str) for v in drawn.values())
        return drawn if ok else None

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _paint():
    """The Painter's side: import, then draw the one request's charts."""
    _matplotlib()  # imported before the request comes: the point of the helper
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.ticker  # noqa: F401
    print(json.dumps(charts(json.loads(sys.stdin.readline()))))


def _figure(width, height):
    from matplotlib.figure import Figure
    figure = Figure(figsize=(width, height), layout="constrained")
    axes = figure.subplots()
    axes.spines[["top", "right"]].set_visible(False)
    return figure, axes


def _histogram_svg(a, name):
    from matplotlib.ticker import MaxNLocator
    with _style():
        figure, axes = _figure(6.4, 2.6)
        width, counts = a["histogram"]["bin_width"], a["histogram"]["counts"]
        lefts = [i * width for i in range(len(counts))]
        colors = ["#55a868" if left == a["max_score"] else "#c44e52" if left == 0 and width == 1 else "#4c72b0"
                  for left in lefts]
        axes.bar(lefts, counts, width=width * 0.9, align="edge", color=colors)
        if a["mean"] == a["median"]:  # one line, named for both: a second would hide under the first
            axes.axvline(a["median"], color="#222222", linestyle="--", linewidth=1.2,
                         label=f"median = mean {a['median']}")
        else:
            axes.axvline(a["median"], color="#222222", linestyle="--", linewidth=1.2, label=f"median {a['median']}")
            axes.axvline(a["mean"], color="#8c6d1f", linestyle=":", linewidth=2.0, label=f"mean {a['mean']}")
        axes.set_xlim(0, lefts[-1] + width)
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_xlabel(f"score (full marks: {a['max_score']})")
        axes.set_ylabel("students")
        axes.legend(frameon=False, ncols=2, loc="lower left", bbox_to_anchor=(0, 1.0))  # above, over no bar
        return _svg(figure, name, f"Histogram of the {a['graded']} scores: median {a['median']}, mean {a['mean']}")


def _parts_svg(a, name):
    from matplotlib.ticker import MaxNLocator
    stats = a["part_stats"]
    with _style():
        figure, axes = _figure(6.4, 0.42 * len(stats) + 1.0)
        labels = [p["part"] for p in stats][::-1]  # the weakest part on top
        full = [p["full_marks"] for p in stats][::-1]
        zero = [p["zero"] for p in stats][::-1]
        partial = [p["students"] - f - z for p, f, z in zip(stats[::-1], full, zero)]
        axes.barh(labels, full, color="#55a868", label="full marks")
        axes.barh(labels, partial, left=full, color="#dd8452", label="some points")
        axes.barh(labels, zero, left=[f + p for f, p in zip(full, partial)], color="#c44e52", label="no points")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # students are counted whole
        axes.set_xlabel("students")
        axes.legend(frameon=False, ncols=3, loc="lower left", bbox_to_anchor=(0, 1.0))
        return _svg(figure, name, "Students per part with full marks, some points and no points: "
                    + "; ".join(f"{p['part']} {p['full_marks']}, {p['students'] - p['full_marks'] - p['zero']}, "
                                f"{p['zero']}" for p in stats))


def _matrix(rows, n):
    """A picture's matrix as n x n floats (the student's values came from their code: coerced here)."""
    try:
        out = [[float(v) for v in row] for row in rows]
    except (TypeError, ValueError):
        return None
    return out if len(out) == n and all(len(row) == n for row in out) else None


def attention_figure(picture):
    """A check's picture (diagnose.picture) as a matplotlib figure: the student's attention weights
    beside the expected ones, tokens on the axes, each cell's value written in it; None where the
    picture is not a pair of token-by-token matrices. Call it inside ``_style()``."""
    tokens = [printable(str(t))[:12] for t in (picture or {}).get("tokens", [])][:16]
    yours, expected = (_matrix((picture or {}).get(k), len(tokens)) for k in ("yours", "expected"))
    if not tokens or yours is None or expected is None:
        return None
    from matplotlib.figure import Figure
    figure = Figure(figsize=(7.2, 3.5), layout="constrained")
    axes = figure.subplots(1, 2)
    low = min(0.0, *(v for row in yours + expected for v in row))
    high = max(low + 1e-6, *(v for row in yours + expected for v in row))  # the darkest: the largest value
    centres = [i + 0.5 for i in range(len(tokens))]
    for ax, matrix, label in zip(axes, (yours, expected), ("yours", "expected (the book's)")):
        # vector cells (imshow would embed a bitmap, a data: URL the report's pages do not load)
        ax.pcolormesh(matrix, cmap="Blues", vmin=low, vmax=high)
        ax.invert_yaxis()
        ax.set_aspect("equal")
        ax.set_title(label)
        ax.set_xticks(centres, tokens, rotation=45, ha="right")
        ax.set_yticks(centres, tokens)
        ax.set_xlabel("attends to (key)")
        for i, row in enumerate(matrix):
            for j, v in enumerate(row):
                ax.text(j + 0.5, i + 0.5, f"{v:.2f}", ha="center", va="center", fontsize=6.5,
                        color="white" if v > low + 0.6 * (high - low) else "#1d1d1f")
    axes[0].set_ylabel("token (query)")
    figure.suptitle(printable(str(picture.get("title", "")))[:120], fontsize=9)
    return figure


def attention_svg(picture, name):
    """A check's picture as an inline <svg>, or None (see attention_figure)."""
    with _style():
        figure = attention_figure(picture)
        return figure and _svg(figure, name, f"{picture.get('title', '')}: your matrix beside the expected one")


def attention_png(picture):
    """A check's picture as PNG bytes, for pages that take no inline SVG (Gradescope's), or None."""
    with _style():
        figure = attention_figure(picture)
        if figure is None:
            return None
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
        return buffer.getvalue()


def _matplotlib():
    import matplotlib
    matplotlib.use("Agg", force=False)  # no display, ever (a class run may have none)
    return matplotlib


def _style():
    return _matplotlib().rc_context({"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 8.5,
                                     "xtick.labelsize": 8.5, "ytick.labelsize": 8.5, "axes.edgecolor": "#555555"})


def e(text):
    """Untrusted text (a student's folder name, a line of feedback) as HTML text."""
    return html.escape(printable(str(text)), quote=True)


def _link(name, feedback):
    if not feedback:
        return e(name)
    return f'<a href="{e(quote(feedback))}">{e(name)}</a>'


def _people(names, links):
    shown = ", ".join(_link(n, links.get(n)) for n in names[:NAMES_SHOWN])
    rest = names[NAMES_SHOWN:]
    if rest:
        shown += (f' <details><summary>and {len(rest)} more</summary>'
                  + ", ".join(_link(n, links.get(n)) for n in rest) + "</details>")
    return f'<span class="people">{shown}</span>'


def _picture(drawn, name):
    """A mistake's picture (one student's weights beside the book's), folded under its name."""
    svg = drawn and attention_svg(drawn, name)
    caption = e(f"{drawn.get('title', '')}: one student's matrix beside the book's") if svg else ""
    return (f'<details class="picture"><summary>see it</summary><figure>{svg}<figcaption>{caption}'
            "</figcaption></figure></details>") if svg else ""


def _meter(done, total):
    return (f'<meter min="0" max="{total}" low="{total * 0.5}" high="{total * 0.8}" optimum="{total}" '
            f'value="{done}">{done} of {total}</meter>')


def _table(headers, rows, cls=""):
    head = "".join(f"<th scope=\"col\">{h}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>'


def _td(value, sort=None, cls=""):
    attrs = (f' data-sort="{e(sort)}"' if sort is not None else "") + (f' class="{cls}"' if cls else "")
    return f"<td{attrs}>{value}</td>"


def similarity_folder(assignment) -> str:
    """Where ``python -m autograder similarity`` writes an assignment's pages by default: beside this
    report (the report links to it)."""
    return f"similarity-{assignment}"


def _similarity_html(a, key):
    """The section that points to the assignment's similarity page (written by its own command)."""
    page = f"{similarity_folder(a['assignment'])}/similarity.html"
    return (f'<h3 id="{key}-similarity">Who shares work beyond the book</h3>'
            f'<p><code>python -m autograder similarity CLASS --assignment {e(a["assignment"])} --graded '
            f'THIS_FOLDER</code> (CLASS: the folder of submissions; THIS_FOLDER: this page\'s) compares every '
            "pair of students after removing the course's own code (stubs, reference, support files), and weighs "
            f'the wrong answers they share by how rare they are: <a href="{e(quote(page))}">{e(page)}</a> once '
            "written. It is evidence for a person to read, never a verdict: nothing in the grades changes.</p>")


def _assignment_html(a, index, rows, links, drawn):
    key = f"a{index}"
    label = e(a["title"] or "Assignment") + (f' <span class="small">{e(a["assignment"])}</span>'
                                             if a["assignment"] and a["assignment"] != a["title"] else "")
    stats = [("graded", "students graded", a["graded"]), ("median", "median", a["median"]),
             ("mean", "mean", a["mean"]), ("at_zero", "at 0", a["at_zero"]),
             ("at_full_marks", f"at full marks ({a['max_score']})", a["at_full_marks"])]
    out = [f'<section id="{key}" data-assignment="{e(a["assignment"])}"><h2>{label}</h2>',
           '<div class="stats">' + "".join(f'<div class="stat"><span class="value" data-stat="{k}">{v}</span>'
                                           f'<span class="label">{e(t)}</span></div>' for k, t, v in stats) + "</div>",
           '<div class="charts"><figure>' + drawn[f"{key}-hist"]
           + "<figcaption>Scores: how the class did.</figcaption></figure>"
           + '<figure>' + drawn[f"{key}-parts"]
           + "<figcaption>Parts, the least often at full marks on top.</figcaption></figure></div>"]
    out.append(f'<h3 id="{key}-mistakes">Named mistakes, commonest first</h3>')
    if a["mistakes"]:
        out.append(_table(["mistake", "students", "who", "found by"], [
            [_td(e(m["mistake"]) + _picture(m.get("picture"), f"{key}-m{i}")), _td(str(len(m["students"])), cls="num"),
             _td(_people(m["students"], links)),
             _td("<br>".join(e(c) for c in m["checks"]), cls="small")] for i, m in enumerate(a["mistakes"])],
            "mistakes"))
    else:
        out.append("<p>No failed check named a known mistake.</p>")
    if a.get("repairs"):
        out.append(f'<h3 id="{key}-repairs">Verified one-edit repairs, by kind of change</h3>')
        out.append(_table(["kind of change", "students", "who", "found for"], [
            [_td(e(r["kind"])), _td(str(len(r["students"])), cls="num"), _td(_people(r["students"], links)),
             _td("<br>".join(e(c) for c in r["checks"]), cls="small")] for r in a["repairs"]], "repairs"))
    out.append(f'<h3 id="{key}-parts">Parts, by how many students lost points</h3>')
    out.append(_table(["part", "full marks", "", "some points", "no points", "mean points"], [
        [_td(e(p["part"]), cls="name"), _td(f"{p['full_marks']} of {p['students']}", cls="num"),
         _td(_meter(p["full_marks"], p["students"])),
         _td(str(p["students"] - p["full_marks"] - p["zero"]), cls="num"), _td(str(p["zero"]), cls="num"),
         _td(f"{p['mean']} of {p['max_score']}", cls="num")] for p in a["part_stats"]], "parts"))
    out.append(f'<h3 id="{key}-checks">Checks, the most often failed first</h3>')
    out.append(_table(["check", "part", "points", "passed", ""], [
        [_td(e(c["description"])), _td(e(c["part"]), cls="small name"), _td(str(c["points"]), cls="num"),
         _td(f"{c['passed']} of {c['passed'] + c['failed']}", cls="num"),
         _td(_meter(c["passed"], c["passed"] + c["failed"]))] for c in a["checks"]], "checks"))
    if a["failed_without_a_name"]:
        out.append(f'<h3 id="{key}-unnamed">Checks failed without a named mistake: the commonest feedback</h3>')
        lines = [[_td(e(u["check"])), _td(str(u["failed"]), cls="num"), _td(f'<code>{e(u["feedback"])}</code>'),
                  _td(f"{u['count']}: " + _people(u["students"], links))] for u in a["failed_without_a_name"]]
        headers = ["check", "failed", "commonest feedback", "students"]
        out.append(_table(headers, lines[:ROWS_SHOWN], "unnamed"))
        if lines[ROWS_SHOWN:]:
            out.append(f"<details><summary>{len(lines) - ROWS_SHOWN} more checks failed without a named mistake"
                       f"</summary>{_table(headers, lines[ROWS_SHOWN:], 'unnamed')}</details>")
    out.append(f'<h3 id="{key}-students">Students (select a heading to sort)</h3>')
    headers = ["student", f"score (of {a['max_score']})", *(f"{e(p)}" for p in a["parts"]), "status"]
    body = []
    for row in rows:
        body.append([_td(_link(row["student"], row["feedback"]), sort=row["student"]),
                     _td(str(row["score"]), sort=row["score"], cls="num"),
                     *(_td(str(row["parts"][p][0]), sort=row["parts"][p][0], cls="num") if p in row["parts"]
                       else _td("", sort=-1) for p in a["parts"]),
                     _td(e(row["status"]), cls="small")])
    out.append(_table(headers, body, "students sortable"))
    if a["assignment"]:
        out.append(_similarity_html(a, key))
    out.append("</section>")
    return "\n".join(out)


SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, column) {
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = th.textContent;
    th.textContent = "";
    th.appendChild(button);
    button.addEventListener("click", function () {
      var down = th.getAttribute("aria-sort") === "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var key = function (row) { var cell = row.cells[column]; return cell.dataset.sort || cell.textContent; };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), nx = Number(x), ny = Number(y);
        var order = (x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return down ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1d1d1f;
       margin: 0 auto; padding: 1.2em 2em 3em; max-width: 1180px; }
h1 { font-size: 1.6em; margin: 0 0 .2em; } h2 { font-size: 1.35em; margin: 1.6em 0 .5em; border-bottom: 2px solid #ddd; }
h3 { font-size: 1.08em; margin: 1.6em 0 .4em; }
nav a { margin-right: 1em; } .lead { color: #444; margin: 0 0 .6em; }
.stats { display: flex; flex-wrap: wrap; gap: .8em; margin: .8em 0; }
.stat { background: #f3f5f8; border-radius: 8px; padding: .5em 1.1em; min-width: 7.5em; }
.stat .value { display: block; font-size: 1.7em; font-weight: 600; }
.stat .label { color: #555; font-size: .9em; }
.charts { display: flex; flex-wrap: wrap; gap: 1.2em; }
figure { margin: 0; flex: 1 1 420px; max-width: 580px; }
figure svg { width: 100%; height: auto; }
figcaption { color: #555; font-size: .88em; }
table { border-collapse: collapse; margin: .3em 0 1em; width: 100%; }
th, td { text-align: left; padding: .28em .6em; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
th { background: #f3f5f8; position: sticky; top: 0; }
th button { font: inherit; font-weight: 600; background: none; border: 0; padding: 0; cursor: pointer; }
th[aria-sort=ascending] button::after { content: " \\25B2"; } th[aria-sort=descending] button::after { content: " \\25BC"; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.small, .small { font-size: .88em; color: #444; }
.people a { white-space: nowrap; } td { overflow-wrap: anywhere; } td.name { overflow-wrap: normal; white-space: nowrap; }
details.picture { margin-left: .5em; } details.picture[open] { display: block; margin: .4em 0 0; }
meter { width: 9em; height: 1em; }
code { font-size: .88em; white-space: pre-wrap; word-break: break-word; }
td details { display: inline; } td summary { display: inline; }
summary { cursor: pointer; color: #0645ad; }
.warn { color: #9c2b2b; font-weight: 600; } .ok { color: #2c6e35; font-weight: 600; }
"""


def render(summary, drawn=None):
    """The page, from the summary alone (``drawn``: its charts, drawn already)."""
    drawn = drawn or charts(summary["assignments"])
    links, anywhere = {}, {}  # per assignment, {student: their feedback}; and the first one of each student
    for r in summary["rows"]:
        if r.get("feedback"):
            links.setdefault(r["assignment"], {})[r["student"]] = r["feedback"]
            anywhere.setdefault(r["student"], r["feedback"])
    iso = summary["isolation"]
    problems = summary["problems"]
    with_notes = [p for p in problems if p["score"] is not None]
    nav = [(f"a{i}", a["assignment"] or "assignment") for i, a in enumerate(summary["assignments"])]
    nav += [("problems", "not graded, or with notes"), ("isolation", "isolation")]
    lead = (f'{summary["students"]} submissions: <span data-stat="class-graded">{summary["graded"]}</span> graded, '
            f'<span data-stat="class-not-graded">{summary["not_graded"]}</span> not graded, '
            f'{len(with_notes)} graded with notes; '
            + (f'<span class="ok">all {iso["graded"]} graded ran fully isolated</span>' if not iso["reduced"] else
               f'<span class="warn">{iso["reduced"]} of {iso["graded"]} ran with reduced isolation</span>'))
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           # Nothing may load: no script but ours (by its hash), no image, font or request of any kind.
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
           f"script-src 'sha256-{base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()}'; "
           'img-src data:">',
           f"<title>Class report: {e(summary['title'])}</title>", '<link rel="icon" href="data:,">',
           f"<style>{STYLE}</style></head><body>",
           f"<header><h1>Class report: {e(summary['title'])}</h1><p class=\"lead\">{lead}</p>",
           "<nav>" + "".join(f'<a href="#{k}">{e(t)}</a>' for k, t in nav) + "</nav></header>"]
    for i, a in enumerate(summary["assignments"]):
        rows = [r for r in summary["rows"] if r["assignment"] == a["assignment"] and "score" in r]
        out.append(_assignment_html(a, i, rows, links.get(a["assignment"], {}), drawn))
    out.append('<section id="problems"><h2>Not graded, or graded with notes</h2>')
    not_graded = [p for p in problems if p["score"] is None]
    several = len(summary["assignments"]) > 1  # then each row says which assignment
    which = (lambda p: [_td(e(p["assignment"] or "unknown"))]) if several else (lambda p: [])
    if not_graded:
        out.append(_table(["student", *(["assignment"] if several else []), "why"], [
            [_td(e(p["student"])), *which(p), _td(e(p["status"]))] for p in not_graded], "not-graded"))
    if with_notes:
        out.append(_table(["student", *(["assignment"] if several else []), "score", "notes"], [
            [_td(_link(p["student"], p["feedback"])), *which(p), _td(str(p["score"]), cls="num"),
             _td("<br>".join(e(n) for n in [*([p["status"]] if p["status"] != "graded" else []), *p["notes"]]))]
            for p in with_notes], "notes"))
    if not problems:
        out.append("<p>Every submission was graded, with no note about its files.</p>")
    out.append("</section>")
    out.append('<section id="isolation"><h2>Isolation</h2>')
    out.append(f'<p><span data-stat="fully-isolated">{iso["fully_isolated"]}</span> of {iso["graded"]} graded '
               f'submissions ran fully isolated; <span data-stat="reduced">{iso["reduced"]}</span> with reduced '
               "isolation.</p>")
    if iso["protections"]:
        out.append(_table(["protection", "held in", "missing in", "why missing"], [
            [_td(e(p["protection"])), _td(str(p["held"]), cls="num"), _td(str(p["missing"]), cls="num"),
             _td(e(p["why"]), cls="small")] for p in iso["protections"]], "protections"))
    if iso["reduced_students"]:
        out.append("<p>Ran with reduced isolation: " + _people(iso["reduced_students"], anywhere) + "</p>")
        out.append("<ul>" + "".join(f"<li>{n} &times; <code>{e(k)}</code></li>" for k, n in iso["kinds"].items())
                   + "</ul>")
    out.append("</section>")
    out.append('<footer class="small"><p>Written by <code>python -m autograder</code> from the result JSONs that '
               "<code>grades.csv</code> is made of; the same numbers are in <code>summary.json</code>. "
               "Student names link to their feedback.</p></footer>")
    out.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(out) + "\n"


def write(out, students, title, shard=None, painter=None, identity=None):
    """Write ``out``/summary.json and ``out``/report.html for a class; returns the summary.
    ``shard``: (K, N) when these students are the K-th of N slices of a class (merge checks it).
    ``painter``: a Painter to draw the charts (else they are drawn here).
    ``identity``: the class and engine the run graded (shards.identity; merge checks it)."""
    out = Path(out)
    summary = summarize(students, title)
    summary.update(identity or {})
    if shard:
        summary["shard"] = list(shard)
    write_atomic(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    write_atomic(out / "report.html", render(summary, painter and painter.draw(summary["assignments"])))
    return summary


def feedback_page(result, title):
    """A student's feedback as an HTML page of its own (linked from the report): every text escaped,
    nothing fetched, the pictures of attention weights inline beside the checks that drew them."""
    parts = {p.name: p for p in result.parts}
    order = report.in_order(parts, result)
    blank = report.unwritten(result)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>Feedback: {e(title)}</title>", '<link rel="icon" href="data:,">',
           f"<style>{STYLE}pre {{ white-space: pre-wrap; word-break: break-word; background: #f6f7f9; "
           "padding: .6em .8em; border-radius: 6px; }</style></head><body>",
           f"<h1>Feedback: {e(title)}</h1>", f'<p class="lead"><strong>Score: {e(result.score)} / '
           f"{e(result.max_score)}</strong></p>",
           _table(["part", "points"], [[_td(e(name)), _td(f"{e(parts[name].score)} / {e(parts[name].max_score)}",
                                                          cls="num")] for name in order], "parts")]
    if result.output:
        out.append(f"<h2>Notes</h2><pre>{e(result.output)}</pre>")
    failed = result.failed
    out.append("<h2>What to fix</h2>" if failed else "<h2>Every check passed</h2>")
    if blank:
        out.append("<ul>" + "".join(f"<li><strong>{e(p)}</strong>: {e(report.not_written(blank[p]))}</li>"
                                    for p in report.in_order(blank, result)) + "</ul>")
    for i, check in enumerate(sorted(failed, key=lambda c: order.index(c.part) if c.part in parts else 0)):
        if check.part in blank:
            continue
        out.append(f"<h3>{e(check.name)} (0 / {e(check.max_score)})</h3><pre>{e(check.output)}</pre>")
        drawn = check.picture and attention_svg(check.picture, f"p{i}")
        if drawn:
            out.append(f"<figure>{drawn}<figcaption>Your matrix beside the expected one, for the book's "
                       "sentence.</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_feedback(base, result, title) -> None:
    """A student's feedback files, ``base`` + ".md", ".html" and ".<n>.svg" for each picture (the
    Markdown links them by name, beside it); the page is the one the class report links."""
    base = Path(base)
    pictures = {}
    for i, check in enumerate(c for c in result.failed if c.picture):
        drawn = attention_svg(check.picture, f"p{i}")
        if drawn:
            name = f"{base.name}.{i}.svg"
            write_atomic(base.parent / name, drawn + "\n")
            pictures[check.name] = quote(name)
    write_atomic(base.parent / f"{base.name}.md", report.markdown(result, title, pictures))
    write_atomic(base.parent / f"{base.name}.html", feedback_page(result, title))
