"""Set-up of the public tests of the efficient-attention assignment (pytest runs it first).

These classes are judged against your chapter-3 ``MultiHeadAttention``, imported as the book
does: ``from multihead_attention import MultiHeadAttention``. Copy your ``multihead_attention.py``
and ``causal_attention.py`` into this folder; until you do, they are taken from the
``ch03_attention`` folder beside this one.
"""
import sys
from pathlib import Path

chapter_3 = Path(__file__).resolve().parent.parent / "ch03_attention"
if chapter_3.is_dir():
    sys.path.append(str(chapter_3))  # last: modules in this folder come first
