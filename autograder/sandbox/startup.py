"""The grader's start-up tricks: a process started clean (its environment put aside, one hash
seed), ``torch`` imported once with no garbage collection, and an ending that skips the last
collections. The CLI (``__main__``) and Gradescope's entry point start with them; the zygote
reads what a clean start left (``ENVIRON_FD``, ``ZYGOTE_ENV``). Imports nothing of the engine.
"""
import gc
import os
import sys

# The only variables the zygote (and so every child) inherits. A child can read its own
# environment and put it in an error message the student sees, so the grader's tokens and
# keys (CI secrets, cloud credentials) must never reach it.
# tiktoken's cache folders are paths, not secrets: the zygote loads the GPT-2 encoding from there.
ZYGOTE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME",
              "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "AUTOGRADER_UID_BASE")

# A job array's own index (Slurm's, a Kubernetes Indexed Job's): what ``--shard slurm`` and
# ``--shard kubernetes/N`` read (platforms/shards.from_array). Numbers, not secrets: a clean start
# keeps them for argparse, which reads --shard after it; the zygote keeps only ZYGOTE_ENV.
JOB_ARRAY_ENV = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT",
                 "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX")

# A clean start (see clean_start) keeps the grader's environment here, out of its memory,
# until its zygote is forked: the number of a memory file holding it.
ENVIRON_FD = "AUTOGRADERENVIRON_FD"


def exit_now(code) -> None:
    """``sys.exit(code)`` for a command that has written and closed all its files: the
    interpreter's last garbage collections would walk every object torch made (~0.25 s of a
    one-submission run's 1.7 s); frozen, they are skipped. Objects are still freed as the modules go;
    only reference cycles among them are left to the ending process."""
    gc.freeze()
    sys.exit(code)


def clean_start() -> None:
    """Start this program again, once, as the process a zygote may be forked from: with one hash
    seed (a set's order, and so a wrong answer's feedback, is then the same on every run, in the
    grader and in every child) and with only ZYGOTE_ENV, a job array's index (JOB_ARRAY_ENV) and
    the grader's own AUTOGRADER_* settings in its environment. The rest waits in a memory file, never read into this
    process's memory before its zygote is forked (restore_environment): a child sees all the
    memory its zygote inherited, freed strings included. A no-op where it cannot be done (the
    zygote is then a fresh interpreter, as for any other caller)."""
    if ENVIRON_FD in os.environ or not hasattr(os, "memfd_create") or not getattr(sys, "orig_argv", None):
        return
    try:
        fd = os.memfd_create("autograder-environ", 0)  # inherited by the program started again
        with open(fd, "wb", closefd=False) as saved:
            saved.write(b"\0".join(k + b"=" + v for k, v in os.environb.items()))
    except OSError:
        return
    kept = {k: v for k, v in os.environ.items() if k in ZYGOTE_ENV + JOB_ARRAY_ENV or k.startswith("AUTOGRADER_")}
    kept.update({ENVIRON_FD: str(fd), "PYTHONHASHSEED": "0"})
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], kept)


def restore_environment() -> None:
    """The environment a clean start put aside, back in os.environ (once its zygote is forked)."""
    fd = os.environ.get(ENVIRON_FD)
    if fd is None:
        return
    try:
        data = os.pread(int(fd), os.fstat(int(fd)).st_size, 0)
    except (OSError, ValueError):
        data = None  # a process that no longer holds the file keeps what it has
    if data is not None:
        os.environb.clear()
        os.environb.update(dict(e.split(b"=", 1) for e in data.split(b"\0") if b"=" in e))
    os.environ.pop(ENVIRON_FD, None)


def import_torch():
    """``import torch``, with no garbage collection while it runs: torch's import makes some
    170,000 objects that all stay, and collecting among them cost ~0.2 s of the 1.5 s, then
    more at every full collection afterwards (~0.15 s while pytest imports). What the import
    made is frozen instead: later collections skip it, and a forked process shares its pages."""
    if "torch" not in sys.modules:
        enabled = gc.isenabled()
        gc.disable()
        try:
            import torch.nn  # noqa: F401
        finally:
            gc.freeze()
            if enabled:
                gc.enable()
    import torch
    return torch
