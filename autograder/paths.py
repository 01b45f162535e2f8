"""Where things live in the repository."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
ASSIGNMENTS = ROOT / "assignments"
SOURCE = ROOT / "source"
SUITES = ROOT / "autograder" / "suites"
ASSIGNMENT_NAMES = ("ch03_attention",)
