"""Reading a submission from disk: never following links, every size bounded.

Kept free of torch so that the CLI's main process can fingerprint and schedule a class
without paying for ``import torch``.
"""
import importlib.util
import json
import os
import re
import stat

MAX_SOURCE_BYTES = 256 << 10
MAX_SOURCES = 64
# All sources travel in one frame, JSON-escaped (up to 6 bytes a character): stay well under
# protocol.MAX_JSON (checked in session.py), so a padded submission gets a note, not a grader error.
MAX_TOTAL_SOURCE_BYTES = 512 << 10
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# C0 and C1 controls (ESC and CSI start terminal sequences) and the bidirectional overrides
# that make a line read other than it is.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class SubmissionError(Exception):
    """The submission cannot be graded at all (not a folder, no Python files)."""


def clean_text(text, limit=400):
    """Untrusted text from a child, safe to print in one line of a report."""
    text = _CONTROL.sub(" ", str(text)).replace("\n", " ").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text) -> str:
    """Text to print on the instructor's terminal: lines kept, no control characters."""
    return "\n".join(_CONTROL.sub("?", line) for line in str(text).split("\n"))


def decode_python_source(data):
    """Source bytes as the text Python itself would run: a UTF-8 byte-order mark, a PEP 263
    coding line, and CRLF or CR line endings are honoured. Raises SyntaxError (or
    UnicodeError) where Python would refuse the file."""
    # CR-only files: the coding line is looked for per line, and lines end in \n there.
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return importlib.util.decode_source(data)


def read_sources(folder) -> tuple:
    """The submission's top-level modules as {name: source}, read without following links.

    Returns (sources, notes); notes are one-line remarks about files that were skipped.
    """
    folder = os.fspath(folder)
    if os.path.islink(folder):
        raise SubmissionError(f"{folder} is a symbolic link, not a folder: not read")
    if not os.path.isdir(folder):
        raise SubmissionError(f"{folder} is not a folder")
    sources, notes, total = {}, [], 0
    # No link is followed at this level either (the caller refuses a linked student folder).
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise SubmissionError(f"{folder} cannot be read: {exc.strerror}") from None
    try:
        for name in sorted(os.listdir(dir_fd)):
            if not name.endswith(".py"):
                continue
            stem = name[:-3]
            if not _MODULE_NAME.match(stem):
                notes.append(f"{name}: not a valid module name, ignored")
                continue
            if len(sources) >= MAX_SOURCES:
                notes.append(f"{name}: more than {MAX_SOURCES} Python files, ignored")
                continue
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
            except OSError as exc:
                notes.append(f"{name}: not read ({'a symbolic link' if exc.errno == 40 else exc.strerror})")
                continue
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a folder
                os.close(fd)
                notes.append(f"{name}: not a regular file, ignored")
                continue
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(MAX_SOURCE_BYTES + 1)
            if len(data) > MAX_SOURCE_BYTES:
                notes.append(f"{name}: larger than {MAX_SOURCE_BYTES // 1024} KiB, ignored")
                continue
            try:
                text = decode_python_source(data)
            except UnicodeDecodeError as exc:
                line = data[:exc.start].count(b"\n") + 1
                notes.append(f"{name}: line {line} is not valid {exc.encoding} text (save the file as UTF-8), ignored")
                continue
            except (SyntaxError, UnicodeError, LookupError) as exc:
                why = clean_text(getattr(exc, "msg", None) or exc, 160)
                notes.append(f"{name}: cannot be read as Python source ({why}), ignored")
                continue
            if total + len(json.dumps(text)) > MAX_TOTAL_SOURCE_BYTES:
                notes.append(f"{name}: the submission's Python files exceed {MAX_TOTAL_SOURCE_BYTES // 1024} KiB"
                             " in all, ignored")
                continue
            total += len(json.dumps(text))
            sources[stem] = text
    finally:
        os.close(dir_fd)
    return sources, notes


