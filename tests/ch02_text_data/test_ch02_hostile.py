"""Hostile chapter-2 submissions gain nothing: reading the reference or the course's copy of The
Verdict, rewriting that text or tiktoken's cache, reaching the network for tiktoken.

Each attack starts from the blank stubs and is *gated*: it runs the reference's code only if
the attack worked, so an attack that succeeds shows up as undeserved points instead of
passing unnoticed. Attacks that could hurt others (rewriting the text the reference reads)
start from the reference: the student keeps their 100, the course's files stay byte for byte
what they were, and the next submission is graded as before.
"""
import hashlib
import os
import socket
import threading
from pathlib import Path

import pytest

from banks import describe, edited_sources, reference_sources, stub_sources

from autograder.grading import course
from autograder.paths import ROOT

TESTS = Path(__file__).resolve().parents[1]

A = "ch02_text_data"
PROTECTED = [course.get(A).solutions / "the-verdict.txt", course.get(A).stubs / "the-verdict.txt",
             course.get(A).solutions / "simple_tokenizer.py"]


def _gated(module, attack):
    """The blank module plus an attack that runs the reference module's code only if it worked."""
    reference = reference_sources(A)[f"{module}.py"]
    return {f"{module}.py": stub_sources(A)[f"{module}.py"] + "\n\nPWNED = False\n" + attack.strip("\n")
            + f"\n\nif PWNED:\n    exec({reference!r}, globals())\n"}


def _edited(module, code):
    """The reference module with ``code`` run first, at import."""
    return {f"{module}.py": code.strip("\n") + "\n" + reference_sources(A)[f"{module}.py"]}


@pytest.fixture(scope="module")
def listener():
    """A TCP port on this machine that records who connects (nobody should)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen, stop = [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            seen.append(conn.recv(100))
            conn.close()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join()
    server.close()


def cases(port):
    repo, cache = str(ROOT), os.environ.get("TIKTOKEN_CACHE_DIR", "/tmp/data-gym-cache")
    return {
        "reads the reference's simple_tokenizer.py from the repository": (0, _gated("simple_tokenizer", f"""
import os
for _path in ({repo!r} + "/solutions/ch02_text_data/simple_tokenizer.py", "/proc/1/root" + {repo!r}):
    try:
        open(_path).read()
        PWNED = True
    except OSError:
        pass
""")),
        "reads the course's copy of The Verdict and the hidden suites": (0, _gated("data_sampling", f"""
for _path in ({repo!r} + "/solutions/ch02_text_data/the-verdict.txt",
              {repo!r} + "/assignments/ch02_text_data/the-verdict.txt",
              {repo!r} + "/autograder/suites/ch02_text_data/_text_data.py"):
    try:
        PWNED = PWNED or len(open(_path).read()) > 0
    except OSError:
        pass
""")),
        "rewrites The Verdict that the reference reads": (100, _edited("simple_tokenizer", f"""
for _path in ({repo!r} + "/solutions/ch02_text_data/the-verdict.txt",
              {repo!r} + "/assignments/ch02_text_data/the-verdict.txt"):
    try:
        with open(_path, "w") as _f:
            _f.write("I HAD always thought the grader could be fooled.")
    except OSError:
        pass
""")),
        "rewrites tiktoken's cache": (100, _edited("bpe", f"""
import os
for _folder in ({cache!r}, "/tmp/data-gym-cache"):
    try:
        for _name in os.listdir(_folder):
            with open(os.path.join(_folder, _name), "w") as _f:
                _f.write("garbage")
    except OSError:
        pass
""")),
        "opens a socket to fetch tiktoken's files": (0, _gated("bpe", f"""
import socket
import urllib.request
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=1).sendall(b"tiktoken")
    PWNED = True
except OSError:
    pass
try:
    urllib.request.urlopen("https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe", timeout=2)
    PWNED = True
except Exception:
    pass
""")),
        "asks tiktoken for an encoding the machine does not have (a download)": (94, {"bpe.py": reference_sources(A)[
            "bpe.py"].replace('tokenizer = tiktoken.get_encoding("gpt2")\n    return tokenizer.encode(',
                              'tokenizer = tiktoken.get_encoding("cl100k_base")\n    return tokenizer.encode(')}),
    }


def _digests():
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in PROTECTED}


# Attacks that would damage this machine's files if they worked: run only where the child has
# its own root (a full sandbox), never where a mistake in the sandbox would cost other users.
DESTRUCTIVE = ("rewrites The Verdict that the reference reads", "rewrites tiktoken's cache")


def _honest(grader, tmp_path):
    folder = tmp_path / "honest" / A
    folder.mkdir(parents=True, exist_ok=True)
    for filename, text in reference_sources(A).items():
        (folder / filename).write_text(text)
    return grader.grade(folder, A)


@pytest.fixture(scope="module")
def course_files(grader, tmp_path_factory):
    """(the course files' digests before any case ran, whether children run in namespaces)."""
    before = _digests()
    sandboxed = _honest(grader, tmp_path_factory.mktemp("honest"))["extra_data"]["isolation"] == "namespaces"
    return before, sandboxed


@pytest.mark.parametrize("name", list(cases(0)))
def test_hostile_chapter_2_submission_gains_nothing(grader, listener, course_files, tmp_path, name):
    port, seen = listener
    before, sandboxed = course_files
    score, files = cases(port)[name]
    if name in DESTRUCTIVE and not sandboxed:
        pytest.skip("rewrites the course's files: run only where children are shut in namespaces")
    folder = tmp_path / A
    folder.mkdir(parents=True)
    base = reference_sources(A) if score else stub_sources(A)
    for filename, text in {**base, **files}.items():
        (folder / filename).write_text(text)
    result = grader.grade(folder, A)
    failed = [f"{t['name']}: {t['output']}" for t in result["tests"] if t["status"] != "passed"]
    assert result["score"] == score, f"{name}: {result['score']} points, expected {score}: {failed}"
    assert all(t["output"].strip() and "internal grader error" not in t["output"]
               for t in result["tests"] if t["status"] != "passed"), name
    assert _digests() == before, f"{name}: a course file changed"
    assert not seen, f"a submission reached the grader's machine: {seen}"


def test_after_the_hostile_submissions_an_honest_one_is_graded_as_before(grader, course_files, tmp_path):
    assert _honest(grader, tmp_path)["score"] == 100
    assert _digests() == course_files[0]


# No credit from the student's own answers (issue 35): each submission below skips the work of
# one check and makes the child agree with itself instead. The grader used to accept that
# agreement; it now credits only answers it computed itself, on inputs and weights it chose.
LOADER = ("    tokenizer = tiktoken.get_encoding(\"gpt2\")\n    dataset = GPTDatasetV1(txt, tokenizer, max_length, "
          "stride)\n    return DataLoader(")
FIRST_BATCH = "    dataloader = create_dataloader_v1("
EMBEDDINGS_FORWARD = "        token_embeddings = self.token_embedding_layer(inputs)\n"
FORGED = {
    # exercise 2.2 without the work: first_batch returns two zero tensors, and the student's own
    # create_dataloader_v1 (which loses its points in data_sampling, while the rest of that part
    # earns its own) serves the same zeros: "right with the student's own loader" was credited.
    "first_batch equal to a loader of the student's that serves garbage": (
        "exercises: exercise 2.2", [
            ("data_sampling.py", LOADER, "    zero = torch.zeros(1, 1, dtype=torch.long)\n    return [[zero, zero]]\n"
                                         "    return DataLoader("),
            ("exercises.py", FIRST_BATCH, "    import torch\n    zero = torch.zeros(1, 1, dtype=torch.long)\n"
                                          "    return zero, zero\n" + FIRST_BATCH)]),
    # InputEmbeddings without the work: zero tables and a forward that returns zeros. The check
    # judged the output against the student's own tables ("how they were drawn is not this
    # check's business"), so 0 == 0 + 0 was full marks.
    "InputEmbeddings of zero tables that returns zeros": (
        "embeddings: InputEmbeddings", [
            ("embeddings.py", EMBEDDINGS_FORWARD, "        return torch.zeros(*inputs.shape, self.token_embedding_layer"
                                                  ".weight.shape[1])\n" + EMBEDDINGS_FORWARD),
            ("embeddings.py", "        self.pos_embedding_layer = nn.Embedding(context_length, output_dim)\n",
             "        self.pos_embedding_layer = nn.Embedding(context_length, output_dim)\n"
             "        nn.init.zeros_(self.token_embedding_layer.weight)\n"
             "        nn.init.zeros_(self.pos_embedding_layer.weight)\n")]),
}




@pytest.mark.parametrize("name", list(FORGED))
def test_a_check_earns_nothing_from_the_childs_agreement_with_itself(grader, tmp_path, name):
    check, edits = FORGED[name]
    folder = tmp_path / A
    folder.mkdir(parents=True)
    for filename, text in edited_sources(A, edits).items():
        (folder / filename).write_text(text)
    result = grader.grade(folder, A)
    forged = [t for t in result["tests"] if t["name"].startswith(check)]
    assert len(forged) == 1 and forged[0]["score"] == 0, describe(result)
    assert "internal grader error" not in forged[0]["output"], describe(result)
