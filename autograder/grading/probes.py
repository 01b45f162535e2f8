"""The calls the suites make most, each written as one plan (the sandbox's one vocabulary).

``calls``: one function on a batch of cases; ``module``: a module built, loaded, run and
described. Whatever a chapter must name (its modules, classes, attributes) comes in as
arguments: the plans carry it to the child as data.
"""
import torch

from autograder.sandbox import protocol
from autograder.sandbox.session import StudentFailure


class Answers(list):
    """Answers of a batch of calls; a failed call's entry raises its reason when read.

    ``args_after``: per call, each tensor argument as it is after a call that changed it (None
    for others)."""

    def __init__(self, values, errors, args_after):
        super().__init__(values)
        self.errors = errors
        self.args_after = args_after

    def __getitem__(self, index):
        if index in self.errors:
            raise StudentFailure(self.errors[index])
        return super().__getitem__(index)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def calls(student, module, name, calls):
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


def _digests(params):
    found = {}
    for name, tensor in params.items():
        key = (id(tensor), tensor._version)
        if key not in _DIGESTS:
            _DIGESTS[key] = (tensor, protocol.digest(tensor))
        found[name] = _DIGESTS[key][1]
    return found


_CASTS = {"float64": "double", "float32": "float", "float16": "half", "bfloat16": "bfloat16"}


class _OtherDraw(Exception):
    """The module drew other parameters than the reference's digests: send them after all."""


def module(student, module, name, *args, inputs=(), params=None, params_keep=(), init_seed=None, dtype=None,
           train=False, seed=None, want_state=False, submodules=(), transpose_buffers=None, grad_weights=None,
           params_seed=None, describe=(), **kwargs):
    """Build ``module.name(*args, **kwargs)`` in the child (after ``init_seed``), load ``params``
    (``params_keep`` as for a plan), cast it to ``dtype``, and run it on each input (after ``seed``).

    Returns {"outputs": [per input], "info": the plan's ``describe`` with ``describe`` as its
    attrs}, and as asked: "state" (its state_dict), "sub_outputs" ({dotted submodule: [its
    output per input]}, run in order after one seed), "grads" and "inputs_after" (with
    ``grad_weights``, one per input: backward of sum(output * weight)), "causal_sdpa" (with
    ``transpose_buffers``: those buffers transposed, and PyTorch's causal attention calls counted).
    ``params_seed``: the seed the reference was built after, where ``params`` are its; large
    ones are then drawn in the child after that seed, and sent only where its draw differs."""
    request = dict(inputs=list(inputs), params_keep=list(params_keep), dtype=dtype, train=train, seed=seed,
                   want_state=want_state, submodules=list(submodules), transpose_buffers=transpose_buffers,
                   grad_weights=grad_weights, describe=list(describe), kwargs=kwargs)
    if (params is not None and params_seed is not None and init_seed is None
            and sum(v.nbytes for v in params.values()) >= DRAW_IN_CHILD):
        try:
            return _module(student, module, name, args, digest=_digests(params), init_seed=params_seed, **request)
        except _OtherDraw:
            pass
    return _module(student, module, name, args, params=params, init_seed=init_seed, **request)


def _module(student, module, name, args, *, inputs, params=None, params_keep=(), digest=None, init_seed, dtype,
            train, seed, want_state, submodules, transpose_buffers, grad_weights, describe, kwargs):
    what = f"{name}({', '.join(map(repr, args))})"
    needs = f"{module}.{name}" + (".forward" if inputs else "")
    build = {"let": "m", "call": f"{module}.{name}", "args": list(args), "kwargs": kwargs, "seed": init_seed,
             "what": what, "train": bool(train)}
    if params is not None:
        build.update(params=params, params_keep=list(params_keep))
    elif digest is not None:
        build["params_digest"] = digest
    steps = [build]
    if dtype:
        steps.append({"let": "cast", "call": f"m.{_CASTS[dtype]}", "what": f"{what}.to({dtype})"})
    outputs = []
    for i, x in enumerate(inputs):
        forward = {"let": f"out{i}", "call": "m", "seed": seed, "what": f"{what} forward on shape {tuple(x.shape)}",
                   "return": True}
        if transpose_buffers:
            forward["count_causal_sdpa"] = True
            if i == 0:
                forward["transpose_buffers"] = transpose_buffers
        if grad_weights:
            steps += [{"let": f"x{i}", "data": x},
                      {**forward, "args": [{"$ref": f"x{i}"}], "grad": True},
                      {"let": f"back{i}", "backward": f"out{i}", "weight": grad_weights[i],
                       "what": f"{what} backward", "result": f"{what} forward"}]
        else:
            steps.append({**forward, "args": [x], "result": f"{what} forward"})
        outputs.append(f"out{i}")
    if grad_weights:
        steps.append({"let": "grads", "grads": "m", "return": True})
        steps += [{"let": f"x{i}_after", "attr": f"x{i}", "return": True, "changed_from": f"x{i}"}
                  for i in range(len(inputs))]
    subs = {}
    for i, x in enumerate(inputs):  # in order after one seed, as a forward calling them in turn would
        for j, sub in enumerate(submodules):
            subs.setdefault(sub, []).append(f"sub{i}_{j}")
            steps.append({"let": f"sub{i}_{j}", "call": f"m.{sub}", "args": [x], "seed": seed if j == 0 else None,
                          "what": f"{what}.{sub} forward", "result": f"{what}.{sub} forward", "return": True})
    steps.append({"let": "info", "describe": "m", "attrs": list(describe), "return": True})
    if want_state:
        steps.append({"let": "state", "call": "m.state_dict", "what": f"{what}.state_dict()", "return": True})
    plan = student.plan(steps, needs=needs)
    for step in steps:  # the first failure, in the order the steps ran, is the answer
        why = plan.failed(step["let"])
        if why is not None:
            if step["let"] == "m" and digest is not None and why.startswith(protocol.PARAMS_DIFFER):
                raise _OtherDraw()
            raise StudentFailure(why)
    reply = {"outputs": [plan.values[name] for name in outputs], "info": plan.values["info"]}
    if transpose_buffers and inputs:
        reply["causal_sdpa"] = sum(plan.counts[name] for name in outputs)
    if grad_weights:
        reply["grads"] = plan.values["grads"]
        reply["inputs_after"] = [plan.values[f"x{i}_after"] for i in range(len(inputs))]
    if subs:
        reply["sub_outputs"] = {sub: [plan.values[name] for name in names] for sub, names in subs.items()}
    if want_state:
        reply["state"] = plan.values["state"]
    if not _well_formed(reply):
        raise StudentFailure(f"the submission's process sent a malformed answer while running {needs}")
    if grad_weights:
        reply["grads"] = {k: v for k, v in reply["grads"].items() if isinstance(v, torch.Tensor)}
    return reply


def is_answer(value, depth=0):
    """A function's answer: a tensor, a number, or a (nested) list of them."""
    if isinstance(value, list):
        return depth < 4 and all(is_answer(v, depth + 1) for v in value)
    return isinstance(value, torch.Tensor) or type(value) in (int, float, bool)


def _names_to(value, ok):
    return isinstance(value, dict) and all(type(k) is str and ok(v) for k, v in value.items())


def _shape(value):
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
            and _names_to(reply.get("sub_outputs", {}), lambda v: all(is_answer(o) for o in v))
            and type(reply.get("causal_sdpa", 0)) is int)
