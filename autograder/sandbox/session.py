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

import torch

from . import isolate, protocol
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
VALUE = "value"   # a tensor, a number, or a (nested) list of them: what _as_data lets through
INDEX = "index"   # a str of decimal digits: the position of a call in a batch
MAYBE_VALUE = "value or None"  # None where that call failed
PLAIN = "plain"   # a plan's value: tensors, None, bool, int, float, str, lists, dicts with str keys (bounded)
_REPLY = {
    "call": {"value": VALUE},
    "calls": {"values": [MAYBE_VALUE], "errors": {INDEX: str}, "args_after?": [[MAYBE_VALUE]]},
    "module": {"outputs": [VALUE], "state?": {str: torch.Tensor}, "grads?": {str: torch.Tensor},
               "inputs_after?": [VALUE], "sub_outputs?": {str: [VALUE]}, "causal_sdpa?": int,
               "info": {"type": str, "params": {str: [int]}, "buffers": {str: ([int], str)},
                        "state_keys": [str], "attrs": {str: int}, "heads?": [str], "dropout?": float,
                         "mask?": {"shape": [int], "dtype": str}, "tensors?": {str: [int]}}},
    "transfer": {"params": {str: torch.Tensor}, "v2_params": {str: torch.Tensor}, "v1_plain?": {str: torch.Tensor},
                 "v1_outputs?": [VALUE], "v2_outputs?": [VALUE]},
    # per step: its value, what its recorded submodules were given and returned per call, its error
    "plan": {"values": {str: PLAIN}, "records": {str: {str: [[PLAIN]]}}, "errors": {str: str}},
}


# What the comparisons can handle; anything else (float8, complex, quantized) is a failed check.
COMPARABLE_DTYPES = {torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool, torch.uint8,
                     torch.int8, torch.int16, torch.int32, torch.int64}


def _odd_dtype(value):
    """The first tensor in an answer whose dtype the grader cannot compare, or None."""
    if isinstance(value, torch.Tensor):
        return None if value.dtype in COMPARABLE_DTYPES else value.dtype
    values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((d for d in map(_odd_dtype, values) if d is not None), None)


def _plain(value, count, depth=0):
    """Is ``value`` plain data within the plan's bounds? ``count``: [values seen so far]."""
    count[0] += 1
    if count[0] > protocol.PLAN_ITEMS:
        return False
    if value is None or type(value) in (bool, int, float) or isinstance(value, torch.Tensor):
        return True
    if type(value) is str:
        return len(value) <= protocol.PLAN_STRING
    if depth >= protocol.PLAN_DEPTH + 2:   # a record nests two levels more: [calls [inputs..., output]]
        return False
    if type(value) is list:
        return all(_plain(v, count, depth + 1) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v, count, depth + 1) for k, v in value.items())
    return False


def _conforms(value, spec, depth=0):
    if spec == PLAIN:
        return _plain(value, [0])
    if spec == MAYBE_VALUE:
        return value is None or _conforms(value, VALUE, depth)
    if spec == VALUE:
        if isinstance(value, list):
            return depth < 4 and all(_conforms(v, VALUE, depth + 1) for v in value)
        return isinstance(value, torch.Tensor) or type(value) in (int, float, bool)
    if spec is float:
        return type(value) in (int, float)
    if spec is INDEX:
        return type(value) is str and value.isascii() and value.isdigit() and len(value) < 8
    if isinstance(spec, type):
        return type(value) is spec or (spec is torch.Tensor and isinstance(value, torch.Tensor))
    if isinstance(spec, list):
        return isinstance(value, list) and all(_conforms(v, spec[0], depth) for v in value)
    if isinstance(spec, tuple):
        return (isinstance(value, list) and len(value) == len(spec)
                and all(_conforms(v, s, depth) for v, s in zip(value, spec)))
    if not isinstance(value, dict):
        return False
    if str in spec or INDEX in spec:
        key_spec, value_spec = next(iter(spec.items()))
        return all(_conforms(k, key_spec, depth) and _conforms(v, value_spec, depth) for k, v in value.items())
    for key, sub in spec.items():
        name = key.rstrip("?")
        if name in value:
            if not _conforms(value[name], sub, depth):
                return False
        elif not key.endswith("?"):
            return False
    return True


class Answer(dict):
    """A dict from the child: a key the submission's answer lacks fails the check, in one line."""

    where = "answer"

    def __missing__(self, key):
        raise StudentFailure(f"{clean_text(repr(key), 80)} is missing from the submission's {self.where}")


def _answer(value, where="answer"):
    if isinstance(value, dict):
        answer = Answer({k: _answer(v, k) for k, v in value.items()})
        answer.where = {"buffers": "buffers", "params": "parameters", "state": "state_dict",
                        "attrs": "attributes", "info": "module"}.get(where, "answer")
        return answer
    if isinstance(value, list):
        return [_answer(v, where) for v in value]
    return value


class _Answers(list):
    """Answers of a batch of calls; a failed call's entry raises its reason when read."""

    def __init__(self, values, errors):
        super().__init__(values)
        self.errors = errors

    def __getitem__(self, index):
        if index in self.errors:
            raise StudentFailure(self.errors[index])
        return super().__getitem__(index)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


# Parameters this large are not sent where the child can draw them itself: it builds the module
# after the seed the reference was built after and keeps its own draw where the digests are the
# reference's (GPT-2 small's attention, 9 MB, cost ~25 ms a request to encode, send and load).
DRAW_IN_CHILD = 1 << 20
_DIGESTS = {}   # (id, version) -> (the tensor, kept alive so that its id stays its own; its digest)


def _digests(params):
    found = {}
    for name, tensor in params.items():
        key = (id(tensor), tensor._version)
        if key not in _DIGESTS:
            _DIGESTS[key] = (tensor, protocol.digest(tensor))
        found[name] = _DIGESTS[key][1]
    return found


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

    def __init__(self, zygote, sources, *, timeout=5.0, budget=60.0, max_restarts=40, unsafe_same_uid=False):
        """``unsafe_same_uid``: serve a child that runs with the grader's own uid (trusted code only)."""
        self.zygote = zygote
        self.unsafe_same_uid = unsafe_same_uid
        self.refused = None
        self.sources = sources
        self.timeout = timeout
        self.deadline = time.monotonic() + budget
        self.restarts_left = max_restarts
        self.deaths = {}
        self.pid = self.sock = None
        self.isolation = None
        self.protections = {}
        self.imported = set()
        self.broken = {}   # module or module.name -> why later requests fail fast

    # -- child lifecycle -------------------------------------------------------------
    def _start(self):
        if self.refused:
            raise Refused(self.refused)
        if self.restarts_left < 0:
            raise StudentFailure("skipped: the submission's process died or hung too many times")
        self.restarts_left -= 1
        self.pid, self.sock = self.zygote.spawn()
        try:  # no student code has run yet: a failure here is the grader's
            hello = protocol.recv(self.sock, time.monotonic() + 30)["hello"]
            if "failed" in hello:  # the step that could not be taken (see isolate.start_child)
                raise GraderError(clean_text(hello["failed"]))
            self.isolation = clean_text(hello["isolation"])
            self.protections = {"held": [clean_text(p) for p in hello["held"]],
                                "unavailable": {clean_text(k): clean_text(v) for k, v in hello["unavailable"].items()}}
            if hello.get("separated") is not True and not self.unsafe_same_uid:
                # Before any of the submission reaches the child: it would share the grader's uid.
                self.refused = isolate.refusal("the submissions' code", self.isolation)
                self._kill()
                raise Refused(self.refused)
            protocol.send(self.sock, {"op": "load", "sources": self.sources, "_modules": []}, time.monotonic() + 30)
            protocol.recv(self.sock, time.monotonic() + 30)
        except Refused:
            raise
        except (GraderError, protocol.ChannelError, OSError, KeyError, TypeError, AttributeError) as exc:
            code = self._kill(grace=1.0)
            if isinstance(exc, protocol.ChannelError) and "closed" in str(exc):
                exc = f"it exited with status {code} before saying which step failed"
            raise GraderError(f"the sandboxed child did not start: {exc}") from None

    def _kill(self, grace=0.0, wait=True):
        """Stop the child (and everything it started) and collect its exit code.

        ``grace``: seconds to wait for a child that is already ending, so its own exit code
        (not our SIGKILL) is what gets reported. ``wait``: False where the code is not
        wanted (the zygote collects it later)."""
        if self.pid is None:
            return None
        code = self.zygote.reap(self.pid, wait=grace) if grace else None
        for kill in (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        if code is None and wait:
            code = self.zygote.reap(self.pid)
        self.sock.close()
        self.pid = self.sock = None
        return code

    def close(self):
        if self.pid is not None:
            self.sock.close()  # a child at rest exits on hang-up; kill it anyway
            self.sock = socket.socket()
            self._kill(wait=False)

    # -- requests --------------------------------------------------------------------
    def request(self, op, *, needs, timeout=None, **payload):
        """Send one probe; ``needs`` names what it exercises ("module" or "module.name");
        ``timeout``: seconds for this probe (default: the session's)."""
        timeout = timeout or self.timeout
        module = needs.split(".")[0]
        for key in (module, needs):
            if key in self.broken:
                raise StudentFailure(self.broken[key])
        if time.monotonic() > self.deadline:
            raise StudentFailure("skipped: the submission used up its time budget for grading")
        if self.pid is None:
            self._start()
        payload.update(op=op, _modules=sorted(self.sources))
        try:  # the child runs from the start of the send: one deadline for the round trip
            deadline = time.monotonic() + timeout
            protocol.send(self.sock, payload, deadline)
            reply = protocol.recv(self.sock, deadline)
        except protocol.ChannelTimeout:
            self._kill()
            reason = f"{needs} did not finish within {timeout:g} s (infinite loop?)"
            self._mark_broken(module, needs, reason)
            raise StudentFailure(reason) from None
        except (protocol.ChannelError, OSError) as exc:
            code = self._kill(grace=1.0)
            reason = f"the submission's process {_death_reason(code)} while running {needs}"
            if isinstance(exc, protocol.ChannelError) and "closed" not in str(exc):
                reason = f"the submission's process sent garbage to the grader while running {needs} ({exc})"
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
            if reply.get("stage") == protocol.PARAMS_DIFFER and payload.get("params_digest") is not None:
                return None  # see module(): the parameters are sent after all
            raise StudentFailure(clean_text(reply.get("error", "failed"), limit=MESSAGE_LIMIT))
        expected = {"module": "inputs", "calls": "calls"}.get(op)
        if not _conforms(reply, _REPLY[op]) or (
                expected and len(reply["outputs" if op == "module" else "values"]) != len(payload[expected])):
            # Our own child never sends this: the submission tampered with the channel. The
            # channel may be out of step now, so the next check starts a fresh child.
            self._kill()
            raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
        dtype = _odd_dtype(reply) if op != "plan" else None  # a plan's steps are checked one by one
        if dtype is not None:
            raise StudentFailure(f"{needs} returned a tensor of dtype {dtype}, which cannot be compared:"
                                 " return the dtype of its inputs (float32)")
        return _answer(reply)

    def _mark_broken(self, module, needs, reason):
        # Dying before the module finished importing will happen again: fail its checks fast.
        self.broken[needs if module in self.imported else module] = reason

    def call(self, module, name, *args, seed=None, **kwargs):
        """Return value of ``module.name(*args, **kwargs)`` in the child."""
        return self.request("call", needs=f"{module}.{name}", module=module, name=name,
                            args=list(args), kwargs=kwargs, seed=seed)["value"]

    def calls(self, module, name, calls):
        """``module.name(*args)`` for each ``args`` in ``calls``, in one round trip.

        Returns the answers in order; reading a case whose call failed raises that
        case's StudentFailure, so a check fails on its first wrong case, whatever the cause.
        ``.args_after``: per call, each tensor argument the call changed, as it is afterwards (else None)."""
        reply = self.request("calls", needs=f"{module}.{name}", module=module, name=name,
                             calls=[list(args) for args in calls])
        answers = _Answers(reply["values"], {int(k): clean_text(v, limit=MESSAGE_LIMIT) for k, v in reply["errors"].items()})
        answers.args_after = reply.get("args_after", [])
        return answers

    def module(self, module, name, *args, inputs=(), params=None, init_seed=None, dtype=None,
               train=False, seed=None, want_state=False, submodules=(), transpose_masks=False,
               grad_weights=None, params_seed=None, **kwargs):
        """Build ``module.name(*args, **kwargs)`` in the child and run it on each input.

        The options after ``want_state`` are op_module's (child.py): other submodules run on the
        same inputs, the mask buffers transposed, gradients of sum(output * grad_weights[i]).
        ``params_seed``: the seed the reference was built after, where ``params`` are its; large
        ones are then drawn in the child after that seed, and sent only where its draw differs."""
        request = dict(needs=f"{module}.{name}" + (".forward" if inputs else ""), module=module, name=name,
                       args=list(args), kwargs=kwargs, inputs=list(inputs), dtype=dtype, train=train, seed=seed,
                       want_state=want_state, submodules=list(submodules), transpose_masks=transpose_masks,
                       grad_weights=grad_weights)
        if (params is not None and params_seed is not None and init_seed is None
                and sum(v.nbytes for v in params.values()) >= DRAW_IN_CHILD):
            reply = self.request("module", **request, params=None, init_seed=params_seed,
                                 params_digest=_digests(params))
            if reply is not None:
                return reply
        return self.request("module", **request, params=params, init_seed=init_seed)

    def transfer(self, d_in, d_out, init_seed, inputs=()):
        """Exercise 3.1 in the child: the student's v2 (built after ``init_seed``), v1 and transfer
        function; v1's weights after the transfer and v2's as drawn come back, and with ``inputs``
        the outputs of the student's own v2 (before) and v1 (after the transfer) on each."""
        reply = self.request("transfer", needs="exercises.transfer_weights_v2_to_v1",
                             d_in=d_in, d_out=d_out, init_seed=init_seed, inputs=list(inputs))
        if inputs and not all(len(reply.get(k, [])) == len(inputs) for k in ("v1_outputs", "v2_outputs")):
            self._kill()  # our child answers every input: the channel was tampered with
            raise StudentFailure("the submission's process sent a malformed answer while running "
                                 "exercises.transfer_weights_v2_to_v1")
        return reply

    def plan(self, steps, *, needs=None, timeout=None):
        """Run ``steps`` in order in the child, in one round trip; returns a ``Plan``.

        Each step is a dict naming its result ``let`` and doing one thing:
        ``call`` (``module.name``, an earlier step's name, or a dotted attribute of either) with
        ``args``/``kwargs``, ``iterate`` (the first ``limit`` items), ``len``, ``attr`` (a dotted
        attribute), ``backward`` (of sum(that tensor * ``weight``)) or ``grads`` (a module's
        parameters' gradients by name, None where none). Options: ``seed`` (torch.manual_seed
        first), ``params`` (copied into the module by name, strictly), ``train`` (its mode),
        ``grad`` (run with autograd; default off), ``stand_in`` ({dotted submodule: {"weight",
        "bias"}}: each replaced by an nn.Linear with those values, before ``params`` are copied
        in; a stand-in's own parameters are then among the module's), ``record`` (dotted submodule names whose
        every call's [inputs..., output] comes back), ``return`` (send the value back).
        Arguments hold plain data and ``{"$ref": step}`` for an earlier step's object; never code.
        ``needs`` names what the plan exercises (default: its first ``module.name`` call)."""
        steps = [dict(step) for step in steps]
        _check_steps(steps)
        names = [step["let"] for step in steps]
        if needs is None:
            needs = next((step["call"] for step in steps if "call" in step
                          and step["call"].split(".")[0] not in names and "." in step["call"]), "plan")
        reply = self.request("plan", needs=needs, timeout=timeout, steps=steps)
        values, records, errors = reply["values"], reply["records"], reply["errors"]
        returned = {step["let"] for step in steps if step.get("return")}
        recording = {step["let"]: set(step.get("record", ())) for step in steps if "record" in step}
        if not (set(errors) <= set(names) and set(values) <= returned and not set(values) & set(errors)
                and returned <= set(values) | set(errors) and set(records) <= set(recording) - set(errors)
                and all(set(records[name]) == recording[name] for name in records)
                and set(recording) - set(errors) <= set(records)):
            self._kill()  # our child sends exactly one answer per step: the channel was tampered with
            raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
        errors = {name: clean_text(why, limit=MESSAGE_LIMIT) for name, why in errors.items()}
        for name, value in [*values.items(), *records.items()]:
            dtype = _odd_dtype(value)
            if dtype is not None:
                errors[name] = (f"{name} holds a tensor of dtype {dtype}, which cannot be compared:"
                                " return the dtype of its inputs (float32)")
                values.pop(name, None)
                records.pop(name, None)
        return Plan(values, records, errors)


_ACTIONS = ("call", "iterate", "len", "attr", "backward", "grads")
_OPTIONS = {"let", "args", "kwargs", "seed", "params", "train", "grad", "record", "return", "limit", "weight",
            "stand_in"}


def _check_steps(steps):
    """The suite's plan is well formed (a mistake here is the grader's, so a ValueError)."""
    earlier = set()

    def data(value, where, depth=0):
        if depth > protocol.PLAN_DEPTH:
            raise ValueError(f"{where}: nested too deep")
        if isinstance(value, dict) and set(value) == {"$ref"}:
            if value["$ref"] not in earlier:
                raise ValueError(f"{where}: $ref {value['$ref']!r} names no earlier step")
        elif isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str):
                    raise ValueError(f"{where}: dict keys must be str")
                data(v, where, depth + 1)
        elif isinstance(value, (list, tuple)):
            for v in value:
                data(v, where, depth + 1)
        elif not (value is None or type(value) in (bool, int, float, str) or isinstance(value, torch.Tensor)):
            raise ValueError(f"{where}: a {type(value).__name__} is not plain data")

    for step in steps:
        name = step.get("let")
        if not isinstance(name, str) or not name.isidentifier() or name in earlier:
            raise ValueError(f"plan step {step!r}: `let` must be a new identifier")
        actions = [key for key in _ACTIONS if key in step]
        unknown = set(step) - _OPTIONS - set(_ACTIONS)
        if len(actions) != 1 or unknown:
            raise ValueError(f"plan step {name}: exactly one of {', '.join(_ACTIONS)}"
                             + (f"; unknown keys {sorted(unknown)}" if unknown else ""))
        if not isinstance(step[actions[0]], str) or not step[actions[0]]:
            raise ValueError(f"plan step {name}: `{actions[0]}` must name a step or module.name")
        for key, allowed in (("args", "call"), ("kwargs", "call"), ("record", "call"), ("params", "call"),
                             ("stand_in", "call"),
                             ("train", "call"), ("grad", "call"), ("limit", "iterate"), ("weight", "backward")):
            if key in step and allowed not in step:
                raise ValueError(f"plan step {name}: `{key}` goes with `{allowed}`")
        if not isinstance(step.get("args", []), (list, tuple)) or not isinstance(step.get("kwargs", {}), dict):
            raise ValueError(f"plan step {name}: `args` must be a list, `kwargs` a dict")
        if not all(isinstance(r, str) and r for r in step.get("record", [])):
            raise ValueError(f"plan step {name}: `record` must list dotted submodule names")
        if "limit" in step and not (type(step["limit"]) is int and 0 <= step["limit"] <= protocol.PLAN_LIMIT):
            raise ValueError(f"plan step {name}: `limit` must be an int up to {protocol.PLAN_LIMIT}")
        if step.get("seed") is not None and type(step["seed"]) is not int:
            raise ValueError(f"plan step {name}: `seed` must be an int")
        if step.get("params") is not None and not (isinstance(step["params"], dict) and all(
                isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in step["params"].items())):
            raise ValueError(f"plan step {name}: `params` must map names to tensors")
        if step.get("stand_in") is not None and not (isinstance(step["stand_in"], dict) and all(
                isinstance(k, str) and k and isinstance(v, dict) and set(v) <= {"weight", "bias"}
                and isinstance(v.get("weight"), torch.Tensor) and v["weight"].dim() == 2
                and (v.get("bias") is None or isinstance(v["bias"], torch.Tensor))
                for k, v in step["stand_in"].items())):
            raise ValueError(f"plan step {name}: `stand_in` must map submodule names to "
                             "{'weight': 2-D tensor, 'bias': tensor or None}")
        for key in ("args", "kwargs", "weight"):
            data(step.get(key), f"plan step {name} {key}")
        if "record" in step:
            step["record"] = list(step["record"])
        earlier.add(name)


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
    ({submodule: [[inputs..., output] per call]}), ``errors`` ({step: one line}); reading a
    failed step's value or record raises its StudentFailure."""

    def __init__(self, values, records, errors):
        self.values = _StepValues(values, errors)
        self.records = _StepValues(records, errors)
        self.errors = errors

    def failed(self, name):
        """The reason ``name`` failed (the first failure it depended on), or None."""
        return _root_cause(name, self.errors) if name in self.errors else None
