import sys

from .cli import main

if __name__ == "__main__":  # not when a parallel worker re-imports this module
    sys.exit(main())
