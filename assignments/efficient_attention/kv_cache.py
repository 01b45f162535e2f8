"""Placeholder: the master of kv_cache.py is written next (issue 27)."""
