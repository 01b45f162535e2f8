"""Placeholder: hidden checks of grouped_query (issue 27)."""
