"""The one precondition of the tests that need a Python uid nobody can run: as root without a
private root (the sandboxed child, the notebook's kernel), and for an ordinary user's copy of
the project. A fresh machine whose Python lives under a mode-700 home (pyenv's under /root)
and where no $AUTOGRADER_USER_VENV (default /opt/autograder-venv) was built has none: each
such test skips there and says why, so the README's test command passes as written. Under CI
(.ci/run builds that environment) a missing one fails instead of skipping."""
import os

import pytest

from autograder.sandbox import interpreter


def unmet(message):
    """Skip with ``message`` (fail under CI, where the environment is built first)."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def python_nobody_runs(needs, what):
    """The interpreter uid nobody can run that holds ``needs`` at this one's versions (this one
    where nobody reaches it); the test skips, saying ``what`` needs it and why, where none."""
    python, why = interpreter.python_for_others(needs)
    if python is None:
        unmet(f"{what}: {why}")
    return python
