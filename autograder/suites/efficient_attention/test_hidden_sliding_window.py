"""Placeholder: hidden checks of sliding_window (issue 27)."""
