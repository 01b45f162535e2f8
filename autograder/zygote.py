"""A warm process that has imported torch and nothing of the grader's secrets.

The grader starts it as a fresh interpreter (so it cannot inherit the reference, the
suites or any result) and asks it, over a Unix socket, to fork one sandboxed child
per submission. A fork costs milliseconds; a fresh interpreter plus ``import torch``
costs about 1.5 s.

Control messages are one JSON object each; a spawn request carries the child's end of
its channel as an SCM_RIGHTS file descriptor. ``Zygote`` is the grader's handle (it imports
no torch, so the zygote's start can overlap the grader's own); ``main`` runs inside.
"""
import functools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

# The only variables the zygote (and so every child) inherits. A child can read its own
# environment and put it in an error message the student sees, so the grader's tokens and
# keys (CI secrets, cloud credentials) must never reach it.
# tiktoken's cache folders are paths, not secrets: the zygote loads the GPT-2 encoding from there.
ZYGOTE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME",
              "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")
# What the zygote's Python must hold, at the grader's versions, when it is not the grader's own.
CHILD_NEEDS = ("torch", "safetensors", "numpy")


@functools.lru_cache(maxsize=None)
def children_python(isolation):
    """The zygote's Python: this one, unless children run as nobody without a private root and
    nobody cannot reach it; then one it can (see interpreter), or this one and a WARNING (once)
    that says why. ``sandbox.check`` asks it too, so its dry run is the zygote's."""
    from . import interpreter, sandbox

    if os.geteuid() != 0 or interpreter.first_blocked(interpreter.own_paths()) is None:
        return sys.executable
    if isolation == "full" and sandbox.probe_namespaces():
        return sys.executable  # each child's private root binds it where nobody reaches it
    python, why = interpreter.python_for_others(CHILD_NEEDS)
    if python is None:
        print(f"WARNING: {why}", file=sys.stderr)
        return sys.executable
    return python


def _not_dumpable():
    """Where a child runs as the grader's own uid (no user namespace, no PID namespace), only
    this keeps it out of the grader's /proc/PID/mem and environ: the kernel then lets no
    process of the same uid read them."""
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE, 0


class Zygote:
    """A fresh interpreter that imports torch once and forks sandboxed children on request."""

    def __init__(self, hidden=(), isolation="full"):
        from .paths import COURSE, ROOT  # here, not at the top: the zygote process itself must not hold it
        _not_dumpable()
        self.root = ROOT
        self.hidden = sorted({os.path.realpath(p) for p in (ROOT, COURSE, *hidden)})
        self.isolation = isolation
        self.python = children_python(isolation)
        self._launch()

    def _launch(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from autograder.zygote import main; "
                "main(int(sys.argv[2]), __import__('json').loads(sys.argv[3]), sys.argv[4])")
        env = {k: v for k, v in os.environ.items() if k in ZYGOTE_ENV}
        # One hash seed for every child: a set's order (and so sorted()'s ties, a wrong answer's
        # feedback) is the same each time a submission is graded.
        env["PYTHONHASHSEED"] = "0"
        self.process = subprocess.Popen(
            [self.python, "-P", "-c", code, str(self.root), str(theirs.fileno()), json.dumps(self.hidden),
             self.isolation], pass_fds=[theirs.fileno()], cwd="/", stdin=subprocess.DEVNULL, env=env)
        theirs.close()
        self.ctl = ours
        self.replies = ours.makefile("rb")
        self.ready = False

    def _ask(self, message, fds=()):
        if not self.ready:
            line = self.replies.readline()
            if not line:
                raise RuntimeError("the grader's zygote process failed to start")
            self.ready = True
        socket.send_fds(self.ctl, [json.dumps(message).encode() + b"\n"], list(fds))
        line = self.replies.readline()
        if not line:
            raise RuntimeError("the grader's zygote process died")
        return json.loads(line)

    def spawn(self):
        """A new sandboxed child; returns (pid, channel socket)."""
        if self.process.poll() is not None:
            # Only a child without namespaces can kill the zygote (same uid, no PID namespace);
            # a fresh one keeps the rest of the class gradable.
            self.close()
            self._launch()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = self._ask({"op": "spawn"}, [theirs.fileno()])["pid"]
        finally:
            theirs.close()
        return pid, ours

    def reap(self, pid, wait=2.0):
        try:
            return self._ask({"op": "reap", "pid": pid, "wait": wait})["code"]
        except (RuntimeError, OSError):
            return None  # the zygote died with its child; spawn() starts a new one

    def close(self):
        self.ctl.close()
        self.replies.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- inside the zygote process ------------------------------------------------------

def _reply(ctl, message):
    ctl.sendall(json.dumps(message).encode() + b"\n")


def _reap(pid, wait_seconds):
    """Collect a finished child's exit code (keeper codes mirror the worker's)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return 128 + os.WTERMSIG(status)
            return os.WEXITSTATUS(status)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.005)


def main(ctl_fd, hidden, mode):
    _not_dumpable()
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch
    import torch.nn  # noqa: F401  (everything a child needs is imported before any fork)
    from . import child, sandbox  # noqa: F401

    torch.set_num_threads(1)  # one thread: no OpenMP pool is alive at fork time, and determinism
    # Round-trip a frame once so that every module the channel imports lazily (safetensors
    # pulls in numpy.ctypeslib) is loaded here: a child may be unable to read them from disk,
    # and each child would otherwise pay for the import again.
    from . import protocol
    frame = protocol.encode({"warm": [torch.zeros(2), torch.zeros(2, dtype=torch.float64)]})
    json_len, _ = protocol.PREFIX.unpack(frame[:protocol.PREFIX.size])
    protocol.decode(frame[protocol.PREFIX.size:][:json_len], frame[protocol.PREFIX.size + json_len:])
    _warm_tiktoken()
    root = tempfile.mkdtemp(prefix="autograder-root-")  # each child mounts its own tmpfs here
    refused = sandbox.probe_user_namespace() if mode == "full" and os.geteuid() != 0 else None
    try:
        _serve(socket.socket(fileno=ctl_fd), root, hidden, mode, refused)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the grader is gone; so are we
    finally:
        os.rmdir(root)


def _warm_tiktoken():
    """Load tiktoken's GPT-2 encoding here, once, where this machine has it: a child's root
    holds only the Python installation (not tiktoken's cache), and building the encoding costs
    each child ~0.6 s. Offline only: every connection is refused meanwhile, so a machine
    without the encoding loads nothing (and its children fail to load it the same way)."""
    try:
        import tiktoken
    except ImportError:
        return

    def refuse(*args, **kwargs):
        raise OSError("the grader never downloads")

    saved = socket.socket.connect, socket.getaddrinfo, socket.create_connection
    socket.socket.connect = socket.getaddrinfo = socket.create_connection = refuse
    try:
        from .tiktoken_offline import install
        install()
        tiktoken.get_encoding("gpt2")
    except Exception:  # not on this machine: nothing to warm
        pass
    finally:
        socket.socket.connect, socket.getaddrinfo, socket.create_connection = saved


def _serve(ctl, root, hidden, mode, userns_refused):
    from . import sandbox

    _reply(ctl, {"ready": True, "pid": os.getpid()})
    buffer = b""
    while True:
        data, fds, _flags, _addr = socket.recv_fds(ctl, 65536, 4)
        if not data:
            return
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            request = json.loads(line)
            if request["op"] == "spawn":
                channel_fd = fds.pop(0)
                pid = os.fork()
                if pid == 0:
                    ctl.close()
                    sandbox.start_child(channel_fd, root, hidden, mode, userns_refused)
                os.close(channel_fd)
                _reply(ctl, {"pid": pid})
            elif request["op"] == "reap":
                _reply(ctl, {"code": _reap(request["pid"], request.get("wait", 2.0))})


if __name__ == "__main__":
    main(int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3])
