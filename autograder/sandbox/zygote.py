"""A warm process that has imported torch and nothing of the grader's secrets.

The grader starts it as a fresh interpreter (so it cannot inherit the reference, the
suites or any result) and asks it, over a Unix socket, to fork one sandboxed child
per submission. A fork costs milliseconds; a fresh interpreter plus ``import torch``
costs about 1.5 s. The CLI instead forks it from itself right after ``import torch``,
before it has loaded anything secret (``Zygote(fork=True)``): torch is then imported once
for both, and the zygote drops what it inherited that is not its own (the grader's
environment, its other modules and files).

Control messages are one JSON object each; a spawn request carries the child's end of
its channel as an SCM_RIGHTS file descriptor. ``Zygote`` is the grader's handle (it imports
no torch, so the zygote's start can overlap the grader's own); ``main`` runs inside.
"""
import gc
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import types

from .isolate import children_python
from .startup import ENVIRON_FD, ZYGOTE_ENV, import_torch, restore_environment

# The grader's modules a zygote (and so every child) keeps; a zygote forked from the grader
# drops the others it inherited (autograder.paths, for one, names the reference's folder).
ZYGOTE_MODULES = ("autograder", "autograder.sandbox", "autograder.sandbox.zygote", "autograder.sandbox.isolate",
                  "autograder.sandbox.child", "autograder.sandbox.protocol", "autograder.sandbox.cputime",
                  "autograder.sandbox.interpreter",  # isolate asks interpreter in each child
                  "autograder.sandbox.startup",
                  "autograder.support", "autograder.support.tiktoken_offline", "autograder.support.gpt2_offline")


def _clean(root, course):
    """Whether this process may be forked into a zygote: started clean (clean_start), its
    environment not yet restored, and no module of the reference or the suites loaded."""
    if ENVIRON_FD not in os.environ or sys.flags.hash_randomization:
        return False
    secret = tuple(os.path.realpath(p) + os.sep for top in {root, course}
                   for p in (top / "solutions", top / "autograder" / "suites"))
    return not any(isinstance(getattr(m, "__file__", None), str) and os.path.realpath(m.__file__).startswith(secret)
                   for m in list(sys.modules.values()))


def _not_dumpable():
    """Where a child runs as the grader's own uid (no user namespace, no PID namespace), only
    this keeps it out of the grader's /proc/PID/mem and environ: the kernel then lets no
    process of the same uid read them."""
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE, 0


class Zygote:
    """A process that has imported torch (a fresh interpreter, or a fork of this one) and forks
    sandboxed children on request."""

    def __init__(self, hidden=(), isolation="full", fork=False, warm=None):
        """``fork``: fork the zygote from this process instead of starting an interpreter. Only
        for a process that has loaded nothing secret yet (no reference, suite or result, and
        no other student's files): the zygote starts as a copy of its memory. ``warm``: which
        of WARM_UPS to prepare for the children (None: all), those the graded assignments' checks
        use (course.warm_ups): each costs a one-submission run its time, see WARM_UPS."""
        from ..paths import COURSE, ROOT  # here, not at the top: the zygote process itself must not hold it
        _not_dumpable()
        self.root = ROOT
        self.hidden = sorted({os.path.realpath(p) for p in (ROOT, COURSE, *hidden)})
        self.isolation = isolation
        warm = WARM_UPS if warm is None else warm
        unknown = set(warm) - set(WARM_UPS)
        if unknown:
            raise ValueError(f"unknown warm-up(s) {', '.join(sorted(unknown))}: the zygote knows {', '.join(WARM_UPS)}")
        self.warm = sorted(warm)
        self.python = children_python(isolation)
        self.spare = self.pending = None  # a child started ahead: (pid, channel); its channel until then
        # A fork runs this Python: only where it is the one children_python chose for them.
        if fork and self.python == sys.executable and _clean(ROOT, COURSE):
            self._fork()
        else:
            self._launch()
            # the grader's own, as before a fork: its reference answers train with the same optimizer,
            # and here that import (torch._dynamo, ~1 s) runs beside the zygote's, not after it
            _warm_up(self.warm)
        restore_environment()  # a later zygote of this process is a fresh interpreter

    def _launch(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from autograder.sandbox.zygote import main; "
                "main(int(sys.argv[2]), __import__('json').loads(sys.argv[3]), sys.argv[4], __import__('json').loads(sys.argv[5]))")
        env = {k: v for k, v in os.environ.items() if k in ZYGOTE_ENV}
        # One hash seed for every child: a set's order (and so sorted()'s ties, a wrong answer's
        # feedback) is the same each time a submission is graded.
        env["PYTHONHASHSEED"] = "0"
        self.process = subprocess.Popen(
            [self.python, "-P", "-c", code, str(self.root), str(theirs.fileno()), json.dumps(self.hidden),
             self.isolation, json.dumps(self.warm)],
            pass_fds=[theirs.fileno()], cwd="/", stdin=subprocess.DEVNULL, env=env)
        theirs.close()
        self.ctl = ours
        self.replies = ours.makefile("rb")
        self.ready = False

    def _fork(self):
        _warm_up(self.warm)  # before the fork: imported (and tiktoken's public data read) once, for both
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # the zygote: it never returns into the grader's code
            code = 1
            try:
                ours.close()
                _forget_the_grader(theirs.fileno())
                main(theirs.detach(), self.hidden, self.isolation, self.warm)
                code = 0
            finally:
                os._exit(code)
        theirs.close()
        self.process = _Forked(pid)
        self.ctl = ours
        self.replies = ours.makefile("rb")
        self.ready = False

    def inventory(self, find=b""):
        """What the zygote holds (see ``inventory`` below): for the tests that prove it holds
        nothing of the grader's. ``find``: bytes to look for in all its writable memory (sent
        disguised, so that the request itself does not put them there)."""
        return self._ask({"op": "inventory", "find": find.translate(_ROT1).hex()})

    def _ask(self, message, fds=()):
        self._settle()
        socket.send_fds(self.ctl, [json.dumps(message).encode() + b"\n"], list(fds))
        return self._answer()

    def _answer(self):
        if not self.ready:
            line = self.replies.readline()
            if not line:
                raise RuntimeError("the grader's zygote process failed to start")
            self.ready = True
        line = self.replies.readline()
        if not line:
            raise RuntimeError("the grader's zygote process died")
        return json.loads(line)

    def prepare(self) -> None:
        """Start the next child now, so that it sets up its isolation while the grader works;
        spawn() hands it out. No student code runs in it before then. Returns at once: the
        zygote's answer is read when the child is needed (a zygote still starting keeps nobody waiting)."""
        if self.spare is not None or self.pending is not None or self.process.poll() is not None:
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(self.ctl, [json.dumps({"op": "spawn"}).encode() + b"\n"], [theirs.fileno()])
            self.pending = ours
        except OSError:
            ours.close()  # spawn() tries again, and says why
        finally:
            theirs.close()

    def _settle(self):
        """The answer to prepare()'s request, before any other."""
        if self.pending is not None:
            ours, self.pending = self.pending, None
            try:
                self.spare = self._answer()["pid"], ours
            except (RuntimeError, OSError, ValueError, KeyError):
                ours.close()

    def spawn(self, memory=None):
        """A new sandboxed child (the prepared one, if any); returns (pid, channel socket).

        ``memory``: the bytes its address space may grow by beyond what it maps when it starts,
        instead of ``isolate.Limits.memory_bytes`` (RLIMIT_AS, set before it serves: the kernel
        holds it to that whatever runs there later); always a child started for it, the prepared
        one kept for the next spawn."""
        if self.process.poll() is not None:
            # Only a child without namespaces can kill the zygote (same uid, no PID namespace);
            # a fresh one keeps the rest of the class gradable.
            self.close()
            self._launch()
        self._settle()
        if self.spare is not None and memory is None:
            child, self.spare = self.spare, None
            return child
        return self._spawn(memory)

    def _spawn(self, memory=None):
        if memory is not None and not (type(memory) is int and memory > 0):
            raise ValueError(f"memory must be a positive number of bytes, not {memory!r}")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            request = {"op": "spawn"} if memory is None else {"op": "spawn", "memory": memory}
            pid = self._ask(request, [theirs.fileno()])["pid"]
        finally:
            theirs.close()
        return pid, ours

    def reap(self, pid, wait=2.0):
        try:
            return self._ask({"op": "reap", "pid": pid, "wait": wait})["code"]
        except (RuntimeError, OSError):
            return None  # the zygote died with its child; spawn() starts a new one

    def close(self) -> None:
        self._settle()
        if self.spare is not None:  # prepared for nothing
            (pid, sock), self.spare = self.spare, None
            sock.close()
            for kill in (os.killpg, os.kill):  # the zygote collects it as it ends (_collect_last)
                try:
                    kill(pid, 9)
                except OSError:
                    pass
        self.ctl.close()
        self.replies.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _Forked:
    """What Zygote uses of Popen, for a zygote forked from this process."""

    def __init__(self, pid):
        self.pid, self.returncode = pid, None

    def poll(self):
        if self.returncode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"zygote {self.pid}", timeout)
            time.sleep(0.005)
        return self.returncode

    def kill(self) -> None:
        try:
            os.kill(self.pid, 9)
        except ProcessLookupError:
            pass


# -- inside the zygote process ------------------------------------------------------

def _warm_up(warm):
    """Import what a child needs and round-trip a frame once, so that every module the
    channel imports lazily (safetensors pulls in numpy.ctypeslib) is loaded: a child may be
    unable to read them from disk, and each child would otherwise pay for the import again.
    Then the warm-ups ``warm`` names (WARM_UPS), and no other."""
    torch = import_torch()  # everything a child needs is imported before any fork
    from . import child, isolate, protocol  # noqa: F401

    torch.set_num_threads(1)  # one thread: no OpenMP pool is alive at fork time, and determinism
    _exercise_torch(torch)
    for name in warm:
        WARM_UPS[name](torch)
    frame = protocol.encode({"warm": [torch.zeros(2), torch.zeros(2, dtype=torch.float64)]})
    json_len, _ = protocol.PREFIX.unpack(frame[:protocol.PREFIX.size])
    protocol.decode(frame[protocol.PREFIX.size:][:json_len], frame[protocol.PREFIX.size + json_len:])


def _exercise_torch(torch):
    """Run once the operators attention code uses (a layer, a Dropout, a masked softmax, a backward
    pass): their first call sets up dispatch tables and kernels, which every child inherits
    instead of paying for again. The random generator is left as it was."""
    state = torch.get_rng_state()
    x = torch.randn(2, 3, 4, requires_grad=True)
    layer = torch.nn.Linear(4, 4)
    scores = layer(x) @ x.transpose(1, 2) / 2.0
    future = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
    weights = torch.nn.Dropout(0.5)(torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1))
    out = torch.cat([weights @ x, torch.tril(torch.ones(2, 3, 3)) @ x], dim=-1).contiguous().view(2, 3, 8)
    (out * torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(0))).sum().backward()
    with torch.no_grad():
        torch.allclose(out, out, equal_nan=True), torch.isfinite(out).all(), (out - out).abs().max()
    torch.set_rng_state(state)


def _warm_optimizer(torch):
    """An optimizer's first construction imports torch._dynamo (about 2 s and 800 modules): built
    once here, for an assignment whose children build optimizers for the student's code."""
    layer = torch.nn.Linear(2, 2)
    layer(torch.ones(2)).sum().backward()
    optimizer = torch.optim.AdamW(layer.parameters(), lr=1e-3)
    optimizer.step()
    optimizer.zero_grad()


def _warm_tiktoken(torch):
    """Load tiktoken's GPT-2 encoding here, once, where this machine has it: a child's root
    holds only the Python installation (not tiktoken's cache), and building the encoding costs
    each child ~0.6 s. A machine without it loads nothing (and its children fail to load it
    the same way, offline)."""
    from ..support.gpt2_offline import gpt2_offline
    try:
        gpt2_offline()
    except Exception:  # not on this machine: nothing to warm
        pass


# What a manifest's ``warm`` may name (plus "tiktoken", which its support module implies): each
# prepares, before any fork, what the children would otherwise each pay for.
WARM_UPS = {"optimizer": _warm_optimizer, "tiktoken": _warm_tiktoken}


_FORKED = False  # this zygote was forked from the grader (not launched)


def _forget_the_grader(ctl_fd):
    """In a zygote just forked from the grader: keep nothing of the grader's that a child
    could find in its own memory. The grader's other modules go, emptied (what only they
    held is freed); its files close; its environment shrinks to ZYGOTE_ENV, the values it
    drops overwritten and the block /proc/self/environ reads zeroed."""
    global _FORKED
    _FORKED = True
    for name in [n for n in sys.modules if n.startswith("autograder.") and n not in ZYGOTE_MODULES]:
        module = sys.modules.pop(name)
        parent, _, leaf = name.rpartition(".")  # its package's attribute goes too
        if getattr(sys.modules.get(parent), leaf, None) is module:
            delattr(sys.modules[parent], leaf)
        vars(module).clear()  # the zygote never returns into the grader's code that used it
    # What is left is never collected: collecting it would cost ~0.1 s, and a finalizer run
    # later could close a descriptor whose number is reused by then.
    gc.freeze()
    os.closerange(3, ctl_fd)
    os.closerange(ctl_fd + 1, 1 << 16)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.chdir("/")
    _scrub_environment()


def _scrub_environment():
    import ctypes

    kept = {k: os.environ[k] for k in ZYGOTE_ENV if k in os.environ}
    offset = bytes.__basicsize__ - 1  # where a bytes object's characters start
    for key, value in list(os.environb.items()):
        # Overwritten in place (1-byte values are shared singletons: nothing to hide there).
        if key.decode(errors="replace") not in kept and len(value) > 1:
            ctypes.memset(id(value) + offset, 0, len(value))
    os.environ.clear()
    libc = ctypes.CDLL(None)
    libc.clearenv()
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end (fields 50, 51)
    except (OSError, IndexError, ValueError):
        start = end = 0
    if 0 < start < end:
        ctypes.memset(start, 0, end - start)
    os.environ.update(kept)
    os.environ["PYTHONHASHSEED"] = "0"  # as a launched zygote's (its value is this process's seed)


_ROT1 = bytes((b + 1) % 256 for b in range(256))  # a disguise that is not its own inverse


def _in_memory(disguised):
    """Whether the bytes disguised as ``disguised`` (each byte + 1) are anywhere in this process's
    writable memory; the disguise is applied to what is read, never undone."""
    if not disguised:
        return False
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps.read().splitlines():
            fields = line.split()
            if fields[1][:2] != "rw":
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            try:
                mem.seek(start)
                if disguised in mem.read(end - start).translate(_ROT1):
                    return True
            except (OSError, ValueError, OverflowError):
                continue
    return False


def inventory(find="") -> dict:
    """What this process holds that could be the grader's: every module (name: file), the
    source files of every function and code object, how many dicts look like a result, the
    environment's names (os.environ and /proc/self/environ), whether it was forked from the
    grader, whether the bytes ``find`` names (hex, disguised) are in its memory, and whether
    its hash seed is random (0: every child's is 0)."""
    files = set()
    results = 0
    gc.unfreeze()  # get_objects() leaves out what gc.freeze() set aside
    everything = gc.get_objects()
    gc.freeze()
    for obj in everything:
        if type(obj) is types.FunctionType:
            files.add(obj.__code__.co_filename)
        elif type(obj) is types.CodeType:
            files.add(obj.co_filename)
        elif type(obj) is dict and "score" in obj and "tests" in obj:
            results += 1
    with open("/proc/self/environ", "rb") as handle:
        block = handle.read()
    return {"modules": {name: str(getattr(m, "__file__", None) or "") for name, m in list(sys.modules.items())},
            "code_files": sorted(files), "results": results, "environ": sorted(os.environ),
            "proc_environ": sorted(e.split(b"=")[0].decode(errors="replace") for e in block.split(b"\0") if e),
            "forked": _FORKED, "found": _in_memory(bytes.fromhex(find)),
            "hash_randomization": sys.flags.hash_randomization}


def _reply(ctl, message):
    ctl.sendall(json.dumps(message).encode() + b"\n")


_FINISHED = {}  # pid -> exit code of a child collected before the grader asked for it
_APART = None   # isolate.Apart: what keeps the children apart, and ends what each left


def _code(status, pid):
    """A collected child's exit code; its memory cgroup (isolate._memory_cgroup) goes with it, and
    everything it left behind (``isolate.Apart.ended``). A process this zygote adopted: its code."""
    from .isolate import release_cgroup
    if pid in _APART.children:
        release_cgroup(pid)
        _APART.ended(pid)
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _collect_finished():
    """Collect every child that has ended, keeping its code for a later reap: a child the
    grader stopped without waiting (StudentSession.close) leaves no zombie."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        _FINISHED[pid] = _code(status, pid)
        if len(_FINISHED) > 4096:
            del _FINISHED[next(iter(_FINISHED))]


def _collect_last(seconds=2.0):
    """The grader is gone: wait for the children it stopped (no zombie outlives the run; what they
    left is ended as each is collected, and by ``Apart.close``)."""
    deadline = time.monotonic() + seconds
    while _APART.children and time.monotonic() < deadline:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid:
                _code(status, pid)
            else:
                time.sleep(0.005)
        except ChildProcessError:
            return


def _reap(pid, wait_seconds):
    """Collect a finished child's exit code (keeper codes mirror the worker's)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        if pid in _FINISHED:
            return _FINISHED.pop(pid)
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not ours, or asked for twice
            return None
        if done:
            return _code(status, pid)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.005)


def main(ctl_fd, hidden, mode, warm) -> None:
    _not_dumpable()
    os.environ["OMP_NUM_THREADS"] = "1"
    _warm_up(warm)
    from . import isolate

    gc.freeze()  # children share these pages: their collections need not touch them
    root = tempfile.mkdtemp(prefix="autograder-root-")  # each child mounts its own tmpfs here
    refused = isolate.probe_user_namespace() if mode == "full" and os.geteuid() != 0 else None
    global _APART
    _APART = isolate.Apart(mode)
    try:
        _serve(socket.socket(fileno=ctl_fd), root, hidden, mode, refused)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the grader is gone; so are we
    finally:
        os.rmdir(root)
        _APART.close()


def _limits(request):
    """The limits a spawn request asks for: ``isolate.Limits``, with its ``memory`` (bytes of address
    space beyond what the child maps when it starts) where it names one."""
    from . import isolate

    if request.get("memory") is None:
        return isolate.Limits
    return type("Limits", (isolate.Limits,), {"memory_bytes": int(request["memory"])})


def _serve(ctl, root, hidden, mode, userns_refused):
    from . import isolate

    _reply(ctl, {"ready": True, "pid": os.getpid()})
    buffer = b""
    while True:
        data, fds, _flags, _addr = socket.recv_fds(ctl, 65536, 4)
        if not data:
            _collect_last()
            return
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            request = json.loads(line)
            _collect_finished()
            if request["op"] == "spawn":
                channel_fd = fds.pop(0)
                place = _APART.claim()
                pid = os.fork()
                if pid == 0:
                    ctl.close()
                    isolate.start_child(channel_fd, root, hidden, mode, userns_refused, _limits(request), place)
                _APART.started(pid, place)
                os.close(channel_fd)
                _FINISHED.pop(pid, None)  # an earlier child's, whose pid this one got
                _reply(ctl, {"pid": pid})
            elif request["op"] == "reap":
                _reply(ctl, {"code": _reap(request["pid"], request.get("wait", 2.0))})
            elif request["op"] == "inventory":
                _reply(ctl, inventory(request.get("find", "")))


if __name__ == "__main__":
    main(int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]))
