"""Deciding scores: the course's manifests, the hidden suites' runner, the comparisons, the result.

Owns: ``course`` (assignments and their manifests: parts, modules, builds_on), ``runner``
(runs an assignment's hidden pytest suites against one submission, in the trusted process,
with the ``student`` fixture served by a sandboxed child), ``compare`` (what the suites use
to judge a child's answers against the reference and name a mistake) and ``result`` (the
one typed result: checks, parts, a submission, a class; built here once, read by every
platform).

May import: ``sandbox`` (to run a submission), ``autograder.paths`` and ``autograder.support``.
Never ``platforms``, ``authoring`` or the CLI.
"""
