"""Modules students get a copy of, and the grader runs too (a manifest's ``support`` key).

They import nothing of the engine: a student's copy beside the stubs must run on its own.
"""
