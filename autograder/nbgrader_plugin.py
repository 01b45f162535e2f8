"""``autograder.nbgrader_plugin`` as an existing course's nbgrader_config.py names it.

``python -m autograder release --course`` wrote ``from autograder.nbgrader_plugin import
configure`` into courses made before the engine was split by trade; it is the same module as
``autograder.platforms.nbgrader_plugin``.
"""
import sys

from .platforms import nbgrader_plugin

sys.modules[__name__] = nbgrader_plugin
