"""The Gradescope bundle's cost per submission: peak memory of the whole process tree (grader,
zygote, sandboxed child) and wall time of run_autograder on each assignment's reference, beside a
bare `python -c "import torch"`, side by side in one run.

Each round runs both commands, alternating which goes first; a sampler reads /proc every 10 ms
and sums VmRSS and Pss over the command and all its descendants (RSS counts pages a forked
child shares with the zygote twice; Pss splits them, which is closer to what a container's
memory limit counts). Prints the medians, and the ratios of the bundle's to import torch's.
The unpacked bundle is compiled first, as setup.sh does once in Gradescope's image.

    python benchmarks/gradescope_bundle.py [--rounds 5] [--isolation full|off] [--assignment A ...]
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.grading import course  # noqa: E402
from autograder.platforms import gradescope


def _tree(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def _kib(path, field):
    try:
        with open(path) as handle:
            return next((int(line.split()[1]) for line in handle if line.startswith(field)), 0)
    except OSError:
        return 0


def measure(command, env=None):
    """(wall s, CPU s, peak summed RSS MiB, peak summed PSS MiB, largest VmPeak MiB: the address
    space one process maps, what RLIMIT_AS bounds) of ``command`` and its descendants."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rss = pss = vm = 0
    while process.poll() is None:
        pids = _tree(process.pid)
        rss = max(rss, sum(_kib(f"/proc/{p}/status", "VmRSS:") for p in pids))
        vm = max([vm] + [_kib(f"/proc/{p}/status", "VmPeak:") for p in pids])
        pss = max(pss, sum(_kib(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids))
        time.sleep(0.01)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # every descendant, once its parent reaped it
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if process.returncode != 0:
        raise RuntimeError(f"{command} exited {process.returncode}")
    return seconds, cpu, rss / 1024, pss / 1024, vm / 1024


def _copy_submission(assignment, folder):
    """The reference of ``assignment`` and of the modules it builds on, as a student uploads them."""
    a = course.get(assignment)
    for earlier, modules in a.builds_on.items():
        for name in modules:
            shutil.copy(course.get(earlier).solutions / name, folder)
    for name in a.modules:
        shutil.copy(a.solutions / name, folder)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--isolation", default="full", choices=("full", "off"))
    parser.add_argument("--assignment", action="append", help="one bundle per assignment (default: every one)")
    args = parser.parse_args(argv)
    assignments = args.assignment or [a.name for a in course.assignments()]
    torch_only = "python -c 'import torch'"
    runs = {torch_only: [], **{f"run_autograder, {a} reference": [] for a in assignments}}
    with tempfile.TemporaryDirectory() as tmp:
        commands = {torch_only: ([sys.executable, "-c", "import torch"], None)}
        bundles = {}
        for a in assignments:
            bundles[a] = Path(tmp) / f"{a}.zip"
            gradescope.build(a, bundles[a])
        for round_ in range(args.rounds):
            for a in assignments:
                autograder = gradescope.unpack(bundles[a], Path(tmp) / str(round_) / a / "autograder")
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(autograder / "source")], check=True)
                _copy_submission(a, autograder / "submission")
                env = {**os.environ, "AUTOGRADER_ROOT": str(autograder), "PYTHON": sys.executable,
                       "AUTOGRADER_ISOLATION": args.isolation, "AUTOGRADER_UNSAFE_SAME_UID": "1"}  # the reference: trusted
                commands[f"run_autograder, {a} reference"] = ([str(autograder / "source" / "run_autograder")], env)
            order = list(commands) if round_ % 2 == 0 else list(reversed(commands))
            for name in order:
                runs[name].append(measure(*commands[name]))
    print(f"{args.rounds} rounds, isolation {args.isolation}, {os.cpu_count()} cores; medians:")
    print(f"  {'':<44} {'wall s':>7} {'CPU s':>6} {'peak RSS MiB':>13} {'peak PSS MiB':>13} {'VmPeak MiB':>11}")
    medians = {}
    for name, values in runs.items():
        medians[name] = [statistics.median(v[i] for v in values) for i in range(5)]
        wall, cpu, rss, pss, vm = medians[name]
        print(f"  {name:<44} {wall:>7.2f} {cpu:>6.2f} {rss:>13.0f} {pss:>13.0f} {vm:>11.0f}")
    for name in runs:
        if name != torch_only:
            print(f"  {'ratio to import torch, ' + name.split(', ')[1]:<44} {medians[name][0] / medians[torch_only][0]:>7.2f} "
                  f"{medians[name][1] / medians[torch_only][1]:>6.2f}   (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
