"""The files a platform writes for a student: their names, and writing them whole.

Folder names come from students: any bytes, any length. What is written under them is named
so that every file system accepts it, and written beside the target, then renamed, so a crash
never leaves a half-written result.
"""
import errno
import hashlib
import os
import re
import stat
import tempfile
import unicodedata

from ..sandbox.submission import printable


def write_atomic(path, text) -> None:
    """Write beside the target, then rename: a crash never leaves a half-written result."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def own_folder(path):
    """Make the folder ``path`` (with its parents), or check the one there: what the trusted
    process writes goes only where no one else can plant a link or swap a file. It must be a
    folder (not a link) of this user's, not writable by others, in a parent no one else can
    rename it in (this user's or root's, sticky where others may write). OSError otherwise."""
    path.mkdir(parents=True, exist_ok=True)
    mine, parent = os.lstat(path), os.stat(path.absolute().parent)
    if not stat.S_ISDIR(mine.st_mode):
        raise OSError(errno.EPERM, f"{path} is a link, not a folder: give the folder itself")
    if mine.st_uid != os.geteuid() or mine.st_mode & 0o022:
        raise OSError(errno.EPERM, f"{path} is not a folder of this user's alone (owner uid {mine.st_uid}, "
                                   f"mode {stat.filemode(mine.st_mode)}): others could plant links in it")
    if parent.st_uid not in (0, os.geteuid()) or parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX:
        raise OSError(errno.EPERM, f"{path}: another user may replace it (its parent is not this user's alone)")
    return path


def display_name(name) -> str:
    """A folder name as text that can be written anywhere and tells every folder apart: what
    would not show, or would show like something else, is written as its escape. Bytes that are
    not UTF-8 become \\xNN; control, format (zero-width, bidi), private, unassigned and
    separator characters but the plain space, and spaces at either end, become \\uNNNN; a
    combining mark in a name that is not in NFC becomes \\uNNNN too (else "é" and "e\\u0301"
    look alike); and the backslash itself is doubled, so no name can spell another's escape."""
    shown = []
    composed = unicodedata.is_normalized("NFC", name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    for i, char in enumerate(name):
        code, category = ord(char), unicodedata.category(char)
        if 0xDC80 <= code <= 0xDCFF:          # a byte that is not UTF-8 (os.fsdecode's surrogateescape)
            shown.append(f"\\x{code - 0xDC00:02x}")
        elif char == "\\":
            shown.append("\\\\")
        elif (category[0] == "C" or category in ("Zl", "Zp") or category == "Zs" and char != " "
              or char == " " and i in (0, len(name) - 1) or category == "Mn" and not composed):
            shown.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            shown.append(char)
    return "".join(shown)


# The class's own files beside the results (summary.json, report.html, grades.csv): no student's
# results may take their names, whatever the case (a case-blind file system).
CLASS_FILES = {"summary", "report", "grades"}
_SHORTENED = re.compile(r"-[0-9a-f]{16}\Z")


def result_stem(name):
    """A file name for a student's results that every file system accepts (the temporary
    name beside it included), unique by construction: the folder's name where it is short,
    plain, not one of the class's own files and not shaped like a shortened name; else its
    start and a hash of the whole name (so no folder *named* like a shortened name can take
    another student's files, on a file system blind to case either)."""
    plain = printable(display_name(name)).replace("?", "_").replace("\\", "_")
    if (plain == name and len(name.encode()) <= 120 and not _SHORTENED.search(name.casefold())
            and name.casefold() not in CLASS_FILES):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{plain.encode()[:60].decode(errors='ignore')}-{digest}"


def feedback_title(name, assignment, several):
    """The title of a student's Markdown feedback (with the assignment where a class has several)."""
    return display_name(name) + (f" / {assignment}" if several else "")
