"""The public tests' order and summary, shared by every chapter's conftest.py (copied beside the
stubs): the tests run in the book's order, and the run ends with one line per part, in that
order: how many tests pass, or, for a part not started, "not written yet: N functions"."""
import re
import sys
from pathlib import Path

STUB = re.compile(r"NotImplementedError: ([\w.]+): replace this line with your code")


def _part(nodeid, parts):
    name = nodeid.split("::")[0].rsplit("/", 1)[-1].removeprefix("test_").removesuffix(".py")
    return name if name in parts else None


def book_order(items, parts):
    """Sort the collected tests by their part's place in the book (a stable sort: within a file,
    the tests keep the file's order)."""
    place = {part: i for i, part in enumerate(parts)}
    items.sort(key=lambda item: place.get(_part(item.nodeid, parts), len(place)))


def summary(terminalreporter, parts):
    """One line per part, in the book's order."""
    counts = {part: {"passed": 0, "failed": 0, "stubs": [], "others": []} for part in parts}
    for kind in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(kind, []):
            part = _part(getattr(report, "nodeid", ""), parts)
            if part is None or getattr(report, "when", "call") not in ("call", "setup"):
                continue
            entry = counts[part]
            if kind == "passed":
                entry["passed"] += 1
                continue
            entry["failed"] += 1
            found = STUB.search(str(getattr(report, "longrepr", "")))
            entry["stubs" if found else "others"].append(found[1] if found else report.nodeid)
    terminalreporter.section("your progress, part by part (in the book's order)")
    for part, entry in counts.items():
        total = entry["passed"] + entry["failed"]
        if not total:
            continue
        functions = list(dict.fromkeys(entry["stubs"]))
        line = (f"not written yet: {len(functions)} function{'s' if len(functions) != 1 else ''}"
                if entry["failed"] and not entry["passed"] and not entry["others"]
                else f"{entry['passed']} of {total} tests pass" if entry["failed"] else f"all {total} tests pass")
        terminalreporter.write_line(f"  {part:<22} {line}")


def use_earlier(conftest, hand_in):
    """For an assignment that imports the student's own modules of earlier ones: puts the folders
    of those assignments beside this one last on sys.path (modules in this folder come first), and
    gives the ``hand_in`` files ((file, assignment)) found in neither place."""
    here = Path(conftest).resolve().parent
    for name in dict.fromkeys(assignment for _, assignment in hand_in if assignment != here.name):
        if (here.parent / name).is_dir():
            sys.path.append(str(here.parent / name))
    return [(file, assignment) for file, assignment in hand_in
            if not (here / file).is_file() and not (here.parent / assignment / file).is_file()]


def missing_lines(missing):
    """One line naming the files ``use_earlier`` found missing, and whence; none when nothing is."""
    if not missing:
        return []
    return ["missing: " + ", ".join(f"{file} (your own from {assignment})" for file, assignment in missing)
            + ": copy them into this folder; the tests that import them fail until you do"]
