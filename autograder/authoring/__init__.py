"""What the instructor builds from the masters: the student stubs and the nbgrader release.

Owns: ``stubs`` (assignments/ generated from solutions/: each marked region becomes
``raise NotImplementedError``) and ``release`` (nbgrader's generate_assignment around the
stubs and the source notebook, checked for leaks).

May import: ``grading`` (the course's manifests), ``autograder.paths``. Never ``platforms``
or the CLI (``release`` names the nbgrader plugin only inside the config text it writes).
"""
