'''A bank of correct efficient-attention submissions written in other students' styles
(see tests/banks.py and tests/ch04_gpt/alternatives.py for the pattern).

Module variants (style -> source) are written once and combined into ``ALTERNATIVES``; the
"plain" variant of each module is a straightforward student's own code. Two halves, kept apart
so that the parts can be written side by side.
'''
from functools import partial

import banks


# efficient_mha, grouped_query, sliding_window, rope: {module: {style: source}}
VARIANTS_ATTENTION = {
}


# ----------------------------------------------------------------------------------------------
# (space between the two halves, so that each grows without touching the other)
#
#
#
#
#
#
#
#
# ----------------------------------------------------------------------------------------------


# kv_cache: {"kv_cache": {style: source}}
VARIANTS_KV_CACHE = {
}


VARIANTS = {**VARIANTS_ATTENTION, **VARIANTS_KV_CACHE}
Alternative = partial(banks.Alternative, VARIANTS)


# whole submissions whose styles are about efficient_mha, grouped_query, sliding_window, rope
ALTERNATIVES_ATTENTION = [
]


# ----------------------------------------------------------------------------------------------
#
#
#
#
#
#
#
#
# ----------------------------------------------------------------------------------------------


# whole submissions whose styles are about kv_cache
ALTERNATIVES_KV_CACHE = [
]


ALTERNATIVES = ALTERNATIVES_ATTENTION + ALTERNATIVES_KV_CACHE
