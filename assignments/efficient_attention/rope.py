"""Placeholder: the master of rope.py is written next (issue 27)."""
