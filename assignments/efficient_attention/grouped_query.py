"""Placeholder: the master of grouped_query.py is written next (issue 27)."""
