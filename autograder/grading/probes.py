"""The calls the suites make most, each written as one plan (the sandbox's one vocabulary).

``calls``: one function on a batch of cases; ``module``: a module built, loaded, run and
described; ``modules``: as many, for a loop of checks, in two round trips. Whatever a chapter
must name (its modules, classes, attributes) comes in as arguments: the plans carry it to the
child as data.
"""
import contextlib
import dataclasses
import inspect
import types

import torch

from autograder.sandbox import child, protocol
from autograder.sandbox.session import StudentFailure


@contextlib.contextmanager
def stood_in(ref, inject):
    """The reference's modules (``ref``, the suites' namespace of them) with the names of a plan's
    ``inject`` standing in, as in the child (the same stand-ins, bound the same way): what a module
    built on those stand-ins answers is then computed here."""
    modules = [m for m in vars(ref).values() if isinstance(m, types.ModuleType)]
    undo, order = [], []
    for dotted, spec in inject.items():
        module_name, _, name = dotted.rpartition(".")
        own = getattr(getattr(ref, module_name), name)
        undo += child.rebind(modules, module_name, name, own, child.stand_in_factory(spec, [], order))
    try:
        yield
    finally:
        for restore in reversed(undo):
            restore()


def on_stand_ins(spec, classes):
    """The options of a plan's step building a module on ``spec``'s stand-ins (``stand_in``) whose
    lower classes never run, whatever they do: each class of ``classes`` ({piece: "module.Class"},
    a piece being a submodule's last name or its first: "ff", "trf_blocks") is injected while the
    module is built, as the map of the first of its pieces; ``stand_in`` then gives each its own."""
    inject = {}
    for dotted, weights in spec.items():
        names = dotted.split(".")
        found = next((classes[name] for name in (names[-1], names[0]) if name in classes), None)
        if found is not None:
            inject.setdefault(found, weights)
    return {"stand_in": spec, "inject": inject}


def calls_made(plan, step, ref):
    """What the submission passed the grader's stand-ins in ``step`` (a plan's ``inject``), in the
    order of the calls: [(its "module.Name", {parameter: value})], bound to the signature of the
    reference's own ``module.Name`` (in ``ref``) with its defaults; None for arguments that do not
    fit it. Read in the grader: a call is judged against the arguments the book passes."""
    made = []
    for name, calls in plan.injected[step].items():
        module, _, own = name.rpartition(".")
        signature = inspect.signature(getattr(getattr(ref, module), own))
        for k, args, kwargs in calls:
            try:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                made.append((k, name, dict(bound.arguments)))
            except TypeError:
                made.append((k, name, None))
    return [(name, given) for _, name, given in sorted(made, key=lambda call: call[0])]


class Answers(list):
    """Answers of a batch of calls; a failed call's entry raises its reason when read.

    ``args_after``: per call, each tensor argument as it is after a call that changed it (None
    for others)."""

    def __init__(self, values, errors, args_after) -> None:
        super().__init__(values)
        self.errors = errors
        self.args_after = args_after

    def __getitem__(self, index):
        if index in self.errors:
            raise StudentFailure(self.errors[index])
        return super().__getitem__(index)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def calls(student, module, name, calls) -> Answers:
    """``module.name(*args)`` for each ``args`` in ``calls``, in one round trip (see ``Answers``).

    Each tensor argument comes back where the call changed it, so a function that changes its
    arguments in place is seen doing it."""
    steps = [{"let": f"c{i}", "call": f"{module}.{name}", "args": list(args), "what": f"{name}()",
              "result": f"{name}()", "return": True, "changed_args": True} for i, args in enumerate(calls)]
    plan = student.plan(steps, needs=f"{module}.{name}")
    values, errors, args_after = [], {}, []
    for i, args in enumerate(calls):
        try:
            values.append(plan.values[f"c{i}"])
        except StudentFailure as exc:
            values.append(None)
            errors[i] = str(exc)
        args_after.append(plan.changed_args.get(f"c{i}") or [None] * len(args))  # none where the call failed
    return Answers(values, errors, args_after)


# Parameters this large are not sent where the child can draw them itself: it builds the module
# after the seed the reference was built after and keeps its own draw where the digests are the
# reference's (GPT-2 small's attention, 9 MB, cost ~25 ms a request to encode, send and load).
DRAW_IN_CHILD = 1 << 20
_DIGESTS = {}   # (id, version) -> (the tensor, kept alive so that its id stays its own; its digest)


def _digests(params) -> dict:
    found = {}
    for name, tensor in params.items():
        key = (id(tensor), tensor._version)
        if key not in _DIGESTS:
            _DIGESTS[key] = (tensor, protocol.digest(tensor))
        found[name] = _DIGESTS[key][1]
    return found


_CASTS = {"float64": "double", "float32": "float", "float16": "half", "bfloat16": "bfloat16"}


def module(student, module, name, *args, **options):
    """Build ``module.name(*args, **kwargs)`` in the child (after ``init_seed``), load ``params``
    (``params_keep`` as for a plan), cast it to ``dtype``, and run it on each input (after ``seed``).

    Returns {"outputs": [per input], "info": the plan's ``describe`` with ``describe`` as its
    attrs}, and as asked: "state" (its state_dict), "sub_outputs" ({dotted submodule: [its
    output per input]}, run in order after one seed), "grads" and "inputs_after" (with
    ``grad_weights``, one per input: backward of sum(output * weight)). ``transpose_buffers``:
    those buffers transposed before the first input runs.
    ``stand_in``: as for a plan, the named submodules replaced by the grader's linear maps;
    ``inject``: as for a plan, names the constructor calls stood in for while it builds.
    ``params_seed``: the seed the reference was built after, where ``params`` are its; large
    ones are then drawn in the child after that seed, and sent only where its draw differs.
    Options are keyword-only; any other keyword is an argument of the constructor."""
    reply, = modules(student, [(module, name, args, options)])
    if isinstance(reply, StudentFailure):
        raise reply
    return reply


_OPTIONS = ("inputs", "params", "params_keep", "init_seed", "dtype", "train", "seed", "want_state", "submodules",
            "transpose_buffers", "grad_weights", "params_seed", "describe", "stand_in", "inject")


def modules(student, probes):
    """``module`` for each of ``probes`` ((module, name, args, options)): yields per probe its
    reply, or the StudentFailure ``module`` would raise for it. For a loop of checks that asks for
    all its modules first and then checks each answer in turn: the first probe runs alone, as the
    loop's first check would, and the others together in one round trip when the second reply is
    read. Where the child hangs or dies on them together, each runs alone when its reply is read,
    as in a loop of one probe per check, which may stop before the probe that hangs."""
    probes = [_Probe(i, *probe) for i, probe in enumerate(probes)]
    for probe in probes:
        params = probe.options.get("params")
        if (params is not None and probe.options.get("params_seed") is not None
                and probe.options.get("init_seed") is None and sum(v.nbytes for v in params.values()) >= DRAW_IN_CHILD):
            probe.digest = _digests(params)
    answered = False
    for k, probe in enumerate(probes):
        if k == 1:
            answered = _run_probes(student, probes[1:])
        if not answered:
            _run_probes(student, [probe])
        if probe.reply is _OTHER_DRAW:  # it drew other parameters than the reference's: send them after all
            probe.digest = None
            _run_probes(student, [probe])
        yield probe.reply


_OTHER_DRAW = object()  # a probe's reply where the module drew other parameters than the reference's digests


class _Probe:
    """One module probe of a batch: its steps (named with its own suffix) and, once run, its reply."""

    def __init__(self, index, module, name, args, options) -> None:
        self.suffix = f"_{index}" if index else ""  # the first's steps keep their plain names
        self.module, self.name, self.args = module, name, tuple(args)
        self.options = {k: v for k, v in options.items() if k in _OPTIONS}
        self.kwargs = {k: v for k, v in options.items() if k not in _OPTIONS}
        self.digest = self.reply = None
        self.needs = f"{module}.{name}" + (".forward" if self.options.get("inputs") else "")

    def let(self, name):
        return name + self.suffix

    def steps(self) -> list:
        o, let = self.options, self.let
        inputs, grad_weights, transpose_buffers = o.get("inputs", ()), o.get("grad_weights"), o.get("transpose_buffers")
        what = f"{self.name}({', '.join(map(repr, self.args))})"
        build = {"let": let("m"), "call": f"{self.module}.{self.name}", "args": list(self.args), "kwargs": self.kwargs,
                 "seed": o.get("params_seed") if self.digest is not None else o.get("init_seed"), "what": what,
                 "train": bool(o.get("train"))}
        for key in ("stand_in", "inject"):
            if o.get(key):
                build[key] = o[key]
        if self.digest is not None:
            build["params_digest"] = self.digest
        elif o.get("params") is not None:
            build.update(params=o["params"], params_keep=list(o.get("params_keep", ())))
        steps = [build]
        if o.get("dtype"):
            steps.append({"let": let("cast"), "call": f"{let('m')}.{_CASTS[o['dtype']]}", "what": f"{what}.to({o['dtype']})"})
        for i, x in enumerate(inputs):
            forward = {"let": let(f"out{i}"), "call": let("m"), "seed": o.get("seed"),
                       "what": f"{what} forward on shape {tuple(x.shape)}", "return": True}
            if transpose_buffers and i == 0:
                forward["transpose_buffers"] = transpose_buffers
            if grad_weights:
                steps += [{"let": let(f"x{i}"), "data": x},
                          {**forward, "args": [{"$ref": let(f"x{i}")}], "grad": True},
                          {"let": let(f"back{i}"), "backward": let(f"out{i}"), "weight": grad_weights[i],
                           "what": f"{what} backward", "result": f"{what} forward"}]
            else:
                steps.append({**forward, "args": [x], "result": f"{what} forward"})
        if grad_weights:
            steps.append({"let": let("grads"), "grads": let("m"), "return": True})
            steps += [{"let": let(f"x{i}_after"), "attr": let(f"x{i}"), "return": True, "changed_from": let(f"x{i}")}
                      for i in range(len(inputs))]
        for i, x in enumerate(inputs):  # in order after one seed, as a forward calling them in turn would
            for j, sub in enumerate(o.get("submodules", ())):
                steps.append({"let": let(f"sub{i}_{j}"), "call": f"{let('m')}.{sub}", "args": [x],
                              "seed": o.get("seed") if j == 0 else None, "what": f"{what}.{sub} forward",
                              "result": f"{what}.{sub} forward", "return": True})
        steps.append({"let": let("info"), "describe": let("m"), "attrs": list(o.get("describe", ())), "return": True})
        if o.get("want_state"):
            steps.append({"let": let("state"), "call": f"{let('m')}.state_dict", "what": f"{what}.state_dict()",
                          "return": True})
        return steps

    def answer(self, plan, steps) -> object:
        """This probe's reply from the plan, or the StudentFailure of its first failed step."""
        o, let = self.options, self.let
        for step in steps:  # the first failure, in the order the steps ran, is the answer
            why = plan.failed(step["let"])
            if why is not None:
                if step["let"] == let("m") and self.digest is not None and why.startswith(protocol.PARAMS_DIFFER):
                    return _OTHER_DRAW
                return StudentFailure(why)
        inputs, submodules = o.get("inputs", ()), o.get("submodules", ())
        reply = {"outputs": [plan.values[let(f"out{i}")] for i in range(len(inputs))], "info": plan.values[let("info")]}
        if o.get("grad_weights"):
            reply["grads"] = plan.values[let("grads")]
            reply["inputs_after"] = [plan.values[let(f"x{i}_after")] for i in range(len(inputs))]
        if submodules and inputs:
            reply["sub_outputs"] = {sub: [plan.values[let(f"sub{i}_{j}")] for i in range(len(inputs))]
                                    for j, sub in enumerate(submodules)}
        if o.get("want_state"):
            reply["state"] = plan.values[let("state")]
        if not _well_formed(reply):
            return StudentFailure(f"the submission's process sent a malformed answer while running {self.needs}")
        if o.get("grad_weights"):
            reply["grads"] = {k: v for k, v in reply["grads"].items() if isinstance(v, torch.Tensor)}
        return reply


def _run_probes(student, probes) -> bool:
    """Run ``probes`` in one plan and set each one's reply; False where several got no answer
    (see ``modules``). Each fault their steps raised keeps only its own probe's steps (those the
    reference runs again to show the book's shapes), as if that probe had run alone."""
    steps = [probe.steps() for probe in probes]
    faults = len(student.faults)
    try:
        plan = student.plan([step for own in steps for step in own], needs=probes[0].needs, batch=len(probes) > 1)
    except StudentFailure as exc:
        if len(probes) > 1:
            return False
        probes[0].reply = exc
        return True
    for probe, own in zip(probes, steps):
        probe.reply = probe.answer(plan, own)
    own = {step["let"]: {s["let"] for s in mine} for mine in steps for step in mine}  # step -> its probe's steps
    student.faults[faults:] = [
        dataclasses.replace(fault, steps=tuple(s for s in fault.steps if s["let"] in own[fault.steps[-1]["let"]]))
        for fault in student.faults[faults:]]
    return True


def is_answer(value, depth=0) -> bool:
    """A function's answer: a tensor, a number, or a (nested) list of them."""
    if isinstance(value, list):
        return depth < 4 and all(is_answer(v, depth + 1) for v in value)
    return isinstance(value, torch.Tensor) or type(value) in (int, float, bool)


def _names_to(value, ok) -> bool:
    return isinstance(value, dict) and all(type(k) is str and ok(v) for k, v in value.items())


def _shape(value) -> bool:
    return isinstance(value, list) and all(type(n) is int for n in value)


def _well_formed(reply):
    """What our own child sends; anything else means the submission tampered with the channel."""
    info = reply["info"]
    return (all(is_answer(v) for v in reply["outputs"]) and isinstance(info, dict)
            and type(info.get("type")) is str and _names_to(info.get("params"), _shape)
            and _names_to(info.get("buffers"), lambda v: isinstance(v, list) and len(v) == 2 and _shape(v[0])
                          and type(v[1]) is str)
            and isinstance(info.get("state_keys"), list) and all(type(k) is str for k in info["state_keys"])
            and _names_to(info.get("tensors"), _shape) and _names_to(info.get("attrs"), lambda v: True)
            and _names_to(reply.get("state", {}), lambda v: isinstance(v, torch.Tensor))
            and _names_to(reply.get("grads", {}), lambda v: v is None or isinstance(v, torch.Tensor))
            and all(is_answer(v) for v in reply.get("inputs_after", []))
            and _names_to(reply.get("sub_outputs", {}), lambda v: all(is_answer(o) for o in v)))
