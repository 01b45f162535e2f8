"""Where things live in the repository."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
ASSIGNMENTS = ROOT / "assignments"
SOURCE = ROOT / "source"
SUITES = ROOT / "autograder" / "suites"
ASSIGNMENT_NAMES = ("ch03_attention",)


def student_modules(assignment):
    """File names of the modules students write (the solutions' masters, minus public tests)."""
    return sorted(p.name for p in (SOLUTIONS / assignment).glob("*.py") if not p.name.startswith("test_"))
