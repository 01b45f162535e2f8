"""Placeholder: the master of sliding_window.py is written next (issue 27)."""
