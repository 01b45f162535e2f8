"""The sandbox's parts on their own: the seccomp filter, the report of what held, a child
that cannot start, and the channel's deadline on writes."""
import os
import socket
import time

import pytest
import torch

from autograder.sandbox import isolate, protocol
from autograder.sandbox.session import GraderError, Refused, StudentSession


def _in_a_child(body):
    """Run ``body()`` in a forked child and return the text it gives back."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            try:
                text = body()
            except BaseException as exc:
                text = repr(exc)
            os.write(write, text.encode())
        finally:
            os._exit(0)
    os.close(write)
    text = os.read(read, 4096).decode()
    os.close(read)
    os.waitpid(pid, 0)
    return text


def test_the_seccomp_filter_refuses_what_a_shared_uid_would_allow():
    def body():
        import ctypes
        import errno
        import signal
        import threading
        libc = ctypes.CDLL(None, use_errno=True)
        os.setsid()                      # as the worker does: its group is its own
        isolate._no_new_privs()
        isolate._seccomp()
        outcomes = []
        for name, call in (("shmget", lambda: libc.shmget(0, ctypes.c_size_t(1 << 20), 0o1600)),
                           ("msgget", lambda: libc.msgget(0, 0o1600)),
                           ("keyctl", lambda: libc.syscall(isolate.ARCH["x86_64"]["keyctl"], 0, -3, 0)),
                           ("ptrace", lambda: libc.ptrace(16, os.getppid(), None, None)),
                           ("kill parent", lambda: libc.kill(os.getppid(), 0)),
                           ("kill all", lambda: libc.kill(-1, 0))):
            result = call()
            if result >= 0 and name in ("shmget", "msgget"):   # the filter failed: do not leave it behind
                (libc.shmctl if name == "shmget" else libc.msgctl)(result, 0, None)
            outcomes.append(f"{name}={'EPERM' if result == -1 and ctypes.get_errno() == errno.EPERM else result}")
        os.kill(os.getpid(), 0)          # its own pid and group stay allowed
        os.killpg(os.getpgid(0), 0)
        signal.pthread_kill(threading.get_ident(), 0)   # tgkill to itself
        outcomes.append("self=ok")
        return " ".join(outcomes)

    if os.uname().machine != "x86_64":
        pytest.skip("the test names x86_64 syscall numbers")
    assert _in_a_child(body) == ("shmget=EPERM msgget=EPERM keyctl=EPERM ptrace=EPERM kill parent=EPERM "
                                 "kill all=EPERM self=ok")


def test_the_seccomp_filter_refuses_memory_no_limit_counts_and_new_namespaces():
    """memfd pages and a tmpfs mounted in a user namespace of the child's own escape RLIMIT_AS:
    memfd_create, unshare, setns, clone with a CLONE_NEW* flag and every mount call are refused,
    while fork and threads (clone3 falls back to clone) still work."""
    def body():
        import ctypes
        import errno
        import signal
        import threading
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        isolate._no_new_privs()
        isolate._seccomp()
        numbers = isolate.ARCH["x86_64"]["deny"]
        outcomes = []
        for name, call in (
                ("memfd_create", lambda: libc.syscall(numbers["memfd_create"], b"held", 0)),
                ("unshare", lambda: libc.unshare(isolate.CLONE_NEWUSER | isolate.CLONE_NEWNS)),
                ("setns", lambda: libc.syscall(numbers["setns"], os.open("/proc/self/ns/net", os.O_RDONLY), 0)),
                ("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
                ("fsopen", lambda: libc.syscall(numbers["fsopen"], b"tmpfs", 0)),
                ("clone", lambda: libc.syscall(isolate.ARCH["x86_64"]["clone"],
                                               isolate.CLONE_NEWUSER | signal.SIGCHLD, 0, 0, 0, 0))):
            result = call()
            if result == 0 and name == "clone":   # the filter failed: this is the new process
                os._exit(0)
            outcomes.append(f"{name}={'EPERM' if result == -1 and ctypes.get_errno() == errno.EPERM else result}")
        pid = os.fork()                  # an ordinary fork and thread still work
        if pid == 0:
            os._exit(7)
        outcomes.append(f"fork={os.WEXITSTATUS(os.waitpid(pid, 0)[1])}")
        ran = []
        thread = threading.Thread(target=lambda: ran.append(torch.ones(64, 64) @ torch.ones(64, 64)))
        thread.start()
        thread.join()
        outcomes.append(f"thread={int(ran[0][0, 0])}")
        return " ".join(outcomes)

    if os.uname().machine != "x86_64":
        pytest.skip("the test names x86_64 syscall numbers")
    assert _in_a_child(body) == ("memfd_create=EPERM unshare=EPERM setns=EPERM mount=EPERM fsopen=EPERM "
                                 "clone=EPERM fork=7 thread=64")


def test_the_seccomp_filter_refuses_sockets_io_uring_perf_events_and_userfaultfd():
    """Bytes queued in a socket count against no limit (a child held 1.5 GiB in socket pairs): the
    child makes no socket of any family and answers on the one it inherits; io_uring,
    perf_event_open and userfaultfd are refused as Docker refuses them. The notebook's kernel
    (``sockets=``) keeps its sockets (ZMQ, asyncio's socket pair) but not the rest. The numbers
    are typed here, not read from isolate.ARCH, so a wrong entry there fails."""
    def body(sockets):
        def run():
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            inherited, peer = socket.socketpair()
            isolate._no_new_privs()
            isolate._seccomp(sockets=sockets)
            outcomes = []
            for name, call in (
                    ("socketpair", lambda: socket.socketpair()),
                    ("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
                    ("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
                    ("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)),
                    ("io_uring_setup", lambda: libc.syscall(425, 8, ctypes.create_string_buffer(120))),
                    ("io_uring_enter", lambda: libc.syscall(426, -1, 0, 0, 0, None, 0)),
                    ("io_uring_register", lambda: libc.syscall(427, -1, 0, None, 0)),
                    ("perf_event_open", lambda: libc.syscall(298, ctypes.create_string_buffer(128), 0, -1, -1, 0)),
                    ("userfaultfd", lambda: libc.syscall(323, os.O_CLOEXEC | 1))):
                try:
                    result = call()
                except OSError as exc:
                    result = "EPERM" if exc.errno == errno.EPERM else exc.errno
                else:
                    if isinstance(result, int):
                        result = "EPERM" if result == -1 and ctypes.get_errno() == errno.EPERM else "other"
                    else:
                        result = "ok"
                outcomes.append(f"{name}={result}")
            inherited.sendall(b"still")          # the channel the child inherits still works
            outcomes.append(f"channel={peer.recv(5).decode()}")
            return " ".join(outcomes)
        return run

    import errno
    if os.uname().machine != "x86_64":
        pytest.skip("the test names x86_64 syscall numbers")
    refused = ("io_uring_setup=EPERM io_uring_enter=EPERM io_uring_register=EPERM perf_event_open=EPERM "
               "userfaultfd=EPERM channel=still")
    assert _in_a_child(body(())) == "socketpair=EPERM unix=EPERM udp=EPERM netlink=EPERM " + refused
    assert _in_a_child(body(("socket", "socketpair"))) == "socketpair=ok unix=ok udp=ok netlink=ok " + refused
    # A misspelt name is an error, not a filter that refuses something else (in a child: were the
    # check gone, the filter would be installed on this process).
    assert _in_a_child(lambda: isolate._seccomp(sockets=("sockets",)) or "installed").startswith("ValueError(")


def test_the_memory_cgroup_steps_on_a_stand_in_hierarchy(tmp_path, monkeypatch):
    """The steps of ``_memory_cgroup`` where no writable cgroup2 memory controller is at hand
    (this project's own test machine has none): a folder stands in for the child's cgroup, the
    kernel's part (a new cgroup lists the controllers its parent hands on) done by the test."""
    home = tmp_path / "grader.scope"
    home.mkdir()
    (home / "cgroup.controllers").write_text("cpu memory pids\n")
    (home / "cgroup.subtree_control").write_text("")
    real_mkdir = os.mkdir

    def kernel_mkdir(path, mode=0o777):
        real_mkdir(path, mode)
        handed = (home / "cgroup.subtree_control").read_text().replace("+", "").split()
        with open(os.path.join(path, "cgroup.controllers"), "w") as handle:
            handle.write(" ".join(handed))
    monkeypatch.setattr(isolate, "_cgroup_bases", lambda: [str(home)])
    monkeypatch.setattr(isolate.os, "mkdir", kernel_mkdir)
    protections = isolate.Protections()
    assert protections.attempt("memory cgroup", isolate._memory_cgroup, isolate.Limits, 4242, 41)
    group = home / isolate.cgroup_name(4242, 41)
    assert (home / "cgroup.subtree_control").read_text() == "+memory"        # handed on to the child's cgroup
    assert [(group / f).read_text() for f in ("memory.max", "memory.swap.max", "cgroup.procs")] == \
        [str(isolate.Limits.charged_bytes), "0", "0"]                         # "0": the process that writes joins
    (home / "cgroup.controllers").write_text("cpu pids\n")                  # memory is cgroup v1's here
    refused = isolate.Protections()
    assert not refused.attempt("memory cgroup", isolate._memory_cgroup, isolate.Limits, 4343, 41)
    assert "no memory controller" in refused.unavailable["memory cgroup"]
    assert refused.summary() == isolate.FULL and not (home / isolate.cgroup_name(4343, 41)).exists()


def _cgroup2_memory():
    """Why a memory cgroup cannot be had here, or None where it can: root needs the memory
    controller at the top of the cgroup2 hierarchy; another user, a subtree of its own that
    hands the controller on."""
    try:
        base = isolate._cgroup_bases()[-1]
        wanted = "cgroup.controllers" if os.geteuid() == 0 else "cgroup.subtree_control"
        with open(os.path.join(base, wanted)) as handle:
            return None if "memory" in handle.read().split() and os.access(base, os.W_OK) else "no memory controller"
    except OSError as exc:
        return str(exc)


def _cgroups_of(pid):
    """The memory cgroups of the zygote's child ``pid`` (named by the zygote's pid and its own)."""
    import glob
    return [g for b in isolate._cgroup_bases() for g in glob.glob(os.path.join(b, isolate.cgroup_name(pid, "*")))]


def test_a_child_is_charged_in_a_memory_cgroup_or_says_why_not(grader):
    """Where a cgroup v2 hierarchy can be written, the child and all it starts are charged in a
    cgroup of their own (memory.max, no swap: tmpfs and shared memory count); where not, the
    hello says why, and the isolation is not called reduced for it alone."""
    pid, sock = grader.zygote.spawn()
    hello = protocol.recv(sock, time.monotonic() + 30)["hello"]
    try:
        if "memory cgroup" in hello["held"]:
            (group,) = _cgroups_of(pid)
            with open(os.path.join(group, "memory.max")) as handle:
                assert int(handle.read()) == isolate.Limits.charged_bytes
            with open(os.path.join(group, "cgroup.procs")) as handle:
                assert str(pid) in handle.read().split() or hello["pid"] != pid   # the keeper, or the worker
        else:
            assert hello["unavailable"]["memory cgroup"], "the reason is given"
            assert "memory cgroup" not in hello["isolation"]
            if _cgroup2_memory() is None:
                pytest.fail(f"a memory cgroup could be had here: {hello['unavailable']['memory cgroup']}")
    finally:
        sock.close()
        grader.zygote.reap(pid)
    if _cgroup2_memory() is None:   # removed with its child
        assert _cgroups_of(pid) == []


def test_the_summary_names_each_missing_protection_once_with_its_reason():
    protections = isolate.Protections()
    protections.attempt("limits", lambda: None)
    for name in ("user namespace", "mount namespace", "PID namespace"):
        protections.attempt(name, lambda: isolate._check(-1, "unshare"))
    protections.unavailable["private root"] = "needs a mount namespace"
    protections.unavailable["/proc"] = "no PID namespace: the child has none"   # optional: not a reduction
    assert protections.held == ["limits"]
    assert protections.summary().startswith("limits only: user, mount, PID namespace unavailable (unshare: ")
    assert protections.summary().endswith("; private root unavailable (needs a mount namespace)")
    full = isolate.Protections()
    full.held, full.unavailable = ["user namespace", "limits"], {"/proc": "refused"}
    assert full.summary() == isolate.FULL


class _OneChild:
    """A zygote whose child sends ``hello`` and exits."""

    def __init__(self, hello):
        self.hello = hello

    def spawn(self):
        ours, theirs = socket.socketpair()
        protocol.send(theirs, {"hello": self.hello})
        theirs.close()
        return os.getpid(), ours

    def reap(self, pid, wait=2.0):
        return 1


def test_a_child_that_cannot_start_says_which_step_failed(monkeypatch):
    monkeypatch.setattr(os, "killpg", lambda *a: None)
    monkeypatch.setattr(os, "kill", lambda *a: None)
    session = StudentSession(_OneChild({"failed": "private root: umount old root: Operation not permitted"}),
                             {"simple_attention": ""})
    with pytest.raises(GraderError, match="did not start: private root: umount old root: Operation not permitted"):
        session.plan([{"let": "v", "call": "simple_attention.dot_product_loop"}])


def test_a_reader_that_stops_reading_cannot_stall_a_send():
    ours, theirs = socket.socketpair()
    started = time.monotonic()
    with pytest.raises(protocol.ChannelTimeout):
        protocol.send(ours, {"blob": torch.zeros(4 << 20)}, time.monotonic() + 0.5)   # 16 MB: far over the socket buffer
    assert time.monotonic() - started < 5
    assert ours.gettimeout() is None   # the socket is blocking again for the next frame
    ours.close()
    theirs.close()


def test_untrusted_code_runs_only_apart_from_the_graders_uid():
    assert isolate.separated(other_user=True, user_namespace=False, private_root=False)       # root -> nobody
    assert isolate.separated(other_user=False, user_namespace=True, private_root=True)        # an ordinary user
    assert not isolate.separated(other_user=False, user_namespace=False, private_root=False)  # namespaces refused
    assert not isolate.separated(other_user=False, user_namespace=True, private_root=False)  # sees our files


class _SameUidChild(_OneChild):
    """A zygote whose child says it runs with the grader's uid, and records what it is sent."""

    spawned = 0

    def spawn(self):
        ours, self.theirs = socket.socketpair()
        protocol.send(self.theirs, {"hello": self.hello})
        if self.hello.get("answer load"):
            protocol.send(self.theirs, {"ok": True})
        self.spawned += 1
        return os.getpid(), ours


def test_a_child_with_the_graders_uid_gets_no_code(monkeypatch):
    monkeypatch.setattr(os, "killpg", lambda *a: None)
    monkeypatch.setattr(os, "kill", lambda *a: None)
    hello = {"isolation": "limits only: user namespace unavailable (unshare: Operation not permitted)",
             "held": ["seccomp"], "unavailable": {}, "separated": False}
    zygote = _SameUidChild(hello)
    session = StudentSession(zygote, {"simple_attention": "import os"})
    with pytest.raises(Refused, match=r"refusing to run the submissions' code: it would run as your own user(.|\n)*"
                                      r"do one of:\n- "):
        session.plan([{"let": "v", "call": "simple_attention.dot_product_loop"}])
    zygote.theirs.settimeout(0.5)
    assert zygote.theirs.recv(1 << 16) == b""        # hung up without sending the sources
    with pytest.raises(Refused):
        session.plan([{"let": "v", "call": "simple_attention.softmax_naive"}])
    assert zygote.spawned == 1                        # said once; no child is started again
    trusted = StudentSession(_SameUidChild({**hello, "answer load": True}), {"simple_attention": "import os"},
                             unsafe_same_uid=True)
    trusted._start()                                  # by consent: served
    assert protocol.recv(trusted.zygote.theirs, time.monotonic() + 5)["op"] == "load"


def test_the_check_before_grading_says_what_a_child_gets(grader):
    pid, sock = grader.zygote.spawn()
    hello = protocol.recv(sock, time.monotonic() + 30)["hello"]
    sock.close()
    grader.zygote.reap(pid)
    checked = isolate.check("full")
    assert (checked["isolation"], checked["separated"], checked["held"]) == \
        (hello["isolation"], hello["separated"], [p for p in hello["held"] if p != "limits"])   # not tried


def _gpt2_small_frames(grader, monkeypatch, edit=lambda source: source):
    """GPT-2 small's MultiHeadAttention asked of the solution (changed by ``edit``) as exercise 3.3
    asks it, with the weights the book's code draws after seed 140: (the output, the output with
    the weights sent as before, the sizes of the frames sent for the first)."""
    from autograder.grading.compare import seeded
    from autograder.grading.probes import module
    from autograder.paths import SOLUTIONS
    from autograder.sandbox.submission import read_sources
    sources, _ = read_sources(SOLUTIONS / "ch03_attention")
    book = StudentSession(grader.zygote, dict(sources))
    args = ("multihead_attention", "MultiHeadAttention", 768, 768, 1024, 0.0, 12)
    try:
        params = module(book, *args, init_seed=140, want_state=True)["state"]
    finally:
        book.close()
    params = {k: v for k, v in params.items() if k != "mask"}
    x = seeded(1, 4, 768, seed=141)
    sources["multihead_attention"] = edit(sources["multihead_attention"])
    sizes, send = [], protocol.send
    monkeypatch.setattr(protocol, "send", lambda sock, message, *a: (sizes.append(len(protocol.encode(message))),
                                                                     send(sock, message, *a))[1])
    session = StudentSession(grader.zygote, sources)
    try:
        got = module(session, *args, inputs=[x], params=params, params_seed=140)["outputs"][0]
        frames = sizes[1:]   # the first frame loads the sources
        sent = module(session, *args, inputs=[x], params=params)["outputs"][0]
    finally:
        session.close()
    return got, sent, frames


def test_large_parameters_are_drawn_in_the_child_where_it_draws_the_references(grader, monkeypatch):
    got, sent, sizes = _gpt2_small_frames(grader, monkeypatch)
    assert torch.equal(got, sent)
    assert len(sizes) == 1 and sizes[0] < 64 << 10    # digests only: not the 9 MB of weights

    # Layers created in another order draw other values: the weights are sent, the answer is the same.
    order = "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
    swapped = "".join(reversed(order.splitlines(keepends=True)))
    swap = lambda source: source.replace(order, swapped)
    got, sent, sizes = _gpt2_small_frames(grader, monkeypatch, swap)
    assert torch.equal(got, sent)
    assert len(sizes) == 2 and sizes[0] < 64 << 10 and sizes[1] > 9 << 20

    # A child that claims the book's draw runs its own weights, and its answer shows it: the
    # grader never takes the child's word for the values.
    lie = lambda source: swap(source) + "\nimport autograder.sandbox.child as _c\n_c._drew = lambda *a: True\n"
    got, sent, sizes = _gpt2_small_frames(grader, monkeypatch, lie)
    assert len(sizes) == 1 and not torch.allclose(got, sent)


APART = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
from autograder.sandbox.session import StudentSession
from autograder.sandbox.zygote import Zygote

MODULE = """
import ctypes, os, tempfile, time
def leave(token):
    if os.fork() == 0:   # double-forked into a session of its own
        os.setsid()
        if os.fork() == 0:
            ctypes.CDLL(None).prctl(15, token.encode(), 0, 0, 0)
            time.sleep(60)
        os._exit(0)
    os.wait()
def where(other):
    try:
        os.listdir(other)
        entered = True
    except OSError as exc:
        entered = type(exc).__name__
    tmp = os.environ["TMPDIR"]
    return {"uid": os.getuid(), "tmp": tmp, "cwd": os.getcwd(), "tempfile": tempfile.gettempdir(),
            "owner": os.stat(tmp).st_uid, "mode": os.stat(tmp).st_mode & 0o777, "entered": entered}
"""


def named(token):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as handle:
                found += [pid] if handle.read().startswith(token) else []
        except OSError:
            pass
    return found


token = sys.argv[2]
zygote = Zygote(isolation="full")
first, second = (StudentSession(zygote, {"m": MODULE}) for _ in range(2))
plan = [{"let": "l", "call": "m.leave", "args": [token]}, {"let": "w", "call": "m.where", "args": ["/"], "return": True}]
a = first.plan(plan).values["w"]
b = second.plan([{"let": "w", "call": "m.where", "args": [a["tmp"]], "return": True}]).values["w"]
report = {"a": a, "b": b, "left running": bool(named(token)), "isolation": first.isolation}
first.close()
report.update({"after close": named(token), "a's folder after": os.path.exists(a["tmp"])})
second.close()
zygote.close()
print(json.dumps(report))
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="a uid of its own is root's to give")
def test_without_namespaces_children_get_a_uid_and_a_folder_and_leave_nothing_running(tmp_path):
    """Root where namespaces are refused (Docker's seccomp profile): two children live at once,
    each as a uid of its own with a temporary folder only it may enter (its cwd, TMPDIR and
    tempfile's), and a process the first double-forked into a session of its own is gone as
    soon as its session is closed, with its folder."""
    import json
    import secrets
    import subprocess

    from nobody import python_nobody_runs
    from autograder.paths import ROOT

    python = python_nobody_runs(isolate.CHILD_NEEDS, "children as other users without namespaces")
    token = "k" + secrets.token_hex(5)
    run = subprocess.run([python, "tests/no_userns.py", "--all", python, "-c", APART, str(ROOT), token],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)
    a, b = report["a"], report["b"]
    assert report["isolation"].startswith(isolate.REDUCED), report
    first = isolate.DEFAULT_UID_BASE
    assert a["uid"] != b["uid"] and {a["uid"], b["uid"]} <= set(range(first, first + isolate.UID_COUNT)), report
    for child in (a, b):
        assert child["tmp"] == child["cwd"] == child["tempfile"] and child["owner"] == child["uid"], report
        assert child["mode"] == 0o700, report
    assert a["tmp"] != b["tmp"] and b["entered"] == "PermissionError", report   # while the first still ran
    assert report["left running"], "the first child's process did not start"
    assert report["after close"] == [] and not report["a's folder after"], report
