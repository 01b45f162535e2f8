"""Generate the student stubs in assignments/ from the master copy in solutions/.

Every region between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (nbgrader's
markers) becomes ``raise NotImplementedError(...)`` at the marker's indentation;
signatures, docstrings and everything else are kept. Public test files are copied
as they are, and so are the manifest's data files, byte for byte.
"""
import re
from pathlib import Path

from ..grading import course

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
_DEF = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+(\w+)")


class StubError(ValueError):
    """A master file whose markers do not pair up."""


def _enclosing_name(lines, index, indent) -> str:
    """Dotted name of the def/class that contains line ``index`` (e.g. ``CausalAttention.forward``)."""
    names, limit = [], len(indent)
    for line in reversed(lines[:index]):
        match = _DEF.match(line)
        if match and len(match.group(1)) < limit:
            names.append(match.group(3))
            limit = len(match.group(1))
    return ".".join(reversed(names)) or "this part"


def make_stub(source: str, filename: str = "<source>") -> str:
    """Return ``source`` with every solution region replaced by a NotImplementedError."""
    lines = source.splitlines(keepends=True)
    out, region_start = [], None
    for number, line in enumerate(lines, start=1):
        marker = line.strip()
        if marker == BEGIN:
            if region_start is not None:
                raise StubError(f"{filename}:{number}: {BEGIN} inside another solution region")
            region_start = number
            indent = line[: len(line) - len(line.lstrip())]
            name = _enclosing_name(lines, number - 1, indent)
            out.append(f'{indent}raise NotImplementedError("{name}: replace this line with your code")\n')
        elif marker == END:
            if region_start is None:
                raise StubError(f"{filename}:{number}: {END} without {BEGIN}")
            region_start = None
        elif region_start is None:
            out.append(line)
    if region_start is not None:
        raise StubError(f"{filename}:{region_start}: {BEGIN} is never closed")
    return "".join(out)


def solution_lines(source: str) -> set:
    """Stripped code lines that occur only inside solution regions (what a stub must not leak)."""
    inside, outside, in_region = set(), set(), False
    for line in source.splitlines():
        text = line.strip()
        if text in (BEGIN, END):
            in_region = text == BEGIN
            continue
        if text and not text.startswith("#"):
            (inside if in_region else outside).add(text)
    return inside - outside


HAND_IN = "HAND_IN = ()\n"  # a master's line where the stub gets the assignment's hand-in (course.Assignment.hand_in)
PARTS = "PARTS = ()\n"  # a master's line where the stub gets {part: its functions} (course.Assignment.parts_table)


def expected_files(assignment: str) -> dict:
    """Relative path -> text of every file that assignments/<assignment>/ must hold."""
    a = course.get(assignment)
    files = {}
    hand_in = "HAND_IN = (\n" + "".join(f'    ("{f.file}", "{f.assignment}"),\n' for f in a.hand_in) + ")\n"
    parts = "PARTS = {\n" + "".join(f'    "{part}": {functions!r},\n' for part, functions in a.parts_table.items()) + "}\n"
    for path in sorted(a.solutions.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        files[path.name] = text if path.name.startswith("test_") else \
            make_stub(text, str(path)).replace(HAND_IN, hand_in).replace(PARTS, parts)
    for name in a.support:  # the engine's own module, as it is
        files[name] = (course.ENGINE / name).read_text(encoding="utf-8")
    return files


def expected_data(assignment: str) -> dict:
    """File name -> bytes of every data file the manifest ships beside the stubs (copied as is)."""
    a = course.get(assignment)
    return {name: (a.solutions / name).read_bytes() for name in a.data}


def stale_files(assignment: str, target: Path = None) -> list:
    """Files under the stub folder that differ from what the generator would write, or are extra."""
    target = target or course.get(assignment).stubs
    expected = expected_files(assignment)
    problems = []
    for name, data in expected_data(assignment).items():
        path = target / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif path.read_bytes() != data:
            problems.append(f"{name}: differs from solutions/ (a data file is copied byte for byte)")
    for name, text in expected.items():
        path = target / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{name}: differs from the generated stub")
    for path in sorted(target.glob("*.py")) if target.is_dir() else []:
        if path.name not in expected:
            problems.append(f"{path.name}: not generated from solutions/")
    return problems


def write_stubs(assignment: str, target: Path = None) -> list:
    """(Re)write assignments/<assignment>/ from the master; return the names of the files that
    changed (written, or deleted as no longer generated): none when it was up to date."""
    target = target or course.get(assignment).stubs
    target.mkdir(parents=True, exist_ok=True)
    expected = {name: text.encode("utf-8") for name, text in expected_files(assignment).items()}
    expected.update(expected_data(assignment))
    changed = []
    for path in target.glob("*.py"):
        if path.name not in expected:
            path.unlink()
            changed.append(path.name)
    for name, content in expected.items():
        path = target / name
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
            changed.append(name)
    return sorted(changed)
