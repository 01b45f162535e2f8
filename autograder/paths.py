"""Where things live: the engine's own repository, and the course it grades.

The course (solutions/, assignments/, source/, autograder/suites/) is the repository itself,
or the folder ``$AUTOGRADER_COURSE`` names (the tests grade a throwaway course that way).
What each assignment holds is in its manifest (see course.py)."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSE = Path(os.environ.get("AUTOGRADER_COURSE") or ROOT).resolve()
SOLUTIONS = COURSE / "solutions"
ASSIGNMENTS = COURSE / "assignments"
SOURCE = COURSE / "source"
SUITES = COURSE / "autograder" / "suites"
# The hidden suites' pytest settings: the engine's, whichever course it grades.
PYTEST_INI = ROOT / "autograder" / "suites" / "pytest.ini"
