"""Isolation for one submission's child process, with what Linux gives without Docker.

Layout after ``start_child``::

    zygote ── fork ──▶ keeper (new session; creates the namespaces; waits)
                          └── fork ──▶ worker (PID 1 of a new PID namespace; serves probes)

Each protection is attempted on its own and kept if it works, so an ordinary user, a
container that refuses user namespaces or a hardened distribution still grades with whatever
holds: a user namespace (when the grader is not root); new mount, PID, network, IPC and UTS
namespaces; a fresh tmpfs root holding only read-only binds of the Python installation and
system libraries (the repository, other submissions and results do not exist there) with a
/proc of its own; no SysV shared memory, message queues or semaphores (limits of nothing in
the new IPC namespace, and refused by seccomp); a fresh session keyring, and the keyring
calls refused; uid ``nobody`` (or no capabilities in a user namespace; or, as root where no
private root holds, a uid of its own, see ``Apart``) and no_new_privs; a
seccomp filter that also refuses ptrace, signals to processes other than the worker's own,
new sockets, io_uring, perf events and userfaultfd; and rlimits on memory, CPU time,
processes, open files and file size. Where children share the machine's folders and
processes (no private root), each has a temporary folder of its own, and once it has ended
nothing it started runs (``Apart``: the zygote is their subreaper). The hello message lists
what held and what was unavailable, with the reason. A step that fails after the point of no return (a user
namespace without a uid map, a pivoted root whose old root cannot be dropped) stops the
child and names the step: it never runs half set up. The grader's environment never reaches
a child (see startup.ZYGOTE_ENV).

One rule decides whether untrusted code may run at all (``separated``): never with the
grader's own uid, unless namespaces hide everything of the grader from it. The hello says
whether it holds; ``check`` finds it out before any submission runs, and ``refusal`` says
how to get it on this machine.
"""
import ctypes
import errno
import fcntl
import os
import platform
import pwd
import resource
import shutil
import signal
import stat
import struct
import functools
import sys
import tempfile
import time

from . import cputime, interpreter

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
CLONE_NEWCGROUP = 0x02000000
# Every namespace clone() can make (CLONE_NEWTIME shares its bit with the exit signal there).
NEW_NAMESPACES = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 1, 4, 22, 38
KEYCTL_JOIN_SESSION_KEYRING = 1
NOBODY = 65534
# Syscall numbers and the seccomp audit architecture, per machine.
ARCH = {
    "x86_64": {"audit": 0xC000003E, "pivot_root": 155, "capset": 126, "keyctl": 250,
               "deny": {"shmget": 29, "shmat": 30, "semget": 64, "msgget": 68, "ptrace": 101,
                        "add_key": 248, "request_key": 249, "keyctl": 250, "process_vm_readv": 310,
                        "process_vm_writev": 311, "tkill": 200, "pidfd_send_signal": 424, "pidfd_getfd": 438,
                        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
                        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
                        "fspick": 433, "mount_setattr": 442, "memfd_create": 319, "memfd_secret": 447,
                        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
                        "perf_event_open": 298, "userfaultfd": 323},
               "sockets": {"socket": 41, "socketpair": 53},
               "own_pid_only": {"kill": 62, "tgkill": 234}, "clone": 56, "clone3": 435},
    "aarch64": {"audit": 0xC00000B7, "pivot_root": 41, "capset": 91, "keyctl": 219,
                "deny": {"shmget": 194, "shmat": 196, "semget": 190, "msgget": 186, "ptrace": 117,
                         "add_key": 217, "request_key": 218, "keyctl": 219, "process_vm_readv": 270,
                         "process_vm_writev": 271, "tkill": 130, "pidfd_send_signal": 424, "pidfd_getfd": 438,
                         "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
                         "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
                         "fspick": 433, "mount_setattr": 442, "memfd_create": 279, "memfd_secret": 447,
                         "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
                         "perf_event_open": 241, "userfaultfd": 282},
                "sockets": {"socket": 198, "socketpair": 199},
                "own_pid_only": {"kill": 129, "tgkill": 131}, "clone": 220, "clone3": 435},
}

FULL = "namespaces"          # what the report calls full isolation
REDUCED = "limits only"      # what it calls a run where no namespace held
# Protections whose absence does not make a run "reduced": /proc is a convenience inside the
# private root (without it the child sees no processes at all), and the SysV limits are
# belt and braces to seccomp's refusal of the same calls. The memory cgroup counts what
# RLIMIT_AS does not (tmpfs and shared memory, the whole process tree together); without it
# seccomp still refuses memfd and new namespaces, and a private root's tmpfs is capped, so its
# absence is reported (each result's protections, the class report, a WARNING) but the
# isolation stays what the namespaces make it.
OPTIONAL = {"/proc", "no SysV IPC", "memory cgroup"}


class Limits:
    """Per-child resource limits (the grader's wall-clock limit is enforced by the grader)."""

    # Per process, and a fork storm multiplies it: 8 processes of 1.5 GiB stay well inside
    # a 24 GiB machine. An honest submission peaks far below (the GPT-2-size module is ~40 MB).
    memory_bytes = 3 << 29       # address space on top of what the warm process already maps
    cpu_seconds = 120
    processes = 8
    open_files = 256
    file_bytes = 16 << 20
    # The memory cgroup's memory.max: every process of the child together, with its tmpfs
    # files and shared memory (what RLIMIT_AS cannot see); swap none.
    charged_bytes = 2 << 30


class SetupFailed(Exception):
    """A step that cannot be undone failed: the child must not serve (the text names the step)."""


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), data and data.encode()), f"mount {target}")


def _arch():
    arch = ARCH.get(platform.machine())
    if arch is None:
        raise OSError(0, f"not supported on {platform.machine()}")
    return arch


def _syscall(name, *args):
    _check(_libc.syscall(ctypes.c_long(_arch()[name]), *args), name)


def _write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def separated(other_user, user_namespace, private_root):
    """Whether a child is kept from everything the grader trusts by more than limits: it runs as
    another user (nobody, who owns nothing of the grader's), or in a user namespace of its own
    behind a private root (nothing of the grader's exists there). Otherwise it runs with the
    grader's own uid and can rewrite the reference, the suites, the grader and the results:
    such a child must not run untrusted code (the session refuses to send it any, the CLI
    refuses to start, see ``refusal``)."""
    return other_user or (user_namespace and private_root)


class Protections:
    """What held and what was unavailable (with the reason), in the order attempted."""

    def __init__(self):
        self.held, self.unavailable = [], {}
        self.separated = False

    def attempt(self, name, step, *args) -> bool:
        """Run ``step``; an OSError means the protection is unavailable, and nothing else changes."""
        try:
            step(*args)
        except OSError as exc:
            self.unavailable[name] = exc.strerror or str(exc)
            return False
        self.held.append(name)
        return True

    def summary(self):
        """FULL, or what was missing and why, one reason once: "limits only: user, mount, ...
        namespace unavailable (unshare: Operation not permitted); private root unavailable (...)"."""
        by_reason = {}
        for name, why in self.unavailable.items():
            if name not in OPTIONAL:
                by_reason.setdefault(why, []).append(name)
        if not by_reason:
            return FULL
        prefix = "reduced" if any(name.endswith("namespace") for name in self.held) else REDUCED
        return f"{prefix}: " + "; ".join(f"{', '.join(n.removesuffix(' namespace') for n in names[:-1])}"
                                         f"{', ' if len(names) > 1 else ''}{names[-1]} unavailable ({why})"
                                         for why, names in by_reason.items())


CGROUP_PREFIX = "autograder-"


def cgroup_name(pid, parent) -> str:
    """A child's memory cgroup: named by its zygote and its own pid (a pid freed when one zygote
    reaps its child may be another zygote's next child before the first removes the cgroup)."""
    return f"{CGROUP_PREFIX}{parent}-{pid}"


def _cgroup_bases():
    """Where a child's cgroup may go in the cgroup v2 hierarchy: under this process's own cgroup
    (its "0::" line; a subtree delegated to this user), then, for root, at the top of the
    hierarchy (a cgroup that holds processes, as a login's or a service's does, cannot hand its
    controllers on; the top can). OSError where there is no cgroup2 hierarchy."""
    with open("/proc/self/mounts") as mounts:
        mount = next((line.split()[1] for line in mounts if line.split()[2:3] == ["cgroup2"]), None)
    with open("/proc/self/cgroup") as groups:
        own = next((line[3:].strip() for line in groups if line.startswith("0::")), None)
    if mount is None or own is None:
        raise OSError(0, "no cgroup v2 hierarchy")
    home = os.path.join(mount, own.strip("/")).rstrip("/")
    return [home] + ([mount] if os.geteuid() == 0 and mount != home else [])


def _memory_cgroup(limits, pid=None, parent=None):
    """Move this process into a cgroup of its own, with memory.max and no swap: what the child
    and everything it starts hold is counted there, tmpfs pages and shared memory included.
    Needs a cgroup2 hierarchy this process may write (root, or a subtree delegated to this user)
    whose memory controller reaches the new cgroup; the first base that has one is used."""
    name = cgroup_name(pid or os.getpid(), parent or os.getppid())
    why = None
    for base in _cgroup_bases():
        try:
            return _join_memory_cgroup(base, os.path.join(base, name), limits)
        except OSError as exc:
            why = why or exc   # the first reason: the own cgroup's is the one to fix
    raise why


def _join_memory_cgroup(base, group, limits):
    with open(os.path.join(base, "cgroup.controllers")) as handle:
        if "memory" not in handle.read().split():
            raise OSError(0, f"the cgroup v2 hierarchy has no memory controller at {base}")
    _remove_cgroup(group)  # left by an earlier child of that pid (this zygote's: it is gone)
    os.mkdir(group, 0o755)
    try:
        with open(os.path.join(group, "cgroup.controllers")) as handle:
            if "memory" not in handle.read().split():
                try:
                    _write(os.path.join(base, "cgroup.subtree_control"), "+memory")
                except OSError as exc:  # a cgroup that holds processes cannot hand its controllers on
                    raise OSError(exc.errno, f"no memory controller for a cgroup under {base} "
                                             f"({exc.strerror})") from None
        _write(os.path.join(group, "memory.max"), str(limits.charged_bytes))
        try:
            _write(os.path.join(group, "memory.swap.max"), "0")
        except FileNotFoundError:  # swap is not accounted on this kernel: there is none to limit
            pass
        _write(os.path.join(group, "cgroup.procs"), "0")  # "0": the process that writes
    except OSError:
        _remove_cgroup(group)
        raise


def release_cgroup(pid) -> None:
    """Remove the memory cgroup of this process's child ``pid`` once it is gone."""
    try:
        bases = _cgroup_bases()
    except OSError:
        return
    for base in bases:
        _remove_cgroup(os.path.join(base, cgroup_name(pid, os.getpid())))


def _remove_cgroup(group):
    """rmdir an empty cgroup, after cgroup.kill ends what is left in it; one not there stays so."""
    for _ in range(20):  # its last processes may still be dying (their keeper is gone)
        try:
            os.rmdir(group)
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return
        try:
            _write(os.path.join(group, "cgroup.kill"), "1")
        except OSError:
            pass
        time.sleep(0.02)


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


def _bind_readonly(path, target):
    _mount(path, target, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
    # In a user namespace the source's own flags are locked: keep noexec where it was set.
    if os.statvfs(path).f_flag & os.ST_NOEXEC:
        flags |= MS_NOEXEC
    _mount(None, target, None, flags)


def _new_root(root, hidden, protections, with_proc):
    """Mount a tmpfs at ``root`` (an empty directory the zygote made), bind the read-only
    directories into it, pivot into it and drop the old root.

    Until pivot_root every change is inside the child's own mount namespace and the child
    stays where it was (an OSError: private root unavailable); after it, a failure is
    SetupFailed, since a half-dropped old root must never serve."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=755")
    for path in _readonly_dirs([*hidden, root]):
        target = root + path
        if os.path.isdir(path):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "w").close()
        _bind_readonly(path, target)
    os.makedirs(root + "/dev", exist_ok=True)
    for device in ("null", "zero", "urandom"):
        open(f"{root}/dev/{device}", "w").close()
        _mount(f"/dev/{device}", f"{root}/dev/{device}", None, MS_BIND)
    os.makedirs(root + "/tmp", mode=0o1777, exist_ok=True)
    os.chmod(root + "/tmp", 0o1777)
    os.makedirs(root + "/proc", exist_ok=True)
    if with_proc:
        # Before the old root goes: in a user namespace the kernel mounts a new proc only
        # while a fully visible one is still in this mount namespace.
        protections.attempt("/proc", _mount, "proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    else:
        protections.unavailable["/proc"] = "no PID namespace: the child has none"
    os.makedirs(root + "/oldroot", exist_ok=True)
    os.chdir(root)
    _syscall("pivot_root", b".", b"oldroot")
    try:
        os.chdir("/")
        _check(_libc.umount2(b"/oldroot", MNT_DETACH), "umount old root")
        os.rmdir("/oldroot")
    except OSError as exc:
        raise SetupFailed(f"private root: {exc}") from None


def _dumpable(flag):
    """A non-dumpable process's /proc files belong to root: no process of the same uid can
    read its memory, but it cannot write its own uid map either (see zygote._not_dumpable)."""
    _check(_libc.prctl(PR_SET_DUMPABLE, flag, 0, 0, 0), "dumpable")


def _user_namespace(uid, gid):
    _check(_libc.unshare(CLONE_NEWUSER), "unshare")
    try:  # from here on there is no way back: without a uid map the child can do nothing right
        _dumpable(1)
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
        _dumpable(0)
    except OSError as exc:
        raise SetupFailed(f"user namespace: uid map: {exc.strerror}") from None


def probe_user_namespace():
    """None if a user namespace with a uid map can be made here, else why not. Tried once per
    zygote in a throwaway child: where the namespace is allowed but the map is not (a
    hardened kernel or AppArmor rule), no real child is ever left half set up."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        why = ""
        try:
            _user_namespace(os.getuid(), os.getgid())
        except (OSError, SetupFailed) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
        finally:
            os.write(write, why.encode()[:500])
            os._exit(0)
    os.close(write)
    why = os.read(read, 1000).decode(errors="replace")
    os.close(read)
    os.waitpid(pid, 0)
    return why or None


def probe_namespaces() -> bool:
    """Whether new mount and PID namespaces can be made here (as root; in a throwaway child)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _libc.unshare(CLONE_NEWNS | CLONE_NEWPID) == 0 else 1)
    return os.waitpid(pid, 0)[1] == 0


def _no_sysv_ipc():
    """Nothing of SysV shared memory, queues or semaphores in the child's own IPC namespace
    (shared memory is not counted by the address-space limit)."""
    for name, value in (("shmmax", "0"), ("shmall", "0"), ("shmmni", "0"), ("msgmni", "0"), ("sem", "0 0 0 0")):
        _write(f"/proc/sys/kernel/{name}", value)


def _fresh_keyring():
    """A new anonymous session keyring: the grader's login keys stay behind."""
    if _libc.syscall(ctypes.c_long(_arch()["keyctl"]), KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _drop_privileges(in_user_namespace, uid=NOBODY):
    if in_user_namespace:
        # One uid is mapped, so there is nobody to become: clear every capability instead.
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        _syscall("capset", header, data)
    elif os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # leaving uid 0 clears every capability


def _own_temp(temp, uid):
    """``temp`` made a folder only ``uid`` (None: this process's own) may enter, this process's
    working directory and its TMPDIR."""
    os.makedirs(temp, 0o700, exist_ok=True)   # exists: made by this process before a step that failed
    if uid is not None:
        os.chown(temp, uid, uid)
    _enter_temp(temp)


def _enter_temp(folder):
    os.chdir(folder)
    os.environ["TMPDIR"] = tempfile.tempdir = folder


def _become(uid, temp):
    """From root: uid ``uid``, with ``temp`` (if any) a folder of its own."""
    if temp:
        _own_temp(temp, uid)
    _drop_privileges(False, uid)


def _hidden_processes(private_root, other_user):
    """Whether other processes' command lines are out of the child's reach: a private root has
    the /proc of its PID namespace, or none; the machine's own /proc hides them only when mounted
    with hidepid and the child runs as another user. OSError (why not) otherwise."""
    if private_root:
        return
    with open("/proc/self/mounts") as mounts:
        options = next((line.split()[3] for line in mounts if line.split()[1:3] == ["/proc", "proc"]), "")
    hidepid = next((o.split("=", 1)[1] for o in options.split(",") if o.startswith("hidepid=")), "0")
    if hidepid in ("0", "off") or not other_user:
        raise OSError(0, "no /proc of its own, and the machine's "
                         + ("has no hidepid" if other_user else "shows it its own uid's")
                         + ": it can read every process's command line")


def _no_new_privs():
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _seccomp(own_signals_only=True, sockets=()):
    """Refuse (EPERM, as Docker does) SysV IPC, the keyring calls, ptrace and reading other
    processes' memory, and signals to any process but the worker itself: needed where no
    PID namespace or user change separates the child from the grader.

    Also refused: memory that RLIMIT_AS does not count. memfd_create's pages are held by a
    file, not a mapping, and a new user namespace would let the child mount a tmpfs of its
    own; so no new namespace (unshare, setns, clone with a CLONE_NEW* flag; clone3, whose flags
    a filter cannot read, says ENOSYS, so libc falls back to clone), no mount of any kind and no
    memfd. New sockets too: what waits in a Unix socket's queue is kernel memory no limit
    counts (a child and its forks held 1.5 GiB in socket pairs), and the child talks to the
    grader only on the channel it inherits. And, as Docker's default profile does, io_uring,
    perf_event_open and userfaultfd: kernel attack surface no course code touches. Nothing the
    course runs needs any of them (torch, tiktoken and safetensors included: every assignment's
    solutions grade with this filter, tests/test_sandbox.py). x86_64 has no socketcall, and
    i386 calls are refused with the other ABIs, so ``socket`` and ``socketpair`` are the only
    ways to a new socket.

    ``own_signals_only=False``: signals are left alone (the notebook's kernel, whose PID
    namespace or uid separates it, stops what it starts itself). ``sockets``: the names in
    ``ARCH[...]["sockets"]`` still allowed (the kernel's ZMQ and asyncio need them)."""
    arch, own = _arch(), os.getpid() & 0xFFFFFFFF
    deny = 0x00050000 | 1            # SECCOMP_RET_ERRNO | EPERM
    enosys = 0x00050000 | 38
    allow = 0x7FFF0000
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    program = [(ld, 0, 0, 4), (jeq, 1, 0, arch["audit"]), (ret, 0, 0, deny), (ld, 0, 0, 0),
               (jge, 0, 1, 0x40000000), (ret, 0, 0, deny)]   # x32 and other ABIs: refused
    unknown = set(sockets) - set(arch["sockets"])
    if unknown:   # a typo must not leave a call refused that the caller meant to allow, or the reverse
        raise ValueError(f"not a socket call the filter knows: {sorted(unknown)}")
    refused = [*arch["deny"].values(), *(n for name, n in arch["sockets"].items() if name not in sockets)]
    for number in refused:
        program += [(jeq, 0, 1, number), (ret, 0, 0, deny)]
    program += [(jeq, 0, 1, arch["clone3"]), (ret, 0, 0, enosys),
                # clone: its flags (first argument, low 32 bits) must ask for no new namespace
                (jeq, 0, 4, arch["clone"]), (ld, 0, 0, 16), (jset, 0, 1, NEW_NAMESPACES),
                (ret, 0, 0, deny), (ret, 0, 0, allow)]
    for number in arch["own_pid_only"].values() if own_signals_only else ():
        # kill/tgkill: first argument (low 32 bits) must be 0, the worker's pid or its group
        program += [(jeq, 0, 6, number), (ld, 0, 0, 16), (jeq, 3, 0, 0), (jeq, 2, 0, own),
                    (jeq, 1, 0, (-own) & 0xFFFFFFFF), (ret, 0, 0, deny), (ret, 0, 0, allow)]
    program.append((ret, 0, 0, allow))
    install_seccomp(program)


def install_seccomp(program) -> None:
    """Load a classic-BPF seccomp filter: (code, jt, jf, k) tuples. Needs no_new_privs."""
    filters = b"".join(struct.pack("HBBI", *op) for op in program)
    buffer = ctypes.create_string_buffer(filters)
    fprog = struct.pack("HxxxxxxQ", len(program), ctypes.addressof(buffer))
    _check(_libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(2), ctypes.c_char_p(fprog), 0, 0), "seccomp")


def _own_process_count(uid):
    """Threads of ``uid``, the machine over: what RLIMIT_NPROC counts (a threaded kernel or
    server of the same uid elsewhere would otherwise leave the child no fork at all)."""
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            pass
    return count


# -- where children share the machine: kept apart, and nothing of one outlives it ---------------

PR_SET_CHILD_SUBREAPER = 36
UID_BASE = "AUTOGRADER_UID_BASE"      # the first uid of the range reserved for children (as root)
DEFAULT_UID_BASE, UID_COUNT = 61000, 1000
UID_CLAIMS = "/run/autograder-uids"   # a file per uid, flock'ed while a child of some grader holds it


def children(parent) -> list:
    """The live children of process ``parent`` (its threads' /proc children files: no other
    process's files are read, since a busy process's /proc/PID/stat can take tens of ms)."""
    return [pid for pid in cputime.children(parent) if _alive(pid)]


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _of_uid(uid):
    """The pids of ``uid``'s processes, zombies too."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                found.append(int(entry))
        except OSError:
            pass
    return found


def end_strays(uid=None, keep=()):
    """Kill what a child left behind until nothing of it runs: every process this one adopted as
    a child subreaper (what a child started and left, whatever session or group it made) but its
    live children ``keep``, and every process of the child's own ``uid`` (None: it had none);
    the adopted ones collected. False where something still ran after 5 s."""
    me, deadline, adopted = os.getpid(), time.monotonic() + 5, set()
    while time.monotonic() < deadline:
        found = [pid for pid in children(me) if pid not in keep]
        adopted.update(found)
        if uid is not None:
            found += [pid for pid in _of_uid(uid) if _alive(pid)]
        if not found:
            for pid in adopted:   # dead: their zombies go at once
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
            return True
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.001)
    return False


class UidClaims:
    """Uids for children, as root, from ``$AUTOGRADER_UID_BASE`` (61000 by default) on: a uid no
    account has and no process runs with, claimed by an flock on its file in UID_CLAIMS (a folder
    only root may write) for as long as a child's processes may run, so no two children of any
    grader on the machine share one; taken in turn, so a uid comes back only after the others.
    OSError where the folder cannot be had."""

    def __init__(self):
        base = int(os.environ.get(UID_BASE) or DEFAULT_UID_BASE)
        self.uids, self.turn, self.held = range(base, base + UID_COUNT), 0, {}
        os.makedirs(UID_CLAIMS, 0o700, exist_ok=True)
        info = os.lstat(UID_CLAIMS)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
            raise OSError(errno.EPERM, f"{UID_CLAIMS} is not a folder only root may write")

    def claim(self):
        for _ in self.uids:
            uid, self.turn = self.uids[self.turn], (self.turn + 1) % len(self.uids)
            try:
                pwd.getpwuid(uid)
                continue   # an account's
            except KeyError:
                pass
            fd = os.open(os.path.join(UID_CLAIMS, str(uid)), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if not _of_uid(uid):
                    self.held[uid] = fd
                    return uid
            except BlockingIOError:
                pass   # another child's, of this grader or another
            os.close(fd)
        raise OSError(errno.EAGAIN, f"every uid from {self.uids.start} to {self.uids.stop - 1} is taken")

    def release(self, uid) -> None:
        os.close(self.held.pop(uid))


class Apart:
    """What keeps the zygote's children apart where no namespace does: each gets a temporary folder
    of its own under ``base`` (made here, mode 711; see _isolate), and as root without mount and
    PID namespaces a uid of its own (UidClaims). This process becomes its children's subreaper,
    so after each child ``ended`` kills everything it left (the grader killed its process group):
    what this process adopted and its uid's processes; then its uid is let go and its folder
    removed."""

    def __init__(self, mode):
        self.base = tempfile.mkdtemp(prefix="autograder-tmp-")
        os.chmod(self.base, 0o711)
        _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        self.claims, self.why, self.children = None, "not root: no other uid to give", {}
        if os.geteuid() == 0 and mode == "full" and probe_namespaces():
            self.why = "not needed: mount and PID namespaces hold"
        elif os.geteuid() == 0:
            try:
                self.claims = UidClaims()
            except OSError as exc:
                self.why = exc.strerror or str(exc)

    def claim(self):
        """``place`` for the next child (see _isolate): (base, uid or None, why none)."""
        if self.claims is None:
            return self.base, None, self.why
        try:
            return self.base, self.claims.claim(), None
        except OSError as exc:
            return self.base, None, exc.strerror

    def started(self, pid, place) -> None:
        self.children[pid] = place[1]

    def ended(self, pid) -> None:
        """After the child ``pid`` is collected (a pid that was none: nothing)."""
        if pid not in self.children:
            return
        uid = self.children.pop(pid)
        if end_strays(uid, keep=self.children) and uid is not None:
            self.claims.release(uid)   # else kept: the uid is not given again
        shutil.rmtree(os.path.join(self.base, str(pid)), ignore_errors=True)

    def close(self) -> None:
        """Once no child is to come: what is left of any ends too."""
        for pid in list(self.children):
            self.ended(pid)
        shutil.rmtree(self.base, ignore_errors=True)


def _mapped_bytes():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))


def apply_limits(limits, headroom, mapped) -> None:
    """rlimits for the worker. RLIMIT_NPROC counts the real uid's processes system-wide (in
    every namespace), so ``headroom`` is what that uid already runs elsewhere; ``mapped`` is
    the address space the warm process already uses."""
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


NAMESPACES = (("mount namespace", CLONE_NEWNS), ("PID namespace", CLONE_NEWPID), ("network namespace", CLONE_NEWNET),
              ("IPC namespace", CLONE_NEWIPC), ("UTS namespace", CLONE_NEWUTS))


def _isolate(channel_fd, root, hidden, protections, namespaces, userns_refused, limits=Limits, place=None):
    """Every protection that works here, one at a time. Returns in the worker. ``place``: (base,
    uid, why none) from ``Apart.claim``, where the zygote keeps its children apart."""
    is_root = os.geteuid() == 0
    # First, with the grader's own rights: a cgroup can be joined only before they are dropped.
    protections.attempt("memory cgroup", _memory_cgroup, limits)
    protections.attempt("fresh session keyring", _fresh_keyring)
    in_user_ns, held = False, set()
    if not namespaces:
        protections.unavailable["namespaces"] = "isolation was turned off for this run"
    else:
        if not is_root and userns_refused:
            protections.unavailable["user namespace"] = userns_refused
        elif not is_root:
            in_user_ns = protections.attempt("user namespace", _user_namespace, os.getuid(), os.getgid())
        held = {name for name, flag in NAMESPACES
                if protections.attempt(name, lambda f: _check(_libc.unshare(f), "unshare"), flag)}
    if "PID namespace" in held:
        pid = os.fork()
        if pid:  # the keeper: outlives nothing, reports the worker's end as its own
            os.close(channel_fd)
            os._exit(_exit_code(os.waitpid(pid, 0)[1]))
        # PID 1 of the new namespace: when it dies (with the keeper, see pdeathsig below),
        # the kernel kills everything it started.
    private_root = "mount namespace" in held and protections.attempt(
        "private root", _new_root, root, hidden, protections, "PID namespace" in held)
    if not private_root:
        os.chdir("/")
        protections.unavailable.setdefault("private root", "needs a mount namespace")
        if "/proc" in protections.held:  # mounted in a root that was then not entered
            protections.held.remove("/proc")
            protections.unavailable["/proc"] = "no private root"
    if "IPC namespace" in held and "/proc" in protections.held:
        protections.attempt("no SysV IPC", _no_sysv_ipc)
    # Never run student code as root (it could signal or trace the grader, or read anything),
    # unless nobody could not even reach Python outside a private root (the zygote runs one it
    # can where there is one: see interpreter).
    keep_root = is_root and not private_root and interpreter.first_blocked(interpreter.own_paths())
    os.umask(0o077)   # from here on (not the private root's folders: nobody must pass them), its files its own
    # Without a private root a child shares the machine's folders: its temporary files go in a
    # folder of its own under the zygote's ``place`` (the base, mode 711), made and entered here.
    base, uid, no_uid = place or (None, None, "not asked for")
    temp = None if private_root or base is None else os.path.join(base, str(os.getpid()))
    other_user = False
    if keep_root:
        protections.unavailable["uid nobody"] = (f"uid nobody cannot reach this Python ({keep_root}); running as "
                                                 f"root: name a Python it can reach in ${interpreter.USER_VENV}")
    elif in_user_ns:
        protections.attempt("no capabilities", _drop_privileges, True)
    elif is_root:
        if temp and uid is None:
            protections.unavailable["a uid of its own"] = no_uid
        elif temp:   # one uid per child, all its processes killed after it (see Apart)
            other_user = protections.attempt("a uid of its own", _become, uid, temp)
        if not other_user:
            other_user = protections.attempt("uid nobody", _become, NOBODY, temp)
    else:
        protections.unavailable["a user of its own"] = f"runs as the grader's uid {os.getuid()}"
        if temp:   # a folder of its own still, though every child of this uid may enter it
            _own_temp(temp, None)
    if private_root:
        protections.attempt("private temporary directory", _enter_temp, "/tmp")   # the private root's own
    elif "a uid of its own" in protections.held:
        protections.held.append("private temporary directory")
    elif temp:
        # no folder name in the reason: it is the same for every child, so the report counts it once
        protections.unavailable["private temporary directory"] = (
            f"its folder shares uid {os.getuid()} with the other children")
    protections.attempt("hidden processes", _hidden_processes, private_root, other_user)
    protections.separated = separated(other_user, in_user_ns, private_root)
    if protections.attempt("no_new_privs", _no_new_privs):
        protections.attempt("seccomp", _seccomp)
    else:
        protections.unavailable["seccomp"] = "needs no_new_privs"
    # Die with the parent (the keeper, or the zygote without a PID namespace). This must come
    # *after* the uid change: the kernel clears the parent-death signal whenever the
    # credentials change, and a worker that calls setsid() would then escape the grader's
    # killpg and outlive its keeper (found by the hostile bank: an orphaned busy loop).
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")


def _hello(protections):
    return {"isolation": protections.summary(), "held": protections.held, "unavailable": protections.unavailable,
            "separated": protections.separated, "uid": os.getuid(), "pid": os.getpid()}


def start_child(channel_fd, root, hidden, mode, userns_refused=None, limits=Limits, place=None) -> None:
    """In a freshly forked zygote child: isolate, then serve on ``channel_fd``. Never returns.
    ``userns_refused``: what probe_user_namespace found, or None; ``place``: see _isolate.

    The hello (the first frame) says what held; a child that cannot start says which step
    failed instead."""
    from . import child, protocol  # already imported by the zygote; nothing is read from disk here
    import socket

    code = 1
    try:
        os.setsid()
        _quiet_stdio()
        os.closerange(3, channel_fd)
        os.closerange(channel_fd + 1, 1 << 16)
        channel = socket.socket(fileno=channel_fd)
        # Read on the host's /proc, before a new PID namespace hides the other processes.
        headroom = _own_process_count(NOBODY if os.geteuid() == 0 else os.getuid())
        mapped = _mapped_bytes()
        protections = Protections()
        try:
            _isolate(channel_fd, root, hidden, protections, mode == "full", userns_refused, limits, place)
            if "a uid of its own" in protections.held:
                headroom = 0   # no process had that uid (UidClaims)
            protections.attempt("limits", apply_limits, limits, headroom, mapped)
        except (SetupFailed, OSError) as exc:
            protocol.send(channel, {"hello": {"failed": str(exc)}})
            raise
        child.serve(channel, _hello(protections))
        code = 0
    except BaseException:
        code = 1
    finally:
        os._exit(code)


# -- before any submission runs: what a child will get here, and what to do about it ---------

CHECK = ("import sys; sys.path.insert(0, sys.argv[1]); from autograder.sandbox.isolate import _dry_run; "
         "_dry_run(sys.argv[2], __import__('json').loads(sys.argv[3]))")


# What the zygote's Python must hold, at the grader's versions, when it is not the grader's own.
CHILD_NEEDS = ("torch", "safetensors", "numpy")


@functools.lru_cache(maxsize=None)
def children_python(isolation):
    """The zygote's Python: this one, unless children run as nobody without a private root and
    nobody cannot reach it; then one it can (see interpreter), or this one and a WARNING (once)
    that says why. ``isolate.check`` asks it too, so its dry run is the zygote's."""
    if os.geteuid() != 0 or interpreter.first_blocked(interpreter.own_paths()) is None:
        return sys.executable
    if isolation == "full" and probe_namespaces():
        return sys.executable  # each child's private root binds it where nobody reaches it
    python, why = interpreter.python_for_others(CHILD_NEEDS)
    if python is None:
        print(f"WARNING: {why}", file=sys.stderr)
        return sys.executable
    return python


def check(mode, hidden=()):
    """The hello a child would send here, found before any submission runs: a fresh interpreter,
    started as the zygote is, takes every step a child takes in a throwaway process that then
    exits (an interpreter's start and some 30 ms). ``{"failed": why}`` where a child could not
    start at all."""
    return start_check(mode, hidden)()


def start_check(mode, hidden=()):
    """``check`` begun: its interpreter runs beside this process (while it imports torch, say);
    the function returned waits for it and gives the hello."""
    import json
    import subprocess

    from ..paths import COURSE, ROOT
    from .startup import ZYGOTE_ENV

    env = {k: v for k, v in os.environ.items() if k in ZYGOTE_ENV}
    process = subprocess.Popen([children_python(mode), "-P", "-c", CHECK, str(ROOT), mode,   # hidden as the zygote hides them
                                json.dumps(sorted({os.path.realpath(p) for p in (ROOT, COURSE, *hidden)}))],
                               cwd="/", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)

    def hello():
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        try:
            return json.loads(out)
        except ValueError:
            return {"failed": f"the isolation check exited with status {process.returncode}: {err.strip()[-500:]}"}
    return hello


def _dry_run(mode, hidden):
    import json

    refused = probe_user_namespace() if mode == "full" and os.geteuid() != 0 else None
    root = tempfile.mkdtemp(prefix="autograder-check-")
    apart = Apart(mode)
    place = apart.claim()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        report = {"failed": "no report"}
        try:
            os.close(read)
            protections = Protections()
            _isolate(write, root, hidden, protections, mode == "full", refused, place=place)  # the keeper exits in there
            report = _hello(protections)
        except BaseException as exc:  # noqa: B036 (reported, then gone)
            report = {"failed": str(exc)}
        finally:
            os.write(write, json.dumps(report).encode())
            os._exit(0)
    apart.started(pid, place)
    os.close(write)
    data = b"".join(iter(lambda: os.read(read, 65536), b""))
    os.waitpid(pid, 0)
    release_cgroup(pid)
    apart.ended(pid)
    apart.close()
    os.rmdir(root)
    sys.stdout.write(data.decode())


def _sysctl(name):
    try:
        with open(f"/proc/sys/{name.replace('.', '/')}") as handle:
            return handle.read().strip()
    except OSError:
        return None


def rerun_command() -> str:
    """This process's command line, to be run again by someone else (sudo resets PATH: the
    interpreter goes by its full path)."""
    import shlex
    argv = list(sys.argv)
    if argv and os.path.basename(argv[0]) == "__main__.py":   # python -m package
        argv[0:1] = ["-m", os.path.basename(os.path.dirname(argv[0]))]
    return shlex.join([sys.executable, *argv])


def how_to_isolate(command) -> str:
    """What to do on this machine so that children get a user of their own or user namespaces:
    one line per way that applies here. ``command``: the grading command to rerun."""
    python = sys.executable
    in_container = os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
    docker = ("- in Docker (or Podman): start the container with --security-opt seccomp=unconfined "
              "--security-opt apparmor=unconfined (its default profiles refuse namespaces)")
    ways = []
    if "--no-isolation" in command:
        ways.append("- grade without --no-isolation")
    if os.geteuid() == 0:
        # Root becomes uid nobody without namespaces too, if nobody can read the interpreter.
        where = interpreter.first_blocked(interpreter.own_paths()) or sys.prefix
        ways.append(f"- grade with a Python that other users can read (uid nobody cannot reach {where}): "
                    "python3 -m venv /opt/autograder-venv && /opt/autograder-venv/bin/pip install -r "
                    "requirements.txt && chmod -R a+rX /opt/autograder-venv, then "
                    f"{command.replace(python, '/opt/autograder-venv/bin/python', 1)}")
        ways.append(docker)
        return "\n".join(ways)
    ways.append(f"- run it as root with this same Python (children then run as uid nobody): sudo {command}")
    if _sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        ways.append("- allow user namespaces (Ubuntu 23.10 and later restrict them through AppArmor): "
                    "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile "
                    f"that allows userns for {os.path.realpath(python)}")
    if _sysctl("kernel.unprivileged_userns_clone") == "0":
        ways.append("- allow user namespaces: sudo sysctl -w kernel.unprivileged_userns_clone=1")
    if _sysctl("user.max_user_namespaces") == "0":
        ways.append("- allow user namespaces: sudo sysctl -w user.max_user_namespaces=10000")
    if in_container or len(ways) == 1 + ("--no-isolation" in command):
        ways.append(docker + ", or grade as root in it" if in_container else
                    "- find what refuses user namespaces here (a seccomp filter, as in a container; a "
                    "security module) and allow unshare(CLONE_NEWUSER) for this Python; " + docker[2:])
    return "\n".join(ways)


def refusal(what, isolation, command=None) -> str:
    """Why ``what`` (untrusted code) will not run here, and how to make it run isolated.
    ``command``: the grading command (default: this process's own)."""
    command = command or rerun_command()
    return (f"refusing to run {what}: it would run as your own user (uid {os.geteuid()}), with no user "
            "namespace and no other user to switch to, so it could read the reference and the hidden suites "
            f"and rewrite them, the grader's code and the results ({isolation}).\n"
            f"To grade untrusted code on this machine, do one of:\n{how_to_isolate(command)}")
