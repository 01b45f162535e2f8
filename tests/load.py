"""CPU hogs for the tests of a busy machine: processes that keep every core busy for a bounded
time, started and ended by the test itself, by their pids."""
import contextlib
import os
import subprocess
import sys

# Busy until its own deadline: a hog the test fails to end still stops by itself.
HOG = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"


@contextlib.contextmanager
def cpu_hogs(seconds, per_core=3):
    """``per_core`` busy processes for each core, for at most ``seconds``: a load average of
    about ``per_core`` times the cores, as on a shared server."""
    # each in a session of its own, as other users' jobs are: the scheduler's autogroups share the
    # cores between sessions, so hogs of the test's own session would slow only the test
    hogs = [subprocess.Popen([sys.executable, "-c", HOG, str(seconds)], stdin=subprocess.DEVNULL,
                             start_new_session=True)
            for _ in range(per_core * (os.cpu_count() or 1))]
    try:
        yield [h.pid for h in hogs]
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
