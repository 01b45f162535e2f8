"""A warm process that has imported torch and nothing of the grader's secrets.

The grader starts it as a fresh interpreter (so it cannot inherit the reference, the
suites or any result) and asks it, over a Unix socket, to fork one sandboxed child
per submission. A fork costs milliseconds; a fresh interpreter plus ``import torch``
costs about 1.5 s.

Control messages are one JSON object each; a spawn request carries the child's end of
its channel as an SCM_RIGHTS file descriptor.
"""
import json
import os
import socket
import sys
import tempfile
import time


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
    root = tempfile.mkdtemp(prefix="autograder-root-")  # each child mounts its own tmpfs here
    try:
        _serve(socket.socket(fileno=ctl_fd), root, hidden, mode)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the grader is gone; so are we
    finally:
        os.rmdir(root)


def _serve(ctl, root, hidden, mode):
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
                    sandbox.start_child(channel_fd, root, hidden, mode)
                os.close(channel_fd)
                _reply(ctl, {"pid": pid})
            elif request["op"] == "reap":
                _reply(ctl, {"code": _reap(request["pid"], request.get("wait", 2.0))})


if __name__ == "__main__":
    main(int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3])
