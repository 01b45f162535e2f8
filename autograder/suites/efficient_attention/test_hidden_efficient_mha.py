"""Placeholder: hidden checks of efficient_mha (issue 27)."""
