"""Renderings of results (grading.result.SubmissionResult): the terminal table, Markdown feedback,
the class CSV, JUnit XML and the CI job summary. They read scores and part totals; they add up none."""
import csv
import io
import re
import shutil
import textwrap

from ..grading import course
from ..sandbox.submission import printable


def assignment_of(result):
    """The assignment a result is for: the one it names, else (a result written before results
    named it) the one whose manifest lists its parts."""
    if result.assignment in course.names():
        return course.get(result.assignment)
    parts = {p.name for p in result.parts}
    return next((a for a in course.assignments() if parts <= set(a.parts)), None)


def in_order(parts, result=None):
    """``parts`` in the order of the result's manifest (by name where there is none)."""
    assignment = assignment_of(result) if result is not None else None
    return assignment.in_order(parts) if assignment else sorted(parts)


NOT_STARTED = "not written yet (the stubs still raise NotImplementedError)"


def unwritten(result):
    """{part: the line naming its functions still to write} for each part that earned nothing and
    whose every failed check hit a stub: a part not started, said once, not per check. The line is
    the one the grader wrote from the part's module (``SubmissionResult.unwritten``: every function
    still a stub, the list the public tests' progress table gives), else ``NOT_STARTED``."""
    lines = result.unwritten or {}
    out = {}
    for part in result.parts:
        failed = [c for c in result.failed if c.part == part.name]
        if failed and part.score == 0 and all("NotImplementedError" in c.output for c in failed):
            out[part.name] = lines.get(part.name) or NOT_STARTED
    return out


def not_written(line):
    """The one line for a part not started: ``unwritten``'s, or the general one."""
    return line or NOT_STARTED


def same_cause(checks) -> list:
    """Failed checks grouped by part and feedback, in order: a cause several checks share (a
    module that does not import, say) is said once, with the checks it failed."""
    groups = {}
    for check in checks:
        groups.setdefault((check.part, check.output), []).append(check)
    return list(groups.values())


def table(result, title, columns=None):
    """The per-part table with one line of feedback for each failed check. ``columns``: each line
    cut to that many columns (a run of several submissions on a terminal: ``terminal_width``),
    its full text in the JSON and Markdown results."""
    lines = [f"{title}  (isolation: {result.isolation})"]
    if result.output:
        lines += [f"  note: {line}" for line in result.output.splitlines()]
    parts = {p.name: p for p in result.parts}
    width = max(len(p) for p in parts)
    lines.append(f"  {'part':<{width}}  points")
    for name in in_order(parts, result):
        part = parts[name]
        lines.append(f"  {name:<{width}}  {part.score:>3}/{part.max_score:<3} {'ok' if part.full_marks else ''}")
    lines.append(f"  {'total':<{width}}  {result.score:>3}/{result.max_score}")
    failed = result.failed
    blank = unwritten(result)  # a part not started: one line, not one per check
    if failed:
        lines.append("  failed checks:")
        for part in in_order(blank, result):
            lines.append(f"  - {part}: {not_written(blank[part])}")
        for group in same_cause(c for c in failed if c.part not in blank):
            check = group[0]
            lines.append(f"  - {check.name} (0/{check.max_score})" if len(group) == 1 else
                         f"  - {check.part}: {len(group)} checks (0/{sum(c.max_score for c in group)})")
            lines.append(f"      {check.output}")
    if columns:
        lines = [line if len(line) <= columns else line[:columns - 1] + "…"
                 for text in lines for line in text.splitlines()]
    return printable("\n".join(lines))  # folder and file names can carry terminal escapes


def terminal_width() -> int:
    """The columns of the terminal this process writes to (80 where it is none, as in a log)."""
    return max(60, shutil.get_terminal_size().columns)


def run_line(results, width) -> str:
    """What ends a run of several submissions: each one's score in the order graded, filled to ``width``."""
    return textwrap.fill(f"graded {len(results)} submissions: " + ", ".join(
        f"{name} {result.score}/{result.max_score}" for name, result in results.items()), width,
        subsequent_indent="  ", break_on_hyphens=False)


def _fenced(text):
    """Untrusted text as a Markdown code block that no run of backticks inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _code(text):
    """Untrusted text (a folder name) as a Markdown code span, on one line: it renders as exactly
    that text, with nothing a tag, an entity, emphasis, math or a link (GitHub autolinks a
    domain or an address in text, never in code). The fence is longer than any run of backticks
    inside; a space pads a text that starts or ends with one (CommonMark strips it again)."""
    text = " ".join(str(text).splitlines())
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    pad = " " if text[:1] == "`" or text[-1:] == "`" or (text[:1] == text[-1:] == " " and text.strip()) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown(result, title, pictures=None):
    """Feedback for the student: score per part, then what each failed check found.
    ``pictures``: {check name: the file of its picture, beside the Markdown}."""
    parts = {p.name: p for p in result.parts}
    lines = [f"# Feedback: {_code(title)}", "", f"**Score: {result.score} / {result.max_score}**", "",
             "| part | points |", "|---|---|"]
    order = in_order(parts, result)
    lines += [f"| {name} | {parts[name].score} / {parts[name].max_score} |" for name in order]
    if result.output:
        lines += ["", "## Notes", "", _fenced(result.output)]
    failed = result.failed
    lines += ["", "## What to fix" if failed else "## Every check passed", ""]
    blank = unwritten(result)
    lines += [f"- **{part}**: {not_written(blank[part])}" for part in in_order(blank, result)]
    lines += [""] if blank else []
    in_book_order = sorted(failed, key=lambda c: order.index(c.part) if c.part in parts else 0)
    for group in same_cause(c for c in in_book_order if c.part not in blank):
        check = group[0]
        if len(group) == 1:
            lines += [f"### {check.name} (0 / {check.max_score})", ""]
        else:
            lines += [f"### {check.part}: {len(group)} checks (0 / {sum(c.max_score for c in group)})", "",
                      *(f"- {c.description}" for c in group), ""]
        lines += [_fenced(check.output), ""]
        for drawn in filter(None, ((pictures or {}).get(c.name) for c in group)):
            lines += [f"![your matrix beside the expected one]({drawn})", ""]
    return "\n".join(lines).rstrip() + "\n"


def csv_cell(value):
    """A CSV cell no spreadsheet runs as a formula: text that starts like one gets a leading '."""
    if isinstance(value, str):
        value = printable(value)
        if value[:1] in ("=", "+", "-", "@", "\t", "\r"):
            return "'" + value
    return value


def class_csv(rows, assignments=None):
    """rows: (student, result or None, status[, assignment]) per submission; ``assignments``: the
    names of the class's assignments (default: those the results name). One line per student.
    One assignment: its parts as columns. Several: a group of columns per assignment
    (``<assignment>:score``, ..., ``<assignment>:status``)."""
    rows = [(*row, None) if len(row) == 3 else tuple(row) for row in rows]
    if assignments is None:
        assignments = sorted({a or _named_assignment(r) for _, r, _, a in rows} - {None}) or course.names()[:1]
    groups = [course.get(name) for name in assignments]
    out = io.StringIO()
    writer = csv.writer(out)
    if len(groups) == 1:
        parts = groups[0].parts
        writer.writerow(["student", "score", "max_score", *parts, "status"])
        for student, result, status, _ in rows:
            writer.writerow(map(csv_cell, [student, *_columns(result, status, parts)]))
        return out.getvalue()
    writer.writerow(["student", *(f"{a.name}:{column}" for a in groups
                                  for column in ("score", "max_score", *a.parts, "status"))])
    students = {}
    for student, result, status, name in rows:
        students.setdefault(student, {})[name or _named_assignment(result)] = (result, status)
    for student, handed in students.items():
        cells = [student]
        for a in groups:  # a submission whose assignment is unknown says why in every group
            result, status = handed.get(a.name) or handed.get(None) or (None, "not submitted")
            cells += _columns(result, status, a.parts)
        writer.writerow(map(csv_cell, cells))
    return out.getvalue()


def _named_assignment(result):
    return result.assignment if result else None


def _columns(result, status, parts):
    if result is None:  # not graded: an empty score, which no importer reads as a zero
        return ["", "", *[""] * len(parts), status]
    scores = [result.part(p).score if result.part(p) else "" for p in parts]
    return [result.score, result.max_score, *scores, status]


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def junit(results):
    """JUnit XML for CI test reports. results: (name, result or None, status) per submission;
    one testsuite each, one testcase per check, points as properties; a failure carries the feedback."""
    from xml.etree import ElementTree as ET

    def text(value):
        return _NOT_XML.sub("?", str(value))

    suites = ET.Element("testsuites", name="autograder")
    for name, result, status in results:
        checks = result.checks if result else ()
        suite = ET.SubElement(suites, "testsuite", name=text(name), tests=str(len(checks) or 1),
                              failures=str(len(result.failed) if result else 0),
                              errors="0" if result else "1", skipped="0",
                              time=str(result.execution_time if result else 0))
        properties = ET.SubElement(suite, "properties")
        if result is None:  # not graded at all: one error, so CI shows it instead of an empty green suite
            case = ET.SubElement(suite, "testcase", name="graded", classname=text(name), time="0")
            ET.SubElement(case, "error", message=text(status), type="NotGraded")
            continue
        for key, value in (("score", result.score), ("max_score", result.max_score), ("isolation", result.isolation)):
            ET.SubElement(properties, "property", name=key, value=text(value))
        for check in checks:
            case = ET.SubElement(suite, "testcase", name=text(check.name),
                                 classname=text(f"{name}.{check.part}"), time="0")
            points = ET.SubElement(case, "properties")
            for key, value in (("score", check.score), ("max_score", check.max_score)):
                ET.SubElement(points, "property", name=key, value=str(value))
            if check.mistake:
                ET.SubElement(points, "property", name="mistake", value=text(check.mistake))
            if not check.passed:
                failure = ET.SubElement(case, "failure", type="KnownMistake" if check.mistake else "WrongAnswer",
                                        message=text(check.output.splitlines()[0] if check.output else "failed"))
                failure.text = text(check.output)
        if result.output:
            ET.SubElement(suite, "system-out").text = text(result.output)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def summary(rows):
    """The Markdown job summary of a class run: one line per student."""
    lines = ["| student | score | status |", "|---|---|---|"]
    for name, result, status in rows:
        score = f"{result.score} / {result.max_score}" if result else "–"
        lines.append(f"| {_code(_cell(name))} | {score} | {_cell(status)} |")
    return "\n".join(lines) + "\n"


def _cell(text):
    """Untrusted text inside a Markdown table cell: no pipes, no markup, one line."""
    return re.sub(r"[|<>`*_\[\]\\]", " ", str(text)).replace("\n", " ")
