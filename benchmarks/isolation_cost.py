"""What isolation costs per submission: the same submissions graded with every protection
("full": namespaces, private root, seccomp, limits...) and without namespaces ("off": rlimits,
no_new_privs and seccomp only), side by side in one run.

Both graders are warm (one zygote each) before timing starts; rounds alternate which mode
goes first so that neither profits from the other's caches. Prints, per submission and
mode, the median seconds, and the median of the per-grading ratios full/off.

    python benchmarks/isolation_cost.py [--rounds 5]
"""
import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.paths import ASSIGNMENTS, SOLUTIONS  # noqa: E402
from autograder import protocol  # noqa: E402
from autograder.runner import Grader  # noqa: E402


def _submission(base, folder):
    folder.mkdir()
    for path in (base / "ch03_attention").glob("*.py"):
        if not path.name.startswith("test_"):
            shutil.copy(path, folder)
    return folder


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        subs = {"correct": _submission(SOLUTIONS, Path(tmp) / "correct"),
                "blank": _submission(ASSIGNMENTS, Path(tmp) / "blank")}
        times = {(name, mode): [] for name in subs for mode in ("full", "off")}
        ratios, held = [], {}
        # Our own solutions and stubs: "off" may run them with this uid (where nobody cannot read Python).
        with Grader(isolation="full") as full, Grader(isolation="off", unsafe_same_uid=True) as off:
            graders = {"full": full, "off": off}
            for grader in graders.values():          # warm-up: zygote ready, suites compiled
                grader.grade(subs["blank"])
            for r in range(args.rounds):
                order = ("full", "off") if r % 2 == 0 else ("off", "full")
                for name, folder in subs.items():
                    seconds = {}
                    for mode in order:
                        started = time.perf_counter()
                        result = graders[mode].grade(folder)
                        seconds[mode] = time.perf_counter() - started
                        times[name, mode].append(seconds[mode])
                        expected = 100 if name == "correct" else 0
                        assert result["score"] == expected, (name, mode, result["score"])
                        held[mode] = result["extra_data"]["protections"]["held"]
                    ratios.append(seconds["full"] / seconds["off"])
    # The cost where it is paid: one child's start (fork, namespaces, new root) until it says hello.
    starts = {"full": [], "off": []}
    for mode, grader in (("full", Grader(isolation="full")), ("off", Grader(isolation="off", unsafe_same_uid=True))):
        with grader:
            for _ in range(5 + 20):
                started = time.perf_counter()
                pid, sock = grader.zygote.spawn()
                protocol.recv(sock, time.monotonic() + 30)
                starts[mode].append(time.perf_counter() - started)
                sock.close()
                grader.zygote.reap(pid)
            del starts[mode][:5]   # the first spawns warm the zygote up
    f, o = statistics.median(starts["full"]) * 1e3, statistics.median(starts["off"]) * 1e3
    print(f"child start: full {f:.1f} ms, off {o:.1f} ms (median of 20)")
    print(f"{'submission':<10} {'full (s)':>9} {'off (s)':>9} {'ratio':>7}   ({args.rounds} rounds, medians)")
    for name in subs:
        f, o = statistics.median(times[name, "full"]), statistics.median(times[name, "off"])
        print(f"{name:<10} {f:9.3f} {o:9.3f} {f / o:7.3f}")
    print(f"median ratio full/off over all gradings: {statistics.median(ratios):.3f}")
    for mode, protections in held.items():
        print(f"{mode}: {', '.join(protections)}")


if __name__ == "__main__":
    main()
