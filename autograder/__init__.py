"""Autograder for the attention-mechanisms course.

Kept import-free on purpose: the warm process that forks sandboxed children imports
this package, and must never hold the reference solutions or the hidden suites.
"""
