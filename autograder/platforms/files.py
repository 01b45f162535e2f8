"""The files a platform writes for a student: their names, and writing them whole.

Folder names come from students: any bytes, any length. What is written under them is named
so that every file system accepts it, and written beside the target, then renamed, so a crash
never leaves a half-written result.
"""
import hashlib
import os
import tempfile

from ..sandbox.submission import printable


def write_atomic(path, text):
    """Write beside the target, then rename: a crash never leaves a half-written result."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def display_name(name):
    """A folder name as text that can be written anywhere (bytes that are not UTF-8 become �)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def result_stem(name):
    """A file name for a student's results that every file system accepts (the temporary
    name beside it included): the folder's name where it is short and plain, else a
    shortened one with a hash that keeps it unique."""
    plain = printable(display_name(name)).replace("?", "_")
    if plain == name and len(name.encode()) <= 120:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{plain.encode()[:60].decode(errors='ignore')}-{digest}"


def feedback_title(name, assignment, several):
    """The title of a student's Markdown feedback (with the assignment where a class has several)."""
    return display_name(name) + (f" / {assignment}" if several else "")
