"""Isolation for one submission's child process, with what Linux gives without Docker.

Layout after ``start_child``::

    zygote ── fork ──▶ keeper (new session; creates the namespaces; waits)
                          └── fork ──▶ worker (PID 1 of a new PID namespace; serves probes)

The worker gets: new mount, PID, network, IPC and UTS namespaces (plus a user
namespace when the grader is not root); a fresh tmpfs root holding only read-only
binds of the Python installation and system libraries, so the repository
(solutions, suites, other submissions, results) does not exist for it; no network
but a downed loopback; uid ``nobody`` (or no capabilities in a user namespace) and
no_new_privs; and rlimits on memory, CPU time, processes, open files and file size.
When namespaces cannot be created (a laptop or a container that forbids them) the
child still gets the rlimits, no_new_privs and, when the grader is root, uid nobody
(if nobody can read the Python installation); the report says loudly that isolation
was reduced. The grader's environment never reaches a child (see session.ZYGOTE_ENV).
"""
import ctypes
import os
import platform
import resource
import signal
import stat
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SYSCALLS = {"x86_64": {"pivot_root": 155, "capset": 126}, "aarch64": {"pivot_root": 41, "capset": 91}}
NOBODY = 65534

FULL = "namespaces"          # what the report calls full isolation
REDUCED = "limits only"      # prefix of the report's warning


class Limits:
    """Per-child resource limits (the grader's wall-clock limit is enforced by the grader)."""

    # Per process, and a fork storm multiplies it: 8 processes of 1.5 GiB stay well inside
    # a 24 GiB machine. An honest submission peaks far below (the GPT-2-size module is ~40 MB).
    memory_bytes = 3 << 29       # address space on top of what the warm process already maps
    cpu_seconds = 120
    processes = 8
    open_files = 256
    file_bytes = 16 << 20


_libc = ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), data and data.encode()), f"mount {target}")


def _syscall(name, *args):
    number = SYSCALLS.get(platform.machine(), {}).get(name)
    if number is None:
        raise OSError(f"no {name} syscall number for {platform.machine()}")
    _check(_libc.syscall(number, *args), name)


def _write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def _readonly_dirs(hidden):
    """Directories the worker may read: Python's own paths and the system libraries, minus
    any that contain a hidden path (the repository)."""
    candidates = {"/usr", "/lib", "/lib64", "/etc/ld.so.cache", sys.prefix, sys.base_prefix}
    candidates.update(p for p in sys.path if p and os.path.isdir(p))
    keep = []
    for path in sorted(os.path.realpath(p) for p in candidates if os.path.exists(p)):
        blocked = any(h == path or h.startswith(path.rstrip("/") + "/") or path.startswith(h + "/")
                      for h in hidden)
        if not blocked and path != "/" and not any(path.startswith(k + "/") for k in keep):
            keep.append(path)
    return keep


def _new_root(root, hidden):
    """Mount a tmpfs at ``root`` (an empty directory the zygote made), bind the read-only
    directories into it, pivot into it and drop the old root."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=755")
    for path in _readonly_dirs([*hidden, root]):
        target = root + path
        if os.path.isdir(path):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "w").close()
        _mount(path, target, None, MS_BIND | MS_REC)
        _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.makedirs(root + "/dev", exist_ok=True)
    for device in ("null", "zero", "urandom"):
        open(f"{root}/dev/{device}", "w").close()
        _mount(f"/dev/{device}", f"{root}/dev/{device}", None, MS_BIND)
    os.makedirs(root + "/tmp", mode=0o1777, exist_ok=True)
    os.chmod(root + "/tmp", 0o1777)
    os.makedirs(root + "/proc", exist_ok=True)
    os.makedirs(root + "/oldroot", exist_ok=True)
    os.chdir(root)
    _syscall("pivot_root", b".", b"oldroot")
    os.chdir("/")
    _check(_libc.umount2(b"/oldroot", MNT_DETACH), "umount old root")
    os.rmdir("/oldroot")
    try:  # a /proc that shows only this PID namespace; nothing needs it, so failure is fine
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        pass


def _drop_privileges(in_user_namespace, keep_uid=False):
    if in_user_namespace:
        # One uid is mapped, so there is nobody to become: clear every capability instead.
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        _syscall("capset", header, data)
    elif os.geteuid() == 0 and not keep_uid:
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)  # leaving uid 0 clears every capability
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # Die with the parent (the keeper, or the zygote without namespaces). This must come
    # *after* the uid change: the kernel clears the parent-death signal whenever the
    # credentials change, and a worker that calls setsid() would then escape the grader's
    # killpg and outlive its keeper (found by the hostile bank: an orphaned busy loop).
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")


def _others_can_read(path):
    """Whether a user with no rights of its own can reach and read ``path``."""
    path = os.path.realpath(path)
    parts = [path] + [os.path.dirname(path)]
    while parts[-1] != "/":
        parts.append(os.path.dirname(parts[-1]))
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in parts) and bool(os.stat(path).st_mode & stat.S_IROTH)


def _own_process_count(uid):
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                count += 1
        except OSError:
            pass
    return count


def apply_limits(limits, headroom):
    """rlimits for the worker. RLIMIT_NPROC counts the real uid's processes system-wide (in
    every namespace), so ``headroom`` is what that uid already runs elsewhere."""
    with open("/proc/self/status") as status:
        mapped = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))
    for name, value in ((resource.RLIMIT_AS, mapped + limits.memory_bytes),
                        (resource.RLIMIT_CPU, limits.cpu_seconds),
                        (resource.RLIMIT_NPROC, limits.processes + headroom),
                        (resource.RLIMIT_NOFILE, limits.open_files),
                        (resource.RLIMIT_FSIZE, limits.file_bytes),
                        (resource.RLIMIT_CORE, 0)):
        # Under a tighter limit set from outside (a 768 MB CI container) keep that one:
        # an unprivileged worker cannot raise it, and must not fail trying.
        hard = resource.getrlimit(name)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(name, (value, value))


def _quiet_stdio():
    """Whatever the submission prints goes nowhere: it can neither flood nor spoof the grader."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _exit_code(status):
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def start_child(channel_fd, root, hidden, mode, limits=Limits):
    """In a freshly forked zygote child: isolate, then serve on ``channel_fd``. Never returns."""
    from . import child  # already imported by the zygote; nothing is read from disk here
    import socket

    code = 1
    try:
        os.setsid()
        _quiet_stdio()
        os.closerange(3, channel_fd)
        os.closerange(channel_fd + 1, 1 << 16)
        isolation = f"{REDUCED}: isolation was turned off for this run"
        is_root = os.geteuid() == 0
        # Counted on the host's /proc, before a new PID namespace hides the other processes.
        headroom = _own_process_count(NOBODY if is_root else os.getuid())
        if mode == "full":
            uid, gid = os.getuid(), os.getgid()
            flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
            try:
                _check(_libc.unshare(flags | (0 if is_root else CLONE_NEWUSER)), "unshare")
            except OSError as exc:
                isolation = f"{REDUCED}: namespaces unavailable ({exc.strerror})"
            else:
                if not is_root:
                    _write("/proc/self/setgroups", "deny")
                    _write("/proc/self/uid_map", f"0 {uid} 1")
                    _write("/proc/self/gid_map", f"0 {gid} 1")
                pid = os.fork()
                if pid:  # the keeper: outlives nothing, reports the worker's end as its own
                    os.close(channel_fd)
                    os._exit(_exit_code(os.waitpid(pid, 0)[1]))
                # PID 1 of the new namespace: when it dies (with the keeper, see
                # _drop_privileges), the kernel kills everything it started.
                _new_root(root, hidden)
                _drop_privileges(in_user_namespace=not is_root)
                isolation = FULL
        if isolation != FULL:
            # No namespaces: at least do not run student code as root (it could signal or
            # trace the grader, or read anything), unless nobody could not even read Python.
            os.chdir("/")
            stay_root = is_root and not _others_can_read(sys.prefix)
            if stay_root:
                isolation += f"; running as root, since uid nobody cannot read {sys.prefix}"
            _drop_privileges(in_user_namespace=False, keep_uid=stay_root)
        apply_limits(limits, headroom)
        hello = {"isolation": isolation, "uid": os.getuid(), "pid": os.getpid()}
        child.serve(socket.socket(fileno=channel_fd), hello)
        code = 0
    except BaseException:
        code = 1

    finally:
        os._exit(code)
