"""Placeholder: hidden checks of rope (issue 27)."""
