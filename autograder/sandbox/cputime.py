"""The CPU time a sandboxed process tree has used, read from outside it (the host's /proc).

A child's or a notebook cell's time limit counts the submission's own work: CPU seconds, which a
busy machine does not inflate, with wall-clock time kept only as a generous backstop against a
stall (a child that sleeps or blocks uses no CPU). Everything here is measured by the trusted
process from the kernel's own accounting: nothing the child says is read.
"""
import os
import select
import time

_TICK = os.sysconf("SC_CLK_TCK")
# The wall-clock backstop: a limit of T CPU seconds ends, whatever the CPU, after BACKSTOP * T
# seconds (or T + BACKSTOP_EXTRA, whichever is longer), so a machine as busy as 6 processes a core
# still grades what an idle one grades, and a sleeping child still ends.
BACKSTOP = 6
BACKSTOP_EXTRA = 30.0


def _stat(pid):
    """(CPU seconds of ``pid``, its threads and its reaped children); None where it is gone or hidden."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(f) for f in fields[11:15]) / _TICK  # after the name: utime stime cutime cstime


def children(pid: int) -> list:
    """The pids whose parent is ``pid`` (each of its threads' children), [] where it is gone."""
    found = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
    except OSError:
        pass
    return found


def seconds(pid: int) -> float:
    """CPU seconds used so far by ``pid`` (all its threads) and what it reaped; 0.0 where gone.
    One read of /proc: cheap enough to take at the start of every probe."""
    return _stat(pid) or 0.0


def tree_seconds(pid: int) -> float:
    """CPU seconds used so far by ``pid`` and every process below it that is alive or was reaped
    by one of them (0.0 where /proc shows none of it)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += _stat(p) or 0.0
        todo.extend(children(p))
    return total


def backstop(limit: float) -> float:
    """The wall-clock seconds after which a task limited to ``limit`` CPU seconds ends anyway."""
    return max(limit * BACKSTOP, limit + BACKSTOP_EXTRA)


class Exceeded(Exception):
    """The limit a task ran past, in ``past``'s words."""


def past(limit: float, used: float, elapsed: float) -> str | None:
    """The limit a task that has used ``used`` CPU seconds in ``elapsed`` wall seconds has run
    past, in words for its feedback ("5 s of CPU time (...)"); None while it is inside both."""
    if used >= limit:
        return f"{limit:g} s of CPU time (it used {used:.1f} s in {elapsed:.1f} s: an infinite loop?)"
    if elapsed >= backstop(limit):
        return f"the {backstop(limit):g} s wall-clock backstop, using {used:.1f} s of CPU in it (sleeping or blocked?)"
    return None


def wait_readable(fd, measure, limit: float, used_before: float, started: float = None) -> None:
    """Return once ``fd`` is readable, while ``measure()`` (``seconds`` or ``tree_seconds`` of the
    task's process) has grown less than ``limit`` CPU seconds beyond ``used_before`` (its value
    when the task began) and the wall clock is inside the backstop from ``started`` (now where
    None); else raise Exceeded with ``past``'s words. Costs one select where the answer comes
    within ``limit`` wall seconds, as on an idle machine: only a slow one reads /proc."""
    started = time.monotonic() if started is None else started
    wait = limit - (time.monotonic() - started)
    while True:
        if select.select([fd], [], [], max(wait, 0.0))[0]:
            return
        used, elapsed = measure() - used_before, time.monotonic() - started
        why = past(limit, used, elapsed)
        if why:
            raise Exceeded(why)
        # the task cannot use the rest of its CPU time in less wall time than that
        wait = min(limit - used, backstop(limit) - elapsed)
