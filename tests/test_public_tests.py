"""The public tests students run: green on the reference, a clear NotImplementedError on the stubs."""
import os
import re
import subprocess
import sys

from autograder.paths import ASSIGNMENTS, ROOT, SOLUTIONS


def run_pytest(folder):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "400"})  # untruncated summary lines


def counts(output):
    found = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (passed|failed)", output))
    return found.get("passed", 0), found.get("failed", 0)


def test_public_tests_pass_on_the_solutions():
    run = run_pytest(SOLUTIONS / "ch03_attention")
    assert run.returncode == 0, run.stdout[-2000:]
    assert counts(run.stdout) == (26, 0)


def test_public_tests_fail_on_the_stubs_with_not_implemented():
    run = run_pytest(ASSIGNMENTS / "ch03_attention")
    assert counts(run.stdout) == (0, 26), run.stdout[-2000:]
    failures = re.findall(r"^FAILED .*$", run.stdout, flags=re.M)
    assert len(failures) == 26
    assert all("NotImplementedError" in line for line in failures), failures


def test_public_tests_agree_with_the_mask_check(tmp_path):
    """Public green means no surprise in the mask check (the decision beside the "sdpa_causal"
    alternative): is_causal=True passes both, a mask forward builds on the CPU fails both."""
    from alternatives import ALTERNATIVES
    from mutants import MUTANTS
    from test_mutants import mutated_sources

    causal = next(a for a in ALTERNATIVES if "is_causal=True" in a.name)
    cpu_mask = next(m for m in MUTANTS if m.name.startswith("MultiHeadAttention ignores its mask buffer"))
    for name, sources, expected in (("causal", {f"{m}.py": s for m, s in causal.sources().items()}, (26, 0)),
                                    ("cpu_mask", mutated_sources(cpu_mask), (25, 1))):
        folder = tmp_path / name
        folder.mkdir()
        for test in (SOLUTIONS / "ch03_attention").glob("test_*.py"):
            (folder / test.name).write_text(test.read_text())
        for filename, text in sources.items():
            (folder / filename).write_text(text)
        run = run_pytest(folder)
        assert counts(run.stdout) == expected, run.stdout[-2000:]
        assert expected[1] == 0 or "forward must mask with self.mask" in run.stdout
