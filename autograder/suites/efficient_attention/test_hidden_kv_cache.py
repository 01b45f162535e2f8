"""Placeholder: hidden checks of kv_cache (issue 27)."""
