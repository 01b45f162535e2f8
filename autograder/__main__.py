import os
import sys

# `python -m` puts the current folder first on sys.path; run from inside a submission, that
# would let the trusted grader import the student's files (a pytest.py, a torch.py).
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != os.getcwd() or os.getcwd() == _ROOT]

if __name__ == "__main__" and sys.argv[1:2] == ["grade"]:
    from .sandbox.startup import clean_start

    clean_start()  # before anything else is imported: torch is then imported once, here and in the zygote

from .cli import main  # noqa: E402

if __name__ == "__main__":  # not when a parallel worker re-imports this module
    from .sandbox.startup import exit_now

    exit_now(main())
