"""Under `nbgrader autograde` the student's notebook runs in a sandboxed kernel, and what is graded
is what the student submitted.

One course, one `nbgrader autograde` of three submissions (real kernels):

honest    the reference modules: the neighbour whose grades an attack would change;
detached  blank stubs with hostile case 58: importing simple_attention starts a detached process
          that keeps rewriting gradebook.db (full marks for its author, 0 for the others) and drops
          files in the course and the exchange; a first cell also reports what the kernel can see;
links     hostile case 13: modules that are symbolic links to the reference.

The course, the gradebook and the exchange are left writable by everyone, so only the sandbox
stands between the kernel and them. A few kernels are also started directly with the manager.
"""
import asyncio
import os
import shutil
import socket
import sys
import time
from pathlib import Path

import nbformat
import pytest

from hostile import CASES, Case, materialize
from nobody import python_nobody_runs

from autograder.platforms import nbgrade
from autograder.sandbox import interpreter, isolate, kernel_sandbox
from autograder.sandbox.kernel_sandbox import children
from autograder.platforms.nbkernel import SandboxedExecute, SandboxedKernelManager, execute_preprocessor
from autograder.paths import SOLUTIONS
from autograder.authoring.release import build_course, kernel_path, run_nbgrader

ROOT = Path(__file__).resolve().parent.parent

ASSIGNMENT = "ch03_attention"
CASE = {case.name: case for case in CASES}

# First cell of the detached student's notebook: what does the kernel see?
PROBE_CELL = """
import os, socket
import simple_attention  # starts the detached editor (hostile case 58)
seen = {{name: os.path.exists(path) for name, path in {paths!r}.items()}}
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2)
    net = "connected"
except OSError as exc:
    net = type(exc).__name__
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) if os.path.isdir("/proc/1") else [1]
print(f"PROBE uid={{os.getuid()}} cwd={{os.getcwd()}} seen={{seen}} net={{net}} pids={{pids}}")
"""


def processes_named(prefix):
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().startswith(prefix):
                found.append(int(entry))
        except OSError:
            pass
    return found


def submit(course, student, case, ctx, notebook_cell=None):
    folder = course / "submitted" / student / ASSIGNMENT
    materialize(case, folder, ctx)
    for path in folder.iterdir():  # case 13's relative link is made for the bank's folder depth
        if path.is_symlink() and not path.exists():
            path.unlink()
            path.symlink_to(SOLUTIONS / ASSIGNMENT / path.name)
    for path in (course / "release" / ASSIGNMENT).iterdir():  # the notebook and the public tests
        if not os.path.lexists(folder / path.name):
            shutil.copy(path, folder / path.name)
    if notebook_cell:
        path = folder / f"{ASSIGNMENT}.ipynb"
        nb = nbformat.read(path, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(notebook_cell))
        nbformat.write(nb, path)
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("nbkernel")
    token = os.urandom(5).hex()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", kernel_path(base))
        course = build_course(ASSIGNMENT, base / "course")
        exchange, markers = base / "exchange", course / "markers"
        for folder in (exchange, markers):
            folder.mkdir()
        gradebook = course / "gradebook.db"
        for path in (course, exchange, markers):
            path.chmod(0o777)
        gradebook.chmod(0o666)
        ctx = {"MARKERS": str(markers), "COURSE": str(course), "EXCHANGE": str(exchange),
               "GRADEBOOK": str(gradebook), "TOKEN": token, "REPO": str(ROOT)}
        probe = PROBE_CELL.format(port=listener.getsockname()[1], paths={
            "course": str(course), "gradebook": str(gradebook), "exchange": str(exchange),
            "repository": str(ROOT), "solutions": str(SOLUTIONS)})
        folders = {
            "honest": submit(course, "honest", Case("honest", "the reference", "good", 100), ctx),
            "detached": submit(course, "detached", CASE["58_detached_score_editor"], ctx, probe),
            "links": submit(course, "links", CASE["13_symlink_reference"], ctx),
        }
        started = time.monotonic()
        proc = run_nbgrader(course, "autograde", ASSIGNMENT, check=False)
        seconds = time.monotonic() - started
    try:
        listener.accept()
        intrusion = True
    except BlockingIOError:
        intrusion = False
    listener.close()
    yield {"course": course, "folders": folders, "proc": proc, "token": token, "markers": markers,
           "exchange": exchange, "intrusion": intrusion, "seconds": seconds}


def gradebook_parts(course, student):
    """{part: (score, max_score)} from nbgrader's gradebook, and the total."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission(ASSIGNMENT, student)
        parts = {nbgrade.part_of(g.name): (g.score, g.max_score) for g in submission.notebooks[0].grades}
        return parts, submission.score


def outputs(course, student):
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    return "\n".join(o.get("text", "") + o.get("evalue", "") for c in nb.cells if c.cell_type == "code"
                     for o in c.outputs)


def test_autograde_succeeds(graded):
    assert graded["proc"].returncode == 0, graded["proc"].stderr[-3000:]
    assert "WITHOUT namespace isolation" not in graded["proc"].stderr


def test_the_kernel_is_isolated(graded):
    """The attack's own first cell: no course, gradebook, exchange or repository; no network;
    only its own processes; not root."""
    line = next(l for l in outputs(graded["course"], "detached").splitlines() if l.startswith("PROBE"))
    assert "seen={'course': False, 'gradebook': False, 'exchange': False, 'repository': False, " \
           "'solutions': False}" in line, line
    assert "cwd=/home/student/ch03_attention" in line, line  # a copy, away from the course
    assert "net=connected" not in line and not graded["intrusion"], line
    pids = eval(line.split("pids=")[1])
    assert pids[0] == 1 and len(pids) < 6, line  # PID 1 is the kernel; the editor and little else
    if os.geteuid() == 0:
        assert "uid=65534" in line, line


@pytest.mark.parametrize("student", ["honest", "detached", "links"])
def test_the_gradebook_holds_the_clis_scores(graded, grader, student):
    """After the detached editor had every chance to act, the gradebook still says what the CLI says,
    for the attacker and for its honest neighbour."""
    time.sleep(1.0)  # the editor writes every 0.2 s, if it is alive
    parts, total = gradebook_parts(graded["course"], student)
    cli = grader.grade(graded["folders"][student])
    assert parts == {part: tuple(points) for part, points in cli["extra_data"]["parts"].items()}
    assert total == cli["score"] == {"honest": 100, "detached": 0, "links": 0}[student]


def test_the_detached_process_ran_and_is_gone(graded):
    assert "detached editor started" in outputs(graded["course"], "detached")
    assert not processes_named(graded["token"]), "a process the notebook started outlived its kernel"
    for folder in (graded["markers"], graded["exchange"], graded["course"]):
        assert not [p.name for p in folder.iterdir() if p.name.startswith("detached-")], folder


def test_links_to_the_reference_are_refused_not_graded(graded, grader):
    cli = grader.grade(graded["folders"]["links"])
    assert "symbolic link" in cli["output"]
    autograded = graded["course"] / "autograded" / "links" / ASSIGNMENT
    assert not (autograded / "simple_attention.py").exists()  # nbgrader had copied the reference there
    reference = (SOLUTIONS / ASSIGNMENT / "self_attention.py").read_text()
    assert all(p.read_text() != reference for p in autograded.glob("*.py"))


async def _reply(kc, msg_id):
    while True:
        msg = await kc.get_shell_msg(timeout=30)
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg


async def _run_kernel(folder, isolation, code, interrupt=False):
    """Start a sandboxed kernel in ``folder``, run ``code``, stop it; returns (reply, manager, pid)."""
    # "off" as an ordinary user: the kernel keeps our uid (as root it is nobody); the code is the test's own
    km = SandboxedKernelManager(kernel_name="python3", isolation=isolation, unsafe_same_uid=isolation == "off")
    await km.start_kernel(cwd=str(folder))
    worker = km._worker[0]
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=60)
        if interrupt:
            msg_id = kc.execute(code)
            while (await kc.get_iopub_msg(timeout=30))["content"].get("text") != "running\n":
                pass
            await km.interrupt_kernel()
            reply = await _reply(kc, msg_id)
            reply["second"] = (await _reply(kc, kc.execute("print('still alive')")))["content"]["status"]
        else:
            reply = await kc.execute_interactive(code, timeout=60)
    finally:
        kc.stop_channels()
        await km.shutdown_kernel()
        await km.cleanup_resources()
    return reply, km, worker


DETACH = """
import ctypes, os, time
assert os.getcwd().endswith("/home/student/{folder}"), os.getcwd()  # a copy of its folder
assert {ordinary_user} or os.getuid() in {uids}, os.getuid()   # nobody, or without namespaces a uid of its own
assert {ordinary_user} or {full} or not os.stat(os.environ["TMPDIR"]).st_mode & 0o077   # its folder, its own
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b"{token}", 0, 0, 0)
        time.sleep(600)
    os._exit(0)
"""


HIDDEN_MEMORY = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
held = []
try:
    os.memfd_create("held")
    held.append("memfd")
except OSError:
    pass
if libc.unshare(0x10000000 | 0x00020000) == 0:     # CLONE_NEWUSER | CLONE_NEWNS: a tmpfs of its own next
    held.append("namespace")
libc.syscall.restype = ctypes.c_long                # and what Docker's default profile refuses (x86_64 numbers)
for name, number, args in (("io_uring_setup", 425, (8, ctypes.create_string_buffer(120))),
                           ("perf_event_open", 298, (ctypes.create_string_buffer(128), 0, -1, -1, 0)),
                           ("userfaultfd", 323, (os.O_CLOEXEC | 1,))):
    if os.uname().machine == "x86_64" and not (libc.syscall(number, *args) == -1 and ctypes.get_errno() == 1):
        held.append(name)
assert not held, held
"""


@pytest.mark.parametrize("isolation", ["full", "off"])
def test_the_kernel_holds_no_memory_its_limits_do_not_count(tmp_path, isolation):
    """As the CLI's child: memfd pages and a user namespace of the kernel's own (where it could
    mount a tmpfs) are refused, with namespaces and without; so are io_uring, perf_event_open and
    userfaultfd (EPERM, the filter's answer). Sockets stay: the kernel talks ZMQ, and asyncio's
    loop dies without socketpair()."""
    if isolation == "off" and os.geteuid() == 0 and interpreter.python_for_others(kernel_sandbox.KERNEL_NEEDS)[0] is None:
        pytest.skip("the kernel cannot run as nobody without namespaces here")
    reply, _, _ = asyncio.run(_run_kernel(tmp_path, isolation, HIDDEN_MEMORY))
    assert reply["content"]["status"] == "ok", reply["content"]


@pytest.mark.parametrize("isolation", ["full", "off"])
def test_nothing_the_kernel_started_survives_it(tmp_path, capfd, isolation):
    """Also without namespaces (where the keeper reaps the kernel's orphans), and said loudly.
    As root the kernel is nobody in both, also where nobody cannot reach pytest's folder or this
    Python (a virtual environment of pyenv's under /root): without a private root it works in
    a copy of its folder, with a Python nobody can reach (.ci/run builds /opt/autograder-venv)."""
    if isolation == "off" and os.geteuid() == 0:
        # without one the kernel is refused, and says why: see the test below
        python_nobody_runs(kernel_sandbox.KERNEL_NEEDS, "the kernel as nobody without namespaces")
    token = os.urandom(5).hex()
    own = range(isolate.DEFAULT_UID_BASE, isolate.DEFAULT_UID_BASE + isolate.UID_COUNT)
    code = DETACH.format(token=token, folder=tmp_path.name, ordinary_user=os.geteuid() != 0,
                         uids=own if isolation == "off" else {isolate.NOBODY}, full=isolation == "full")
    reply, km, worker = asyncio.run(_run_kernel(tmp_path, isolation, code))
    assert reply["content"]["status"] == "ok", reply["content"]
    assert not os.path.exists(f"/proc/{worker}"), "the kernel's PID 1 is still alive"
    deadline = time.monotonic() + 5
    while processes_named(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not processes_named(token)
    assert km._private is None and km._worker is None  # cleaned up
    warned = "WARNING: the notebook's kernel runs WITHOUT namespace isolation" in capfd.readouterr().err
    assert warned == (isolation == "off")


@pytest.mark.privileged
@pytest.mark.skipif(os.geteuid() != 0, reason="only root changes the kernel's uid")
def test_a_kernel_nobody_cannot_run_is_not_started_and_says_why_in_one_line(tmp_path, monkeypatch):
    """Without namespaces and without a Python nobody can reach, the kernel is refused (never
    run as root): nbgrader's error names the path and what to do."""
    why = "uid nobody cannot reach this Python (/root (mode 700)), and there is no /x/bin/python: make one"
    monkeypatch.setattr(interpreter, "python_for_others", lambda needs: (None, why))

    async def start():
        km = SandboxedKernelManager(kernel_name="python3", isolation="off")
        try:
            with pytest.raises(RuntimeError) as raised:
                await km.start_kernel(cwd=str(tmp_path))
        finally:
            await km.cleanup_resources()
        return str(raised.value), km

    message, km = asyncio.run(start())
    assert message == f"the notebook's kernel was not started: {why}"
    assert km._private is None


def test_an_interrupt_stops_the_cell_not_the_kernel(tmp_path):
    """nbgrader interrupts a cell at its timeout with SIGINT to the process group: the keeper
    must let the kernel handle it, and the kernel carries on."""
    reply, _, _ = asyncio.run(_run_kernel(tmp_path, "full", "print('running')\nwhile True: pass", interrupt=True))
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    assert reply["second"] == "ok"


def test_a_kernel_that_will_not_die_is_killed(tmp_path):
    """bury() kills the kernel's PID 1 when shutting down did not."""
    async def stubborn():
        km = SandboxedKernelManager(kernel_name="python3")
        await km.start_kernel(cwd=str(tmp_path))
        pid = km._worker[0]
        assert children(km.provisioner.process.pid) == [pid]
        km.bury(wait=0.5)  # the kernel is alive and well: bury must kill it
        dead = not os.path.exists(f"/proc/{pid}") or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
        await km.shutdown_kernel(now=True)
        return dead
    assert asyncio.run(stubborn())


def test_without_linux_the_kernel_is_not_sandboxed_and_says_so(monkeypatch, capsys):
    from nbgrader.preprocessors import Execute
    assert execute_preprocessor() is SandboxedExecute and not capsys.readouterr().err
    monkeypatch.setattr(sys, "platform", "darwin")
    assert execute_preprocessor() is Execute
    assert "WARNING: the notebook's kernel runs WITHOUT the sandbox" in capsys.readouterr().err
