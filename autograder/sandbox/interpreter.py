"""Which Python uid nobody can run, where a sandbox without a private root needs one.

With a private root the sandbox binds the grader's own Python into it, and nobody reaches it
there. Without one (namespaces refused, or isolation turned off) nobody sees the machine's
real folders: a Python under a mode-700 home (pyenv's under /root, or a virtual environment
made from it) is out of its reach, and so is every module it has not imported yet. There the
notebook's kernel, and the zygote whose children run submissions, use a virtual environment
every user can read: ``$AUTOGRADER_USER_VENV``, by default /opt/autograder-venv (.ci/run
builds it), when it holds the same versions of what they need. Where there is none,
``python_for_others`` says so in one line: which path, and what to do.

Standard library only: the kernel's launcher imports it before every kernel.
"""
import functools
import importlib.metadata
import json
import os
import stat
import subprocess
import sys

USER_VENV = "AUTOGRADER_USER_VENV"
DEFAULT_USER_VENV = "/opt/autograder-venv"
_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Run by the other Python: where it reads from, and the versions of the distributions asked for.
_QUERY = """import importlib.metadata as m, json, sys
def version(name):
    try:
        return m.version(name)
    except m.PackageNotFoundError:
        return None
print(json.dumps({"paths": [sys.executable, sys.prefix, sys.base_prefix, *sys.path],
                  "versions": {name: version(name) for name in sys.argv[1:]}}))"""


def blocked(path) -> str | None:
    """'FOLDER (mode NNN)': where a user with no rights of its own is stopped on the way to
    ``path`` (a folder it cannot pass, or ``path`` itself unreadable); None where it is not."""
    path = os.path.realpath(path)
    chain = [path]
    while chain[-1] != "/":
        chain.append(os.path.dirname(chain[-1]))
    for part in reversed(chain):
        mode = os.stat(part).st_mode
        need = stat.S_IXOTH if part != path or stat.S_ISDIR(mode) or mode & stat.S_IXUSR else 0
        if part == path:
            need |= stat.S_IROTH
        if mode & need != need:
            return f"{part} (mode {stat.S_IMODE(mode):o})"
    return None


def first_blocked(paths):
    return next(filter(None, map(blocked, paths)), None)


def own_paths() -> list:
    """What this interpreter reads to start and to import: its executable, prefixes and import
    path (not the repository, which the launcher and the zygote put there for themselves)."""
    paths = [sys.executable, sys.prefix, sys.base_prefix, *sys.path]
    return [p for p in paths if p and p != _REPOSITORY and os.path.exists(p)]


def python_for_others(needs):
    """(python, None): an interpreter nobody can run, holding the distributions ``needs`` at
    this interpreter's versions (this one where nobody can reach it); else (None, why)."""
    where = first_blocked(own_paths())
    if where is None:
        return sys.executable, None
    return _user_venv(tuple(needs), where, os.environ.get(USER_VENV) or DEFAULT_USER_VENV)


@functools.lru_cache(maxsize=None)
def _user_venv(needs, where, venv):
    python = os.path.join(venv, "bin", "python")
    why = _unusable(python, needs)
    if why is None:
        return python, None
    return None, (f"uid nobody cannot reach this Python ({where}), {why}: make a virtual environment of a "
                  f"Python every user can read (`/usr/bin/python3 -m venv {venv} && {venv}/bin/pip install -r "
                  f"requirements.txt && chmod -R a+rX {venv}`) or name one in ${USER_VENV}")


def _unusable(python, needs):
    """Why ``python`` cannot stand in for this interpreter for uid nobody, or None."""
    if not os.path.exists(python):
        return f"and there is no {python}"
    try:
        done = subprocess.run([python, "-I", "-c", _QUERY, *needs], capture_output=True, text=True, timeout=60,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        info = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return f"and {python} does not run ({type(exc).__name__})"
    where = first_blocked([python, *(p for p in info["paths"] if p and os.path.exists(p))])
    if where:
        return f"nor {python} ({where})"
    for name in needs:
        mine, theirs = importlib.metadata.version(name), info["versions"].get(name)
        if theirs != mine:
            return f"and {python} has {name} {theirs or 'not installed'}, not {mine}"
    return None
