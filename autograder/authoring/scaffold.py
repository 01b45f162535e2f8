"""``python -m autograder new NAME``: a complete, gradeable assignment in its own folders.

It writes, from the templates in ``templates/new/`` (``NAME`` in a path and ``{{name}}``,
``{{title}}`` in a text become the assignment's):

- ``autograder/suites/NAME/``: the manifest (one part, one module), the suites' conftest and the
  hidden check of the one marked function, with one named mistake;
- ``solutions/NAME/``: the module (nbgrader's markers around what students write), its public
  test and the public tests' conftest;
- ``source/NAME/NAME.ipynb``: the notebook (a cell per part runs its public tests; a locked grade
  cell per part with the part's points);
- ``tests/NAME/``: the banks (``mutants.py``, ``alternatives.py``) and ``expectations.py``;

then generates ``assignments/NAME/`` (the stubs). Right away the reference grades 100 and the
stubs 0, and the project's tests pass with it in place; from there the author renames the
module, adds parts, and keeps the four folders in step (CONTRIBUTING.md, "Adding an assignment").
Nothing outside those folders is written or needs an edit.
"""
import json
import re
from pathlib import Path

from ..grading import course
from . import stubs

TEMPLATES = Path(__file__).resolve().parent / "templates" / "new"
NAME = re.compile(r"[a-z][a-z0-9_]*")


class ScaffoldError(ValueError):
    """A name or title ``new`` cannot use, or an assignment that is already there."""


def planned(name: str, title: str) -> dict:
    """{path relative to the course's root: text} of every file ``new`` writes for ``name``."""
    values = {"name": name, "title": title}
    files = {}
    for template in sorted(TEMPLATES.rglob("*.tmpl")):
        relative = template.relative_to(TEMPLATES).with_suffix("")
        text = template.read_text(encoding="utf-8")
        for key, value in values.items():
            # the title lands in TOML, Python docstrings and a notebook's JSON: as a JSON string's
            # inside it is right in all three (new refuses quotes, backslashes and line breaks)
            text = text.replace("{{" + key + "}}", json.dumps(value)[1:-1])
        files[str(relative).replace("NAME", name)] = text
    return files


def new(name: str, title: str | None = None) -> list:
    """Write the assignment ``name`` (titled ``title``, else its name) into the course (the
    repository, or ``$AUTOGRADER_COURSE``) and its stubs; return the paths written, relative to
    the course's root."""
    root = Path(course.ROOT)
    title = (title or name).strip()
    if not NAME.fullmatch(name):
        raise ScaffoldError(f"{name!r}: an assignment's name is lower-case letters, digits and underscores, "
                            "starting with a letter (it is a folder name and a Python identifier's part)")
    if not title or re.search(r'["\\\n\r]', title):
        raise ScaffoldError(f"{title!r}: a title is one line without double quotes or backslashes")
    files = planned(name, title)
    there = sorted(top for top in {str(Path(p).parent) for p in files} if (root / top).exists())
    if there or (root / "assignments" / name).exists():
        raise ScaffoldError(f"{name} is already there ({', '.join(there) or f'assignments/{name}'}): "
                            "pick another name, or edit the assignment in its folders")
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    course.forget()  # the course now holds it
    written = sorted(files)
    written += [f"assignments/{name}/{file}" for file in stubs.write_stubs(name)]
    return written
