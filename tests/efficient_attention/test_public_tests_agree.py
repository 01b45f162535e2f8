"""The converse of tests/test_public_tests.py's agreement (there: a public test fails only in a
part the grade charges, and every correct style passes every public test), on the cases of
issue 36: a stated requirement that the grade charges (a transfer without torch.no_grad() or
returning the module, weights that share memory, apply_rope's dtype, RoPE tables of 4096 rows, a
default of 4 bytes, the dropout of the RoPE and KV-cache attentions, the bonus notebook's merge)
fails a public test of its part, and of that part only, so that public green means no such
surprise. (The grade's side is proven by tests/test_mutants.py.)
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from autograder.grading import course  # noqa: E402
from banks import load, mutated_sources  # noqa: E402

pytestmark = pytest.mark.slow
ASSIGNMENT = "efficient_attention"
MUTANTS = ["transfer copies into the parameters without torch.no_grad()",
           "transfer hands the chapter-3 out_proj itself to the combined class",
           "einsum transfer sets .data to the transposed weights without a copy",
           "transfer returns the module it filled",
           "combined attention merges the heads into x's width (the bonus notebook's view(b, num_tokens, embed_dim))",
           "KV-cache size defaults to 4 bytes per element",
           "RoPE attention without dropout",
           "RoPE tables of the default 4096 rows in the attention",
           "apply_rope returns float32 for a bfloat16 x",
           "the cached attention without dropout"]


def failing(sources, tmp_path):
    """The public tests that fail on ``sources`` in a student's folder (the stubs' folder, the
    submission's modules over the stubs), as [(part, test name)]."""
    folder = tmp_path / ASSIGNMENT
    shutil.copytree(course.get(ASSIGNMENT).stubs, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for filename, text in sources.items():
        (folder / filename).write_text(text, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", str(folder)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "400"})
    found = re.findall(r"^FAILED \S*test_(\w+)\.py::(\S+)", run.stdout, flags=re.M)
    assert found or " passed" in run.stdout, run.stdout[-3000:]
    return found


@pytest.mark.parametrize("name", MUTANTS)
def test_a_charged_mistake_fails_a_public_test_of_its_part_only(name, tmp_path):
    mutant = next(m for m in load(ASSIGNMENT, "mutants").MUTANTS if m.name == name)
    failed = failing(mutated_sources(ASSIGNMENT, mutant), tmp_path)
    assert failed, f"{name}: every public test passes, yet the grade charges {mutant.parts}"
    assert {part for part, _ in failed} <= set(mutant.parts), f"{name}: {failed} fail, the grade charges {mutant.parts}"

