"""The grader's side of the sandbox: one child per submission (forked by the zygote), and requests.

Everything a child sends back is data to be checked; a child that hangs, dies or sends
garbage turns into a ``StudentFailure`` for the check that asked, and the next request
starts a fresh child.
"""
import os
import re
import signal
import socket
import time
from dataclasses import dataclass

import torch

from . import cputime, isolate, protocol
from .submission import MAX_TOTAL_SOURCE_BYTES, clean_text

assert MAX_TOTAL_SOURCE_BYTES <= protocol.MAX_JSON // 2  # all sources travel in one JSON frame


# A child's error message, kept whole (the student's file, line and exception) up to this bound.
MESSAGE_LIMIT = 6000


class StudentFailure(Exception):
    """A check could not get an answer from the submission; the text says why, in one line."""


class GraderError(Exception):
    """The grader itself could not work (e.g. the sandbox would not start): not the student's fault."""


class Refused(GraderError):
    """The child would run with the grader's own uid (see isolate.separated): none of the
    submission's code was sent to it. The text says how to get isolation on this machine."""


# What each probe's answer must look like (the child's serve() and ops make exactly this).
# A child runs student code, which can rewrite the child's ops or write frames of its own on
# the channel, so the grader checks every answer before the suites read it: an answer of
# the wrong shape is the student's failure, never a KeyError or TypeError in the grader.
PLAIN = "plain"   # a plan's value: tensors, None, bool, int, float, str, lists, dicts with str keys (bounded)
# per step: its value, what its recorded submodules were given and returned per call, its error,
# the calls it counted, the steps whose value is still what the grader sent (``changed_from``),
# the arguments a call changed (``changed_args``), and where a shape error was raised
_REPLY = {"values": {str: PLAIN}, "records": {str: {str: [[PLAIN]]}}, "errors": {str: str},
          "unchanged?": [str], "changed_args?": {str: [PLAIN]}, "wheres?": {str: dict},
          "injected?": {str: {str: [PLAIN]}}}
_REPLIES = {"replies": [dict]}  # several plans' (``plans``): each checked as a plan's reply


# What the comparisons can handle; anything else (float8, complex, quantized) is a failed check.
COMPARABLE_DTYPES = {torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool, torch.uint8,
                     torch.int8, torch.int16, torch.int32, torch.int64}


_NUMBERS = (bool, int, float, type(None))


def _odd_dtype(value):
    """The first tensor in an answer whose dtype the grader cannot compare, or None."""
    if isinstance(value, torch.Tensor):
        return None if value.dtype in COMPARABLE_DTYPES else value.dtype
    values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in values:  # a loop, numbers and tensors seen without a call: an answer holds thousands of items
        if type(item) is torch.Tensor:
            found = None if item.dtype in COMPARABLE_DTYPES else item.dtype
        else:
            found = None if type(item) in _NUMBERS else _odd_dtype(item)
        if found is not None:
            return found
    return None


def _plain(value, count, depth=0):
    """Is ``value`` plain data within the plan's bounds? ``count``: [values seen so far]."""
    count[0] += 1
    if count[0] > protocol.PLAN_ITEMS:
        return False
    if type(value) in _NUMBERS or isinstance(value, torch.Tensor):
        return True
    if type(value) is str:
        return len(value) <= protocol.PLAN_STRING
    if depth >= protocol.PLAN_DEPTH + 2:   # a record nests two levels more: [calls [inputs..., output]]
        return False
    if type(value) is list:
        return _all_plain(value, count, depth + 1)
    if type(value) is dict:
        return all(type(k) is str for k in value) and _all_plain(value.values(), count, depth + 1)
    return False


def _all_plain(values, count, depth):
    for item in values:  # numbers and tensors counted here, without a call
        if type(item) in _NUMBERS or type(item) is torch.Tensor:
            count[0] += 1
            if count[0] > protocol.PLAN_ITEMS:
                return False
        elif not _plain(item, count, depth):
            return False
    return True


def _conforms(value, spec):
    if spec == PLAIN:
        return _plain(value, [0])
    if isinstance(spec, type):
        return type(value) is spec
    if isinstance(spec, list):
        return isinstance(value, list) and all(_conforms(v, spec[0]) for v in value)
    if not isinstance(value, dict):
        return False
    if str in spec:
        key_spec, value_spec = next(iter(spec.items()))
        return all(_conforms(k, key_spec) and _conforms(v, value_spec) for k, v in value.items())
    for key, sub in spec.items():
        name = key.rstrip("?")
        if name in value:
            if not _conforms(value[name], sub):
                return False
        elif not key.endswith("?"):
            return False
    return True


@dataclass(frozen=True)
class Where:
    """Where the student's code raised a step's exception, as the child reported it and checked
    here: names, numbers and shapes only. ``tensors``: ((local, shape), ...), a shape being a
    tuple of ints, or of such tuples for a list of tensors."""
    module: str
    function: str   # qualified name: Class.method
    line: int
    tensors: tuple


@dataclass(frozen=True)
class Fault:
    """A step that raised in the student's code: its error (as the check's text holds it), where,
    and the grader's own steps up to it (to run the same on the reference)."""
    error: str
    where: Where
    steps: tuple


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_QUALNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.(<locals>|[A-Za-z_][A-Za-z0-9_]*))*")


def _dims(shape):
    if not (type(shape) is list and len(shape) <= protocol.WHERE_DIMS
            and all(type(n) is int and 0 <= n < 1 << 48 for n in shape)):
        raise ValueError
    return tuple(shape)


def _shape(value):
    if type(value) is list and value and all(type(v) is list for v in value):
        if len(value) > protocol.WHERE_ITEMS:
            raise ValueError
        return tuple(_dims(v) for v in value)
    return _dims(value)


def read_where(data, sources):
    """The child's ``where`` as a Where, or None where it is not exactly what our child sends (a
    module of the submission, a line inside it, identifiers, bounded shapes): the submission may
    have forged it, and then the error is reported without it."""
    try:
        if set(data) != {"module", "function", "line", "tensors"} or type(data["tensors"]) is not dict:
            raise ValueError
        module, function, line = data["module"], data["function"], data["line"]
        if not (type(module) is str and module in sources and type(function) is str and len(function) <= 200
                and _QUALNAME.fullmatch(function) and type(line) is int
                and 1 <= line <= sources[module].count("\n") + 1
                and len(data["tensors"]) <= protocol.WHERE_LOCALS
                and all(type(k) is str and _IDENTIFIER.fullmatch(k) for k in data["tensors"])):
            raise ValueError
        return Where(module, function, line, tuple((k, _shape(v)) for k, v in data["tensors"].items()))
    except (ValueError, TypeError):
        return None


def _death_reason(code):
    if code is None:
        return "stopped answering"
    if code >= 128:
        sig = code - 128
        reasons = {signal.SIGKILL: "was killed (memory exhausted, or stopped by the grader)",
                   signal.SIGXCPU: "ran out of CPU time", signal.SIGSEGV: "crashed (segmentation fault)",
                   signal.SIGXFSZ: "wrote more than the file-size limit"}
        return reasons.get(sig, f"was killed by signal {signal.Signals(sig).name if sig in signal.valid_signals() else sig}")
    return f"exited with status {code} (sys.exit or os._exit in the submission?)"


class StudentSession:
    """The ``student`` fixture: runs probes on one submission in sandboxed children."""

    def __init__(self, zygote, sources, *, timeout=5.0, budget=60.0, max_restarts=40, unsafe_same_uid=False,
                 variants=()):
        """``unsafe_same_uid``: serve a child that runs with the grader's own uid (trusted code only).
        ``variants``: (module, first line, last line, text) edits of ``sources``, each a variant of the
        submission that a plan may run instead (``plans``); the child keeps each one's modules apart."""
        self.zygote = zygote
        self.variants = [list(v) for v in variants]
        self.unsafe_same_uid = unsafe_same_uid
        self.refused = None
        self.sources = sources
        self.timeout = timeout
        # The budget counts the children's CPU seconds (a busy machine stretches wall time, not
        # the work); wall time past ``deadline`` only makes the grader look (see _within_budget).
        self.budget = budget
        self.deadline = time.monotonic() + budget
        self.backstop = time.monotonic() + cputime.backstop(budget)
        self.spent = 0.0   # CPU seconds of the session's children that are gone
        self.worker = None  # the pid that runs the submission's code (the keeper's child, or the child)
        self.worker_start = self.last_used = 0.0
        self.restarts_left = max_restarts
        self.deaths = {}
        self.pid = self.sock = None
        self.isolation = None
        self.protections = {}
        self.imported = set()
        self.broken = {}   # module or module.name -> why later requests fail fast
        self.faults = []   # Faults of the steps that raised in the student's code, since the check began
        self.raised = []   # the errors (text) of every step that raised, since the check began

    # -- child lifecycle -------------------------------------------------------------
    def _start(self, memory=None, clean=False):
        """A fresh child; ``memory``: its address space's growth limit; ``clean``: the submission is
        never sent to it (see ``plan``)."""
        if self.refused:
            raise Refused(self.refused)
        if self.restarts_left < 0:
            raise StudentFailure("skipped: the submission's process died or hung too many times")
        self.restarts_left -= 1
        self.pid, self.sock = self.zygote.spawn() if memory is None else self.zygote.spawn(memory=memory)
        try:  # no student code has run yet: a failure here is the grader's
            hello = protocol.recv(self.sock, time.monotonic() + 30)["hello"]
            if "failed" in hello:  # the step that could not be taken (see isolate.start_child)
                raise GraderError(clean_text(hello["failed"]))
            self.isolation = clean_text(hello["isolation"])
            # behind a PID namespace's keeper, its one child; the CPU it used so far is the set-up's
            self.worker = (cputime.children(self.pid) or [self.pid])[0]
            self.worker_start = cputime.seconds(self.worker)
            self.protections = {"held": [clean_text(p) for p in hello["held"]],
                                "unavailable": {clean_text(k): clean_text(v) for k, v in hello["unavailable"].items()}}
            if hello.get("separated") is not True and not self.unsafe_same_uid:
                # Before any of the submission reaches the child: it would share the grader's uid.
                self.refused = isolate.refusal("the submissions' code", self.isolation)
                self._kill()
                raise Refused(self.refused)
            if memory is not None and "limits" not in self.protections["held"]:
                raise GraderError(f"the child's memory limit could not be set "
                                  f"({self.protections['unavailable'].get('limits', 'not said why')})")
            if not clean:
                protocol.send(self.sock, {"op": "load", "sources": self.sources, "variants": self.variants,
                                          "_modules": []}, time.monotonic() + 30)
                protocol.recv(self.sock, time.monotonic() + 30)
        except Refused:
            raise
        except (GraderError, protocol.ChannelError, OSError, KeyError, TypeError, AttributeError) as exc:
            code = self._kill(grace=1.0)
            if isinstance(exc, protocol.ChannelError) and "closed" in str(exc):
                exc = f"it exited with status {code} before saying which step failed"
            raise GraderError(f"the sandboxed child did not start: {exc}") from None

    def vary(self, variants) -> None:
        """From now on the child also holds ``variants`` (see ``__init__``), for ``plans`` to run."""
        self.variants = [list(v) for v in variants]
        if self.pid is None:
            return  # the next request's child loads them
        try:
            deadline = time.monotonic() + self.timeout
            protocol.send(self.sock, {"op": "load", "sources": self.sources, "variants": self.variants,
                                      "_modules": []}, deadline)
            protocol.recv(self.sock, deadline)
        except (protocol.ChannelError, OSError):
            self._kill()  # the next request starts a fresh child, which loads them

    def _kill(self, grace=0.0, wait=True):
        """Stop the child (and everything it started) and collect its exit code: once the zygote
        has collected it, nothing it left runs (isolate.Apart), so nothing of this submission
        meets the next one's child.

        ``grace``: seconds to wait for a child that is already ending, so its own exit code
        (not our SIGKILL) is what gets reported. ``wait``: False where the code is not wanted
        and a PID namespace ends everything of the child with its PID 1 (the zygote collects it
        later; waiting for a namespace's teardown costs ~0.1 s a child)."""
        if self.pid is None:
            return None
        self.last_used = self._worker_seconds()
        self.spent += self.last_used
        code = self.zygote.reap(self.pid, wait=grace) if grace else None
        for kill in (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        if code is None and (wait or "PID namespace" not in self.protections.get("held", ())):
            code = self.zygote.reap(self.pid)
        self.sock.close()
        self.pid = self.sock = None
        return code

    def _worker_seconds(self) -> float:
        """CPU seconds the current child's worker has used since it was set up (0.0 where none)."""
        return cputime.seconds(self.worker) - self.worker_start if self.pid is not None else 0.0

    def cpu_seconds(self) -> float:
        """CPU seconds the session's children have used: those gone and the current one's worker."""
        return self.spent + self._worker_seconds()

    def _within_budget(self) -> bool:
        """Past the budget's wall-clock deadline: whether the children's CPU seconds are still
        inside the budget, and the wall clock inside its backstop."""
        return self.cpu_seconds() < self.budget and time.monotonic() < self.backstop

    def close(self) -> None:
        if self.pid is not None:
            self.sock.close()  # a child at rest exits on hang-up; kill it anyway
            self.sock = socket.socket()
            self._kill(wait=False)

    # -- requests --------------------------------------------------------------------
    def _request(self, steps, *, needs, timeout=None, batch=False, memory=None, clean=False, payload=None):
        """Send one plan; ``needs`` names what it probes ("module" or "module.name");
        ``timeout``: seconds for this probe (default: the session's); ``batch``, ``memory``, ``clean``:
        see ``plan``."""
        timeout = timeout or self.timeout
        module = needs.split(".")[0]
        for key in (module, needs):
            if key in self.broken:
                raise StudentFailure(self.broken[key])
        if time.monotonic() > self.deadline and not self._within_budget():
            raise StudentFailure(f"skipped: the submission used up its time budget for grading ({self.budget:g} s "
                                 "of CPU time, or the wall-clock backstop)")
        if memory is None and not clean:
            if self.pid is None:
                self._start()
            return self._exchange(steps, needs, module, timeout, batch, payload=payload)
        # A child of its own, started with the limit (or clean) and stopped after; the session's own waits.
        kept, restarts, self.pid, self.sock = (self.pid, self.sock, self.worker, self.worker_start), \
            self.restarts_left, None, None
        spent = self.spent
        try:
            self._start(memory, clean)
            return self._exchange(steps, needs, module, timeout, batch, limited=True)
        finally:
            if self.pid is not None:
                self.sock.close()
                self.sock = socket.socket()
                self._kill(wait=False)
            self.restarts_left = restarts  # started by the grader's choice, not after a death
            self.spent = spent if clean else self.spent  # a clean child's work is the grader's
            self.pid, self.sock, self.worker, self.worker_start = kept

    def _exchange(self, steps, needs, module, timeout, batch, limited=False, payload=None):
        """The plan's round trip with the current child; a child that dies, hangs or sends
        garbage becomes the StudentFailure that says so (``limited``: in a child of the plan's
        own, which marks nothing broken: the session's next child is another). ``payload``: the
        request, where it is not this plan (``plans``)."""
        shape = _REPLY if payload is None else _REPLIES
        payload = payload or {"op": "plan", "steps": steps, "_modules": sorted(self.sources)}
        # The child runs from the start of the send: ``timeout`` is CPU seconds of the submission's
        # process for the round trip, the wall clock only a backstop (cputime), so a busy machine
        # gives the same verdict as an idle one.
        started, used_before = time.monotonic(), self._worker_seconds()
        try:
            protocol.send(self.sock, payload, started + cputime.backstop(timeout))
            cputime.wait_readable(self.sock, self._worker_seconds, timeout, used_before, started)
            reply = protocol.recv(self.sock, time.monotonic() + timeout)  # the answer, once it has begun
        except (protocol.ChannelError, OSError, cputime.Exceeded) as exc:
            timed_out = isinstance(exc, (protocol.ChannelTimeout, cputime.Exceeded))
            code = self._kill(grace=0.0 if timed_out else 1.0)
            if isinstance(exc, cputime.Exceeded):
                reason = f"{needs} did not finish within {exc}"
            elif timed_out:
                reason = f"{needs} did not finish within {timeout:g} s (infinite loop?)"
            elif isinstance(exc, protocol.ChannelError) and "closed" not in str(exc):
                reason = f"the submission's process sent garbage to the grader while running {needs} ({exc})"
            else:
                reason = f"the submission's process {_death_reason(code)} while running {needs}"
            if batch:  # it costs the submission nothing: its probes run again one at a time (see plan)
                self.deadline += time.monotonic() - started
                self.backstop += time.monotonic() - started
                self.spent -= self.last_used - used_before
                self.restarts_left += 1
                raise StudentFailure(reason) from None
            if limited:
                raise StudentFailure(reason) from None
            if timed_out:
                self._mark_broken(module, needs, reason)
                raise StudentFailure(reason) from None
            # A fresh child is cheap, so one death costs only this check; the same death twice
            # fails that probe's later checks fast.
            self.deaths[needs] = self.deaths.get(needs, 0) + 1
            if self.deaths[needs] >= 2 or module not in self.imported:
                self._mark_broken(module, needs, reason)
            raise StudentFailure(reason) from None
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            self._kill()
            raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
        imported = reply.get("imported")
        if isinstance(imported, list):
            self.imported.update(n for n in imported if isinstance(n, str))
        if not reply["ok"]:
            raise StudentFailure(clean_text(reply.get("error", "failed"), limit=MESSAGE_LIMIT))
        if not _conforms(reply, shape):
            # Our own child never sends this: the submission tampered with the channel. The
            # channel may be out of step now, so the next check starts a fresh child.
            self._kill()
            raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
        return reply

    def _mark_broken(self, module, needs, reason):
        # Dying before the module finished importing will happen again: fail its checks fast.
        self.broken[needs if module in self.imported else module] = reason

    def fault(self, text):
        """The latest Fault whose error the failure ``text`` holds, or None."""
        return next((f for f in reversed(self.faults) if f.error in text), None)

    def plan(self, steps, *, needs=None, timeout=None, batch=False, memory=None, clean=False):
        """Run ``steps`` in order in the child, in one round trip; returns a ``Plan``.

        Each step is a dict naming its result ``let`` and doing one thing:
        ``call`` (``module.name``, an earlier step's name, or a dotted attribute of either; ``torch.…``:
        torch's own in the child, e.g. ``torch.optim.AdamW``, whatever the student's modules import) with
        ``args``/``kwargs``, ``data`` (the grader's plain data, to pass by ``$ref`` and read back
        after a call that may change it), ``iterate`` (the first ``limit`` items), ``len``, ``attr``
        (a dotted attribute), ``backward`` (of sum(that tensor * ``weight``)), ``grads`` (a module's
        parameters' gradients by name, None where none), ``parameters`` (its parameters by name),
        ``unregistered`` (the plain tensors it and its submodules hold as attributes, by dotted name)
        or ``describe`` (its class, parameter and buffer shapes, state_dict keys, unregistered
        tensors' shapes, and a summary of each dotted attribute in ``attrs``: see child._summary),
        ``read_file`` (a path: the file's bytes as a uint8 tensor; ``remove``: the file removed
        afterwards), ``write_file`` (a path, written with ``bytes``, a 1-D uint8 tensor) or ``buffer``
        (such a tensor, or a ``$ref`` to one, as a file object in memory: ``io.BytesIO``).
        Options of ``call``: ``seed`` (torch.manual_seed first; any step), ``params`` (copied into
        the module by name, strictly; ``params_keep``: own names of parameters it may hold beyond
        them, left as they are), ``params_digest`` (instead of ``params``: the module must hold
        parameters of exactly these digests, else the step fails with protocol.PARAMS_DIFFER),
        ``train`` (its mode), ``grad`` (run with autograd; default off), ``stand_in`` ({dotted
        submodule: {"weight", "bias"}}: each replaced by an nn.Linear with those values, before
        ``params`` are copied in; a stand-in's own parameters are then among the module's),
        ``transpose_buffers`` (every buffer of that own name gets its last two dimensions swapped),
        ``reload`` ({earlier step: [params, ...]}: copied into that module before its 2nd, 3rd, ...
        call during this call, None leaving one as it is: a witness that a cache keeps what was
        computed with the earlier weights),
        ``replace`` ({module.name: module.name}: the first set to the second's object during the call,
        and put back after it: a stand-in the grader owns for a lower piece the function calls; a
        module missing from the submission, or broken, is left out),
        ``inject`` ({"module.Name": spec}: while the call runs, that name, wherever the submission's
        modules bind it, is a stand-in of the grader's that draws nothing: calling it gives an
        nn.Linear of spec's ``weight``/``bias``, ``torch.nn.<spec["torch"]>(**spec["kwargs"])``, or a
        copy of spec's ``returns``; ``Plan.injected[step][name]`` lists each call's [k, args, kwargs],
        k counting the calls of all the step's stand-ins in turn),
        ``record`` (dotted submodule names whose every call's [inputs..., output] comes back: what
        the submission's own hooks saw, for feedback, never for credit), ``what`` (what the call, or
        a ``backward``, is called in its
        errors), ``result`` (the value must be a function's answer, tensors or numbers, else
        "{result} returned ..."; of a ``backward``: what made its tensor, in its errors),
        ``return`` (send the value back; any step), ``changed_from`` (with ``return``: an earlier
        ``data`` step holding one tensor; the value travels back only where it is not exactly that
        tensor, else ``Plan.values`` holds the grader's own tensor of that step and ``Plan.unchanged``
        names the step: a child that claims so gets back only what it was sent), ``changed_args``
        (of ``call``: ``Plan.changed_args[step]`` lists, per argument, None where it was not a
        tensor or is still exactly the one sent, else the tensor as the call left it), ``printed``
        (of ``call``: ``Plan.printed[step]`` is what the call wrote to ``sys.stdout``, its first
        protocol.PLAN_STRING characters).
        Arguments hold plain data and ``{"$ref": step}`` for an earlier step's object; never code.
        ``needs`` names what the plan probes (default: its first ``module.name`` call).
        ``batch``: the steps are several probes' that the caller runs again one at a time where
        the child hangs or dies (a loop of checks might have stopped before the probe that hung):
        that then marks nothing broken and counts no death; the probe run alone does.
        ``memory``: the steps run in a fresh child of their own whose address space may grow by at
        most this many bytes beyond what it maps when it starts (RLIMIT_AS, set by the sandbox
        before any of the submission runs there: a bound the kernel holds, whatever the child
        says); a step that needs more fails (MemoryError or an allocator's error in its error),
        or the child dies of it (the plan's StudentFailure); that child is stopped after the plan,
        marks nothing broken, and the session's own child serves the next plan.
        ``clean``: the steps run in a fresh child of their own that never gets the submission (a
        ``call`` reaches torch's own objects there: ``torch.load``), stopped after the plan: where the
        grader's own evidence is made from what the submission left (the file it saved), on torch's
        real objects, away from everything the submission's code could have changed.
        A step that raised a shape error in the submission's code also leaves a ``Fault`` in
        ``faults`` where the child's report of it is well formed (``read_where``)."""
        steps, needs = _checked(steps, needs)
        if memory is not None and not (type(memory) is int and memory > 0):
            raise ValueError(f"plan: memory must be a positive number of bytes, not {memory!r}")
        return self._read(self._request(steps, needs=needs, timeout=timeout, batch=batch, memory=memory,
                                        clean=clean), steps, needs)

    def plans(self, requests, *, timeout=None) -> list:
        """Several plans in one round trip, each ``(steps, needs, variant)``: ``variant`` an index
        of the session's ``variants`` (None: the sources as sent). Returns, per plan, its ``Plan``
        or the ``StudentFailure`` that says why it has none; a child that dies, hangs or sends
        garbage fails them all. Every answer is checked as ``plan``'s is."""
        first = requests[0]
        shared = all(steps is first[0] and needs == first[1] for steps, needs, _ in requests)  # one plan, many variants
        if shared:
            checked = _checked(first[0], first[1])
            requests = [(*checked, variant) for _, _, variant in requests]
        else:
            requests = [(*_checked(steps, needs), variant) for steps, needs, variant in requests]
        payload = {"op": "plans", "_modules": sorted(self.sources),
                   "plans": [{"variant": variant} if shared else {"steps": steps, "variant": variant}
                             for steps, _, variant in requests]}
        if shared:  # sent (and read) once, not once a variant
            payload["steps"] = requests[0][0]
        try:
            reply = self._request([], needs=requests[0][1], timeout=timeout, batch=True, payload=payload)
            replies = reply.get("replies")
            if not (isinstance(replies, list) and len(replies) == len(requests)):
                self._kill()
                raise StudentFailure("the submission's process sent a malformed answer")
        except StudentFailure as exc:
            return [exc] * len(requests)
        out = []
        for (steps, needs, _), one in zip(requests, replies):
            try:
                if not (isinstance(one, dict) and isinstance(one.get("ok"), bool)):
                    raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
                if not one["ok"]:
                    raise StudentFailure(clean_text(one.get("error", "failed"), limit=MESSAGE_LIMIT))
                if not _conforms(one, _REPLY):
                    raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
                out.append(self._read(one, steps, needs))
            except StudentFailure as exc:
                out.append(exc)
        return out

    def _read(self, reply, steps, needs):
        """The ``Plan`` of ``reply``, the child's answer to ``steps``, once checked."""
        names = [step["let"] for step in steps]
        values, records, errors = reply["values"], reply["records"], reply["errors"]
        unchanged = set(reply.get("unchanged", ()))
        changed_from = {step["let"]: step["changed_from"] for step in steps if "changed_from" in step}
        changed_args = reply.get("changed_args", {})
        arity = {step["let"]: len(step.get("args", ())) for step in steps if step.get("changed_args")}
        printed = reply.get("printed", {})
        printing = {step["let"] for step in steps if step.get("printed")}
        injected = reply.get("injected", {})
        injecting = {step["let"]: set(step["inject"]) for step in steps if step.get("inject")}
        returned = {step["let"] for step in steps if step.get("return")}
        recording = {step["let"]: set(step.get("record", ())) for step in steps if "record" in step}
        if not (set(errors) <= set(names) and set(values) <= returned and not set(values) & set(errors)
                and unchanged <= set(changed_from) - set(values) - set(errors)
                and returned <= set(values) | set(errors) | unchanged and set(records) <= set(recording) - set(errors)
                and all(set(records[name]) == recording[name] for name in records)
                and set(recording) - set(errors) <= set(records)
                and set(changed_args) == set(arity) - set(errors)
                and all(len(changed_args[name]) == arity[name] for name in changed_args)
                and set(printed) == printing - set(errors)
                and set(injected) == set(injecting) - set(errors)
                and all(set(calls) == injecting[name] for name, calls in injected.items())
                and all(type(text) is str and len(text) <= protocol.PLAN_STRING for text in printed.values())):
            self._kill()  # our child sends exactly one answer per step: the channel was tampered with
            raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
        errors = {name: clean_text(why, limit=MESSAGE_LIMIT) for name, why in errors.items()}
        self.raised.extend(errors.values())
        for name, data in reply.get("wheres", {}).items():
            where = read_where(data, self.sources) if name in errors else None
            if where is not None and len(self.faults) < 64:
                self.faults.append(Fault(errors[name], where, tuple(steps[:names.index(name) + 1])))
        answers = {step["let"] for step in steps if step.get("result")}  # a function's answer
        for name, value in [*values.items(), *records.items(), *changed_args.items()]:
            dtype = _odd_dtype(value)
            if dtype is not None:
                errors[name] = (f"{needs if name in answers else name} {'returned' if name in answers else 'holds'}"
                                f" a tensor of dtype {dtype}, which cannot be compared:"
                                " return the dtype of its inputs (float32)")
                values.pop(name, None)
                records.pop(name, None)
                changed_args.pop(name, None)
        sent = {step["let"]: step["data"] for step in steps if "data" in step}
        values.update({name: sent[changed_from[name]] for name in unchanged})  # the grader's own, never the child's
        return Plan(values, records, errors, unchanged, changed_args, printed, injected)


def _checked(steps, needs):
    """``steps`` copied and checked (``_check_steps``), and what they probe (``needs``, or their
    first ``module.name`` call)."""
    steps = [dict(step) for step in steps]
    _check_steps(steps)
    names = [step["let"] for step in steps]
    if needs is None:
        needs = next((step["call"] for step in steps if "call" in step
                      and step["call"].split(".")[0] not in names and "." in step["call"]), "plan")
    return steps, needs


_ACTIONS = ("call", "iterate", "len", "attr", "data", "backward", "grads", "parameters", "describe", "unregistered",
            "read_file", "write_file", "buffer")
_OPTIONS = {"let", "args", "kwargs", "seed", "params", "params_keep", "params_digest", "train", "grad", "record",
            "return", "limit", "weight", "stand_in", "transpose_buffers", "what", "result",
            "attrs", "changed_from", "changed_args", "reload", "printed", "replace", "remove", "bytes", "inject"}
_ACTION_SET, _KEYS = set(_ACTIONS), _OPTIONS | set(_ACTIONS)
# the actions each option goes with (any step may have let, seed and return)
_GOES_WITH = {**{key: ("call",) for key in _OPTIONS - {"let", "seed", "return", "changed_from"}},
              "limit": ("iterate",), "weight": ("backward",), "attrs": ("describe",), "what": ("call", "backward"),
              "remove": ("read_file",), "bytes": ("write_file",),
              "result": ("call", "backward")}


def _names(value):
    return isinstance(value, (list, tuple)) and all(isinstance(n, str) and n for n in value)


def _text(value):
    return isinstance(value, str) and bool(value)


def _stand_ins(value):
    return value is None or isinstance(value, dict) and all(
        isinstance(k, str) and k and isinstance(v, dict) and set(v) <= {"weight", "bias"}
        and isinstance(v.get("weight"), torch.Tensor) and v["weight"].dim() == 2
        and (v.get("bias") is None or isinstance(v["bias"], torch.Tensor)) for k, v in value.items())


# What each option must hold, and the words that say so; the plain data in args, kwargs, weight,
# data and params_digest is checked on its own (_check_steps.data).
_RULES = {
    "params_keep": (_names, "must list names"), "attrs": (_names, "must list names"),
    "record": (_names, "must list dotted submodule names"),
    "what": (_text, "must be a str"), "result": (_text, "must be a str"), "transpose_buffers": (_text, "must be a str"),
    "args": (lambda v: isinstance(v, (list, tuple)), "must be a list"),
    "kwargs": (lambda v: isinstance(v, dict), "must be a dict"),
    "params_digest": (lambda v: v is None or isinstance(v, dict), "must map names to digests"),
    "limit": (lambda v: type(v) is int and 0 <= v <= protocol.PLAN_LIMIT, f"must be an int up to {protocol.PLAN_LIMIT}"),
    "seed": (lambda v: v is None or type(v) is int, "must be an int"),
    "changed_args": (lambda v: type(v) is bool, "must be True or False"),
    "printed": (lambda v: type(v) is bool, "must be True or False"),
    "remove": (lambda v: type(v) is bool, "must be True or False"),
    "bytes": (lambda v: type(v) is torch.Tensor and v.dtype == torch.uint8 and v.dim() == 1, "must be a 1-D uint8 tensor"),
    "replace": (lambda v: isinstance(v, dict) and all(isinstance(k, str) and k.count(".") == 1 and isinstance(src, str)
                                                      and src.count(".") == 1 for k, src in v.items()),
                "must map module.name to module.name"),
    "params": (lambda v: v is None or isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(t, torch.Tensor) for k, t in v.items()), "must map names to tensors"),
    "stand_in": (_stand_ins, "must map submodule names to {'weight': 2-D tensor, 'bias': tensor or None}"),
    "inject": (lambda v: isinstance(v, dict) and all(
        _text(k) and "." in k and isinstance(spec, dict) and (
            _stand_ins({k: spec}) or set(spec) == {"returns"}
            or (set(spec) <= {"torch", "kwargs"} and _text(spec.get("torch")) and isinstance(spec.get("kwargs", {}), dict)))
        for k, spec in v.items()), "must map module.Name to a linear map, {'torch': name, 'kwargs': {}} or {'returns': data}"),
    "reload": (lambda v: isinstance(v, dict) and all(_text(k) and isinstance(sets, list) and all(
        p is None or _RULES["params"][0](p) for p in sets) for k, sets in v.items()),
        "must map earlier steps to lists of params (or None)"),
}
_DATA = ("args", "kwargs", "weight", "data", "params_digest", "buffer")
_SCALARS = (bool, int, float, str, type(None))


def _check_steps(steps):
    """The suite's plan is well formed (a mistake here is the grader's, so a ValueError)."""
    earlier, sent = set(), set()  # sent: the data steps that hold one tensor

    def data(value, where, depth=0) -> None:
        """``where``: the words that place it, for the message."""
        if type(value) in _SCALARS or isinstance(value, torch.Tensor):
            return
        if depth > protocol.PLAN_DEPTH:
            raise ValueError(f"{' '.join(where)}: nested too deep")
        if isinstance(value, dict) and set(value) == {"$ref"}:
            if value["$ref"] not in earlier:
                raise ValueError(f"{' '.join(where)}: $ref {value['$ref']!r} names no earlier step")
        elif isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str):
                    raise ValueError(f"{' '.join(where)}: dict keys must be str")
                data(v, where, depth + 1)
        elif isinstance(value, (list, tuple)):
            for v in value:  # a number or a tensor is plain at any depth: passed without a call
                if type(v) not in _SCALARS and type(v) is not torch.Tensor:
                    data(v, where, depth + 1)
        else:
            raise ValueError(f"{' '.join(where)}: a {type(value).__name__} is not plain data")

    for step in steps:
        name = step.get("let")
        if not isinstance(name, str) or not name.isidentifier() or name in earlier:
            raise ValueError(f"plan step {step!r}: `let` must be a new identifier")
        actions, unknown = step.keys() & _ACTION_SET, step.keys() - _KEYS
        if len(actions) != 1 or unknown:
            raise ValueError(f"plan step {name}: exactly one of {', '.join(_ACTIONS)}"
                             + (f"; unknown keys {sorted(unknown)}" if unknown else ""))
        action, = actions
        if action == "buffer" and not (_RULES["bytes"][0](step[action]) or isinstance(step[action], dict)):
            raise ValueError(f"plan step {name}: `buffer` must be a 1-D uint8 tensor or a $ref")
        elif action not in ("data", "buffer") and not _text(step[action]):
            raise ValueError(f"plan step {name}: `{action}` must name a step or module.name")
        for key, value in step.items():
            if key in _GOES_WITH and action not in _GOES_WITH[key]:
                raise ValueError(f"plan step {name}: `{key}` goes with `{'` or `'.join(_GOES_WITH[key])}`")
            if key in _RULES and not _RULES[key][0](value):
                raise ValueError(f"plan step {name}: `{key}` {_RULES[key][1]}")
            if key in _DATA:
                data(value, ("plan step", name, key))
        if action == "write_file" and "bytes" not in step:
            raise ValueError(f"plan step {name}: `write_file` goes with `bytes`")
        if "changed_from" in step and not (step.get("return") and step["changed_from"] in sent):
            raise ValueError(f"plan step {name}: `changed_from` goes with `return` and names an earlier `data` "
                             "step holding one tensor")
        if "record" in step:
            step["record"] = list(step["record"])
        earlier.add(name)
        if type(step.get("data")) is torch.Tensor:
            sent.add(name)


class _StepValues(dict):
    """Per step: what it sent back. Reading a step that failed raises its error (the first
    failure, where it was not run because another step failed)."""

    def __init__(self, values, errors):
        super().__init__(values)
        self.errors = errors

    def __missing__(self, name):
        if name not in self.errors:
            raise KeyError(f"plan step {name!r} sent nothing back (ask with return=True, record=[...])")
        raise StudentFailure(_root_cause(name, self.errors))


def _root_cause(name, errors):
    seen = set()
    while name in errors and name not in seen:
        seen.add(name)
        match = re.fullmatch(r"not run: (\w+) failed", errors[name])
        if not match or match.group(1) not in errors:
            return errors[name]
        name = match.group(1)
    return errors[name]


class Plan:
    """A plan's answer: ``values[step]`` (what a step with ``return`` gave), ``records[step]``
    ({submodule: [[inputs..., output] per call]}: feedback only), ``errors`` ({step: one line}),
    ``unchanged`` (the ``changed_from`` steps whose value is the grader's own tensor),
    ``changed_args`` ({step: per argument, None or the tensor the call left}), ``printed``
    ({step: what the call wrote to sys.stdout}), ``injected`` ({step: {name: [[k, args, kwargs] per
    call of the grader's stand-in]}}: what the submission passed it, in which turn); reading a failed step's value, record, changed
    arguments or printed text raises its StudentFailure."""

    def __init__(self, values, records, errors, unchanged=(), changed_args=None, printed=None, injected=None):
        self.values = _StepValues(values, errors)
        self.records = _StepValues(records, errors)
        self.errors = errors
        self.unchanged = set(unchanged)
        self.changed_args = _StepValues(changed_args or {}, errors)
        self.printed = _StepValues(printed or {}, errors)
        self.injected = _StepValues(injected or {}, errors)

    def failed(self, name):
        """The reason ``name`` failed (the first failure it depended on), or None."""
        return _root_cause(name, self.errors) if name in self.errors else None
