"""Start a notebook's Jupyter kernel in the same kind of sandbox as the CLI's child.

``nbkernel.SandboxedKernelManager`` runs this as the kernel's command::

    python -P -c LAUNCH ROOT SPEC KERNEL_ARGV...

    launcher = keeper (trusted; creates the namespaces; waits for the worker)
       └── fork ──▶ worker: PID 1 of a new PID namespace ── exec ──▶ ipykernel

The worker gets what ``isolate.start_child`` gives the CLI's child: new mount, PID, network,
IPC and UTS namespaces (plus a user namespace when the grader is not root), a tmpfs root
holding only read-only binds of the Python installation, uid nobody, no_new_privs, the
child's seccomp filter but its rules on signals and sockets (no memfd, mount or new namespace:
memory the rlimits would not count; no io_uring, perf_event_open or userfaultfd) and rlimits.
Into that root go, in memory, a copy of the notebook's folder as ``/home/student/<assignment>``
(writable: the notebook may write files, nothing reaches the course, whose path the kernel never learns) and the kernel's private folder
(``SPEC["private"]``: its connection file, the kernel side of our package). No course, gradebook, exchange or repository exists there, and no network: the kernel
listens on Unix sockets in its private folder, which nbgrader reaches through
``/proc/<worker>/root``. When the worker dies the kernel kills everything it started.

Where namespaces are refused the kernel still runs, as a uid of its own (``isolate.UidClaims``;
nobody where none can be had) and under the limits, in a copy of the notebook's folder inside
its private folder (mode 700, that uid's), with a Python every user can reach (``interpreter``;
where there is none it is not started, and nbgrader's error says which path and what to do); the
keeper (a child subreaper) kills whatever the kernel left behind and every process of its uid,
and a WARNING goes to nbgrader's log. Standard library and our stdlib-only modules: this runs
before every kernel.
"""
import json
import os
import signal
import stat
import sys
import traceback  # here: after the uid change the standard library may be out of reach

from . import interpreter, isolate
from .startup import ZYGOTE_ENV

LAUNCH = "import sys; sys.path.insert(0, sys.argv[1]); from autograder.sandbox.kernel_sandbox import main; main()"
# What the notebook's folder may bring into the sandbox (it lives in a 64 MiB tmpfs).
MAX_FILES, MAX_BYTES = 512, 32 << 20
SANDBOX_HOME = "/home/student"
# What the kernel's Python must hold, at the grader's versions, when it is not the grader's own.
KERNEL_NEEDS = ("ipykernel", "torch", "tiktoken")
NOT_STARTED = "not-started"  # in the private folder: why the kernel was refused, for nbkernel's error


class KernelLimits(isolate.Limits):
    """A kernel is a whole interpreter with torch and a handful of threads, which count as
    processes for RLIMIT_NPROC; it runs the notebook top to bottom."""

    memory_bytes = 3 << 30
    cpu_seconds = 300
    processes = 64
    open_files = 1024


children = isolate.children   # the grader side finds the worker with it


def _snapshot(folder):
    """{relative path: bytes, or None for a folder} of ``folder``, links and specials skipped."""
    files, total = {}, 0
    for top, dirs, names in os.walk(folder):
        for name in [*dirs, *names]:
            path = os.path.join(top, name)
            info = os.lstat(path)
            rel = os.path.relpath(path, folder)
            if stat.S_ISDIR(info.st_mode):
                files[rel] = None
            elif stat.S_ISREG(info.st_mode) and len(files) < MAX_FILES and total + info.st_size <= MAX_BYTES:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                with os.fdopen(fd, "rb") as handle:
                    files[rel] = handle.read(MAX_BYTES - total)
                total += len(files[rel])
            else:
                print(f"sandboxed kernel: {path} not copied into the sandbox (a link, special or too large)",
                      file=sys.stderr)
    return files


def _restore(folder, files, owner):
    """Write a snapshot at ``folder`` (inside the worker's tmpfs root), owned by ``owner``."""
    os.makedirs(folder, exist_ok=True)
    for rel, data in sorted(files.items(), key=lambda item: item[1] is not None):
        path = os.path.join(folder, rel)
        if data is None:
            os.makedirs(path, exist_ok=True)
        else:
            with open(path, "wb") as handle:
                handle.write(data)
    _chown_tree(folder, owner)


def _chown_tree(folder, owner):
    if owner is None:
        return
    for top, dirs, names in os.walk(folder):
        for path in [top, *(os.path.join(top, n) for n in dirs + names)]:
            os.lchown(path, owner, owner)


def _keep(worker, isolation, uid):
    """The keeper: outlives the worker, reports its exit code as its own.

    Interrupts are for the kernel (nbgrader signals the whole process group); a terminate
    request kills the worker. Without a PID namespace the keeper is the descendants' subreaper:
    once the worker is gone it kills and reaps every process the kernel left behind, and every
    process of the kernel's own ``uid`` (None: it had none); its claim on the uid ends with it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(worker, signal.SIGKILL))
    if isolation != isolate.FULL:
        print(f"WARNING: the notebook's kernel runs WITHOUT namespace isolation ({isolation})", file=sys.stderr)
    code = isolate._exit_code(os.waitpid(worker, 0)[1])
    if isolation != isolate.FULL:
        isolate.end_strays(uid=uid)
        while True:   # their zombies
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
    os._exit(code)


def _for_nobody(private, kernel_argv, python, why):
    """The kernel's command with ``python`` (nbkernel chose it: see interpreter), in a folder uid
    nobody can enter; where there is none, ``why`` goes to ``NOT_STARTED`` and the launcher exits
    (the kernel never runs as root)."""
    where = interpreter.blocked(private)
    if where and not why:
        why = (f"uid nobody cannot enter the kernel's folder {private} ({where}): "
               "set TMPDIR to a folder every user can enter")
    if why:
        with open(os.path.join(private, NOT_STARTED), "w") as handle:
            handle.write(why)
        os._exit(1)
    return [python if kernel_argv[0] == sys.executable else kernel_argv[0], *kernel_argv[1:]]


def _kernel_env(private):
    env = {k: v for k, v in os.environ.items() if k in ZYGOTE_ENV}
    env.update(PYTHONPATH=os.path.join(private, "lib"), HOME=private, TMPDIR=private, OMP_NUM_THREADS="1")
    if "NBGRADER_EXECUTION" in os.environ:
        env["NBGRADER_EXECUTION"] = os.environ["NBGRADER_EXECUTION"]
    return env


def main() -> None:
    """Isolate, then exec the kernel. argv: ROOT SPEC KERNEL_ARGV...
    (SPEC: private, hidden, isolation, python_for_nobody: [python or None, why])."""
    spec, kernel_argv = json.loads(sys.argv[2]), sys.argv[3:]
    private, hidden = spec["private"], spec["hidden"]
    work = os.getcwd()  # the notebook's folder (nbclient starts the kernel there)
    # In the sandbox it is /home/student/<assignment>: neither the course's path nor the
    # instructor's name reaches the kernel (or a traceback in the feedback).
    sandbox_work = os.path.join(SANDBOX_HOME, os.path.basename(work))
    snapshots = {private: _snapshot(private), sandbox_work: _snapshot(work)}
    # Merged-/usr systems reach the ELF loader through /lib64 -> usr/lib64: exec needs the links.
    top_links = {p: os.readlink(p) for p in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
                 if os.path.islink(p)}
    is_root = os.geteuid() == 0
    headroom = isolate._own_process_count(isolate.NOBODY if is_root else os.getuid())
    isolation = f"{isolate.REDUCED}: isolation was turned off for this run"
    if spec["isolation"] == "full":
        uid, gid = os.getuid(), os.getgid()
        flags = (isolate.CLONE_NEWNS | isolate.CLONE_NEWPID | isolate.CLONE_NEWNET | isolate.CLONE_NEWIPC
                 | isolate.CLONE_NEWUTS)
        try:
            if not is_root:  # as the CLI's child does it: the user namespace first, with its uid map
                isolate._user_namespace(uid, gid)
            isolate._check(isolate._libc.unshare(flags), "unshare")
        except OSError as exc:
            isolation = f"{isolate.REDUCED}: namespaces unavailable ({exc.strerror})"
        else:
            isolation = isolate.FULL
    uid = None   # a uid of the kernel's own, where root runs it without namespaces
    if isolation != isolate.FULL:
        isolate._libc.prctl(isolate.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        if is_root:
            kernel_argv = _for_nobody(private, kernel_argv, *spec["python_for_nobody"])
            try:   # as the CLI's children get one (isolate.UidClaims): held while this keeper lives
                claims = isolate.UidClaims()
                uid, headroom = claims.claim(), 0
                isolation += f"; as uid {uid} of its own, with {kernel_argv[0]}"
            except OSError as exc:
                isolation += f"; as nobody (no uid of its own: {exc.strerror}), with {kernel_argv[0]}"
        # The real folder may be out of the kernel's reach (a mode-700 parent) and is the
        # course's: as in the sandbox, the kernel works in a copy, inside its private folder.
        snapshots[private + sandbox_work] = snapshots.pop(sandbox_work)
        sandbox_work = private + sandbox_work
    # The CLI's rule (isolate.separated): never the instructor's own uid, unless trusted by name.
    # (Root's kernel is always nobody now, or it was refused above.)
    if not (isolate.separated(is_root, isolation == isolate.FULL and not is_root, isolation == isolate.FULL)
            or spec.get("unsafe_same_uid")):
        print("sandboxed kernel: " + isolate.refusal("the notebook's kernel", isolation,
                                                     f"{sys.executable} -m nbgrader autograde ..."), file=sys.stderr)
        sys.exit(3)
    worker = os.fork()
    if worker:
        _keep(worker, isolation, uid)
    try:
        # Before the new root: in a user namespace it may have no /proc to read the sizes from.
        isolate.apply_limits(KernelLimits, headroom, isolate._mapped_bytes())
        if isolation == isolate.FULL:
            isolate._new_root(os.path.join(private, "root"), hidden, isolate.Protections(), True)
            for path, target in top_links.items():
                if not os.path.lexists(path):
                    os.symlink(target, path)
            owner = isolate.NOBODY if is_root else None
            for folder, files in snapshots.items():
                _restore(folder, files, owner)
            isolate._drop_privileges(in_user_namespace=not is_root)
        else:
            _restore(sandbox_work, snapshots[sandbox_work], None)
            _chown_tree(private, (uid or isolate.NOBODY) if is_root else None)
            if uid is not None:   # its folder, connection file and sockets: no other kernel's to enter
                os.chmod(private, 0o700)
            isolate._drop_privileges(False, uid or isolate.NOBODY)
        isolate._no_new_privs()
        # No memfd, mount or namespace (memory no limit counts), no io_uring, perf or userfaultfd.
        # Sockets stay: the kernel talks ZMQ over Unix sockets, and asyncio's event loop makes
        # its wake-up pipe with socketpair() (refused, the kernel dies before kernel_info).
        isolate._seccomp(own_signals_only=False, sockets=("socket", "socketpair"))
        # After the uid change, which clears it: the kernel dies with its keeper.
        isolate._check(isolate._libc.prctl(isolate.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
        os.chdir(sandbox_work)
        env = _kernel_env(private)
    except BaseException as exc:  # noqa: B036 (report, then die: the keeper reports the code)
        print(f"sandboxed kernel: could not start ({exc!r})\n{traceback.format_exc(limit=-3)}", file=sys.stderr)
        os._exit(1)
    isolate._quiet_stdio()  # what the notebook prints goes to nbgrader as messages, not to its log
    os.execve(kernel_argv[0], kernel_argv, env)
