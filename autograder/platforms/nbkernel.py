"""nbgrader's side of the sandboxed kernel: ``SandboxedExecute`` and its kernel manager.

``SandboxedExecute`` is nbgrader's ``Execute`` preprocessor with ``SandboxedKernelManager``
as its kernel manager (nbgrader's ``Execute.__init__`` forces ``kernel_manager_class``, so a
subclass is the one hook that holds). The manager starts every kernel through
``kernel_sandbox`` (whose module docstring says what the kernel can see) and talks to it over
Unix sockets (jupyter's ``ipc`` transport) inside the kernel's own root, reached through
``/proc/<worker>/root``: the kernel has no network, so TCP on 127.0.0.1 cannot work.

The worker is PID 1 of the kernel's PID namespace: once it is dead, so is every process the
notebook started. The manager checks that when it cleans up after the kernel, and kills the
worker if it is still alive; ``SandboxedExecute`` runs before ``SaveAutoGrades``, so no score
is saved while anything the notebook started can still run (a kernel that cannot be stopped
fails the submission instead).
"""
import asyncio
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time

from jupyter_client.manager import AsyncKernelManager, KernelManager
from nbclient.util import ensure_async
from nbgrader.preprocessors import Execute
from traitlets import Bool, CaselessStrEnum, List, Unicode

from ..paths import COURSE, ROOT
from ..sandbox import cputime, interpreter, kernel_sandbox

KERNEL_LIB = ROOT / "autograder"  # its modules: what notebook cells import (never suites/ nor data)


class SandboxedKernelManager(AsyncKernelManager):
    """Starts the kernel in the sandbox and makes sure it is dead when it is cleaned up."""

    hidden = List(Unicode(), help="Paths the kernel must not see besides the repository (the course)."
                  ).tag(config=True)
    isolation = CaselessStrEnum(["full", "off"], "full",
                                help="'off' runs the kernel without namespaces (tests, diagnosis)."
                                ).tag(config=True)
    unsafe_same_uid = Bool(False, help="Start the kernel even where it would run as this user, able to rewrite "
                                       "the course and the gradebook (trusted notebooks only)."
                           ).tag(config=True)
    startup_seconds = 30.0  # for the keeper to fork the worker, on a loaded machine

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.transport = "ipc"
        self._private = None
        self._worker = None  # (pid, pidfd) of the kernel's PID 1

    async def _async_pre_start_kernel(self, **kw):
        self._private = tempfile.mkdtemp(prefix="nbkernel-")
        os.chmod(self._private, 0o755)
        lib = os.path.join(self._private, "lib", "autograder")
        os.makedirs(lib)
        for path in KERNEL_LIB.rglob("*.py"):
            inside = path.relative_to(KERNEL_LIB)
            if inside.parts[0] != "suites" and "templates" not in inside.parts:
                target = os.path.join(lib, inside)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy(path, target)
        os.mkdir(os.path.join(self._private, "root"))
        self.ip = os.path.join(self._private, "kernel")  # the sockets' path as the kernel sees it
        return await super()._async_pre_start_kernel(**kw)

    def format_kernel_cmd(self, extra_arguments=None) -> list:
        """This interpreter's ipykernel (its files are what the sandbox binds), through the launcher."""
        connection = os.path.join(self._private, "kernel.json")
        shutil.copy(self.connection_file, connection)
        kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", connection, *(extra_arguments or [])]
        hidden = sorted({os.path.realpath(p) for p in (ROOT, COURSE, *self.hidden)})
        # Where the kernel runs as nobody without a private root (the launcher decides), the
        # interpreter it runs: chosen here, since a query run by the launcher would be its child.
        others = interpreter.python_for_others(kernel_sandbox.KERNEL_NEEDS) if os.geteuid() == 0 else (None, None)
        spec = {"private": self._private, "hidden": hidden, "isolation": self.isolation,
                "unsafe_same_uid": self.unsafe_same_uid, "python_for_nobody": others}
        return [sys.executable, "-P", "-c", kernel_sandbox.LAUNCH, str(ROOT), json.dumps(spec), *kernel]

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        await super()._async_launch_kernel(kernel_cmd, **kw)
        keeper = self.provisioner.process
        deadline = time.monotonic() + self.startup_seconds
        while not (found := kernel_sandbox.children(keeper.pid)):
            if keeper.poll() is not None or time.monotonic() > deadline:
                try:  # refused by the launcher, which says why in one line
                    with open(os.path.join(self._private, kernel_sandbox.NOT_STARTED)) as handle:
                        raise RuntimeError(f"the notebook's kernel was not started: {handle.read(2000)}")
                except FileNotFoundError:
                    pass
                raise RuntimeError("the notebook's kernel could not be started in the sandbox (see the log above)")
            await asyncio.sleep(0.005)
        pid = found[0]
        self._worker = (pid, os.pidfd_open(pid))
        # From here on nbgrader reaches the sockets inside the worker's root.
        self.ip = f"/proc/{pid}/root{os.path.join(self._private, 'kernel')}"

    def bury(self, wait=5.0) -> None:
        """Return once the kernel's PID 1, and so everything the notebook started, is dead."""
        if self._worker is not None:
            pid, pidfd = self._worker
            try:
                if not select.select([pidfd], [], [], wait)[0]:
                    self.log.warning("The notebook's kernel (pid %s) is still running: killing it", pid)
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    if not select.select([pidfd], [], [], 10.0)[0]:
                        raise RuntimeError(f"the notebook's kernel (pid {pid}) could not be stopped")
            finally:
                os.close(pidfd)
                self._worker = None
        if self._private:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None

    async def _async_cleanup_resources(self, restart=False):
        await KernelManager._async_cleanup_resources(self, restart=restart)
        if not restart:
            self.bury()

    cleanup_resources = _async_cleanup_resources


class SandboxedExecute(Execute):
    """nbgrader's Execute, with the notebook's kernel in the sandbox. A cell's ``timeout`` is CPU
    seconds of the kernel's processes, the wall clock only a backstop (sandbox/cputime): on a
    busy server a cell that waits for a core is not a cell that runs too long."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)
        self._cell_started, self._cell_used = time.monotonic(), 0.0

    def _kernel_seconds(self):
        """CPU seconds of everything the notebook's kernel runs (its PID 1 and below); 0.0 before it starts."""
        worker = getattr(getattr(self, "_sandboxed_km", None), "_worker", None)
        return cputime.tree_seconds(worker[0]) if worker else 0.0

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        self._cell_started, self._cell_used = time.monotonic(), self._kernel_seconds()
        return await super().async_execute_cell(cell, cell_index, execution_count, store_history)

    async def _async_handle_timeout(self, timeout, cell=None):
        """Called each time ``timeout`` wall seconds pass without the cell's reply: wait on while
        the kernel has used less than ``timeout`` CPU seconds on it (inside the backstop); else
        interrupt it, and the cell's error says which limit it ran past and by how much."""
        why = cputime.past(timeout, self._kernel_seconds() - self._cell_used, time.monotonic() - self._cell_started)
        if why is None:
            return None
        self.log.error("A cell ran past %s: interrupting the kernel", why)
        await ensure_async(self.km.interrupt_kernel())
        return {"content": {**self.error_on_timeout, "status": "error", "evalue": f"the cell ran past {why}",
                            "traceback": [f"CellTimeoutError: the cell ran past {why}"]}}

    def create_kernel_manager(self):
        self._sandboxed_km = super().create_kernel_manager()
        return self._sandboxed_km

    def preprocess(self, nb, resources=None, km=None):
        try:
            return super().preprocess(nb, resources, km)
        finally:
            # Also when the kernel failed to start or died: nothing it started may outlive this step.
            if getattr(self, "_sandboxed_km", None) is not None:
                self._sandboxed_km.bury()
                self._sandboxed_km = None


def execute_preprocessor():
    """SandboxedExecute where the sandbox exists (Linux); elsewhere nbgrader's own Execute, said loudly."""
    if sys.platform.startswith("linux"):
        return SandboxedExecute
    print(f"WARNING: the notebook's kernel runs WITHOUT the sandbox: it needs Linux, this is {sys.platform}",
          file=sys.stderr)
    return Execute
