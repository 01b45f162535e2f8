"""tiktoken's GPT-2 encoding works with the network unreachable, from the pinned package's files.

Each case runs a fresh interpreter in a new network namespace (``unshare -n``: no route
anywhere) where that is allowed, else with socket connections refused in the interpreter, and
with a fresh temporary folder: nothing cached from an earlier run can help."""
import os
import shutil
import subprocess
import sys

import pytest

from autograder import course

HELPER = course.get("ch04_gpt").solutions  # tiktoken_offline.py: the one place that sets tiktoken up

NO_SOCKETS = ("import socket\n"
              "def _refuse(*args, **kwargs):\n"
              "    raise OSError('network unreachable (test)')\n"
              "socket.socket.connect = _refuse\n"
              "socket.create_connection = _refuse\n"
              "socket.getaddrinfo = _refuse\n")


def offline(code, tmp_path, **env):
    """Run ``code`` with no network, a fresh TMPDIR and no tiktoken cache variable; returns the run."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    environment = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    environment.update(TMPDIR=str(tmp), PYTHONPATH=str(HELPER), **env)
    command = [sys.executable, "-c", code]
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        command = ["unshare", "-n", *command]
    else:
        command = [sys.executable, "-c", NO_SOCKETS + code]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)


USE = ("import tiktoken\n"
       "gpt2 = tiktoken.get_encoding('gpt2')\n"
       "r50k = tiktoken.get_encoding('r50k_base')\n"
       "ids = gpt2.encode('Hello, I am')\n"
       "assert ids == [15496, 11, 314, 716], ids\n"
       "assert r50k.encode('Every effort moves you') == [6109, 3626, 6100, 345]\n"
       "assert gpt2.decode([15496, 11, 314, 716, 27018, 24086]) == 'Hello, I am Featureiman'\n"
       "print('ok')\n")


def test_without_the_helper_tiktoken_needs_the_network(tmp_path):
    """The control: with an empty cache and no network, tiktoken alone cannot load GPT-2."""
    run = offline(USE, tmp_path)
    assert run.returncode != 0 and "ok" not in run.stdout


def test_after_install_gpt2_and_r50k_base_load_offline(tmp_path):
    run = offline("import tiktoken_offline\nfolder = tiktoken_offline.install()\n" + USE, tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
    assert len(list((tmp_path / "tmp" / "data-gym-cache").iterdir())) == 3  # tiktoken's own default folder


def test_a_cache_folder_that_cannot_be_written_falls_back_to_a_private_one(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = offline("import os, tiktoken_offline\nfolder = tiktoken_offline.install()\n"
                  "assert os.environ['TIKTOKEN_CACHE_DIR'] == folder != os.environ['DATA_GYM_CACHE_DIR']\n" + USE,
                  tmp_path, DATA_GYM_CACHE_DIR=str(blocker / "cache"))
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_a_wrong_file_in_the_cache_is_replaced(tmp_path):
    cache = tmp_path / "cache"
    run = offline("import tiktoken_offline\ntiktoken_offline.install()\n", tmp_path, TIKTOKEN_CACHE_DIR=str(cache))
    assert run.returncode == 0, run.stderr
    for path in cache.iterdir():
        path.write_bytes(b"not the file")
    run = offline("import tiktoken_offline\ntiktoken_offline.install()\n" + USE, tmp_path, TIKTOKEN_CACHE_DIR=str(cache))
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


@pytest.mark.parametrize("name", ["conftest.py", "tiktoken_offline.py"])
def test_students_get_the_helper_with_their_stubs(name):
    a = course.get("ch04_gpt")
    assert (a.stubs / name).read_text() == (a.solutions / name).read_text()
