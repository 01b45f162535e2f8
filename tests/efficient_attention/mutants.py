"""A bank of buggy variants of the efficient-attention reference (see tests/banks.py).

Two lists, kept apart so that the parts can be written side by side; MUTANTS is their sum."""
from banks import Mutant  # noqa: F401


# efficient_mha, grouped_query, sliding_window, rope
MUTANTS_ATTENTION = [
]


# ----------------------------------------------------------------------------------------------
# (space between the two lists, so that each grows without touching the other)
#
#
#
#
#
#
#
#
# ----------------------------------------------------------------------------------------------


# kv_cache
MUTANTS_KV_CACHE = [
]


MUTANTS = MUTANTS_ATTENTION + MUTANTS_KV_CACHE
