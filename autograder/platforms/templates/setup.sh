#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04 by
# default, whose python3 is 3.10: the grader's pins need 3.11 or newer). It makes a virtual
# environment at /autograder/venv with the pins of requirements.txt, torch from PyTorch's CPU
# index (PyPI's Linux torch pulls gigabytes of CUDA libraries).
set -euo pipefail
cd "$(dirname "$0")"
VENV=/autograder/venv
PY=python3.11
if ! command -v "$PY" >/dev/null; then
    if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        PY=python3
    else
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3.11 python3.11-venv
    fi
fi
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu \
    "$(grep '^torch==' requirements.txt)"
"$VENV/bin/python" -m pip install --no-cache-dir -r requirements.txt
# Compiled once here, in the image: each submission's container would otherwise compile the
# grader and its suites again (its __pycache__ is lost with it).
"$VENV/bin/python" -m compileall -q .
"$VENV/bin/python" -c 'import torch; print("torch", torch.__version__, "installed")'
