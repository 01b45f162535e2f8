"""Set-up of the public tests of the efficient-attention assignment (pytest runs it first).

<<<<<<< HEAD
These classes are judged against your chapter-3 ``MultiHeadAttention``, imported as the book
does: ``from multihead_attention import MultiHeadAttention``. Copy your ``multihead_attention.py``
and ``causal_attention.py`` into this folder; until you do, they are taken from the
``ch03_attention`` folder beside this one.
=======
Your modules here build on your chapter-3 attention and your chapter-4 LayerNorm and
FeedForward, imported as the book does (``from layer_norm import LayerNorm``). Copy those files
into this folder; until you do, they are taken from the ``ch03_attention`` and ``ch04_gpt``
folders beside this one.
>>>>>>> i27kv
"""
import sys
from pathlib import Path

<<<<<<< HEAD
chapter_3 = Path(__file__).resolve().parent.parent / "ch03_attention"
if chapter_3.is_dir():
    sys.path.append(str(chapter_3))  # last: modules in this folder come first
=======
for chapter in ("ch03_attention", "ch04_gpt"):
    folder = Path(__file__).resolve().parent.parent / chapter
    if folder.is_dir():
        sys.path.append(str(folder))  # last: modules in this folder come first
>>>>>>> i27kv
