"""What runs inside the sandboxed child: the submission's modules and the probes.

The child imports only the submission's sources (sent as text, served from memory),
runs a probe the grader asks for and sends back plain data. It never sees the
reference solutions or the hidden suites, and it decides nothing: every comparison
happens in the grader.
"""
import importlib.abc
import importlib.util
import sys
import traceback

import torch

from . import protocol

SUBMISSION_PREFIX = "/submission/"


class SubmissionFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the submission's top-level modules from the sources the grader sent.

    A module that fails to import while another one imports it (exercises.py importing a
    broken multihead_attention.py) becomes a placeholder whose missing names fail only
    when used, so a mistake in one module costs only the checks that use what it defines.
    The module a probe asks for itself still fails with its own error."""

    def __init__(self, sources):
        self.sources = dict(sources)
        self.failed = {}      # module name -> why it could not be imported
        self.wanted = None    # the module a probe is importing directly

    def find_spec(self, name, path=None, target=None):
        if path is None and name in self.sources:
            return importlib.util.spec_from_loader(name, self, origin=SUBMISSION_PREFIX + name + ".py")
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        module.__file__ = SUBMISSION_PREFIX + name + ".py"
        try:
            code = compile(self.sources[name], module.__file__, "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except BaseException as exc:  # anything the import raises, SystemExit included, is the student's
            self.failed[name] = f"{name}.py could not be imported: {_describe(exc)}"
            if name == self.wanted:
                raise
            module.__getattr__ = _Unavailable.factory(self.failed[name])


class _Unavailable:
    """Stands for a name of a module that could not be imported; fails when used."""

    def __init__(self, why):
        self.why = why

    @classmethod
    def factory(cls, why):
        def module_getattr(name):
            if name.startswith("__"):
                raise AttributeError(name)
            return cls(why)
        return module_getattr

    def __call__(self, *args, **kwargs):
        raise ProbeError("import", self.why)

    def __getattr__(self, name):
        raise ProbeError("import", self.why)

    def __mro_entries__(self, bases):
        raise ProbeError("import", self.why)


class ProbeError(Exception):
    """A failure the grader should show as it is (with the stage it happened in)."""

    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage


def _describe(exc, limit=2000):
    """One line: the exception, whole, and the last line of the submission it passed through."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"{type(exc).__name__} in {str(exc.filename).rsplit('/', 1)[-1]} line {exc.lineno}: {exc.msg}"
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(SUBMISSION_PREFIX):
            where = f" ({frame.filename[len(SUBMISSION_PREFIX):]} line {frame.lineno})"
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    if len(text) > limit:  # only a pathological message is cut, and then at a word
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    return text + where


def _as_data(value, what):
    """The student's return value as channel data; only genuine tensors pass."""
    if type(value) in (torch.Tensor, torch.nn.Parameter):
        if value.is_sparse or value.device.type == "meta" or value.is_complex():
            raise ProbeError("result", f"{what} returned a {value.layout}/{value.device.type} tensor that holds no readable values")
        return torch.Tensor.detach(value).cpu()
    if isinstance(value, (tuple, list)) and len(value) <= 16:
        return [_as_data(v, what) for v in value]
    if isinstance(value, torch.Tensor):
        raise ProbeError("result", f"{what} returned a {type(value).__name__}, a tensor subclass; return a plain torch.Tensor")
    if type(value) in (int, float, bool):
        return value
    raise ProbeError("result", f"{what} returned {type(value).__name__}, expected a tensor")


def _finder():
    return next((f for f in sys.meta_path if isinstance(f, SubmissionFinder)), None)


def _lookup(module_name, name):
    finder = _finder()
    if finder is not None and module_name not in finder.sources:
        raise ProbeError("import", f"{module_name}.py is missing from your submission")
    if finder is not None and module_name in finder.failed:
        raise ProbeError("import", finder.failed[module_name])
    try:
        if finder is not None:
            finder.wanted = module_name
        module = importlib.import_module(module_name)
    except BaseException as exc:  # anything the import raises, SystemExit included, is the student's
        if finder is not None and module_name in finder.failed:
            raise ProbeError("import", finder.failed[module_name]) from None
        raise ProbeError("import", f"{module_name}.py could not be imported: {_describe(exc)}") from None
    finally:
        if finder is not None:
            finder.wanted = None
    if not hasattr(module, name):
        raise ProbeError("lookup", f"{module_name}.py defines no {name}")
    return getattr(module, name)


def _run(stage, what, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except ProbeError:
        raise
    except BaseException as exc:
        raise ProbeError(stage, f"{what} raised {_describe(exc)}") from None


def _seed(seed):
    if seed is not None:
        torch.default_generator.manual_seed(seed)  # what torch.manual_seed does on a CPU-only run


def op_call(req):
    """Call a function of the submission: {module, name, args, kwargs, seed}."""
    fn = _lookup(req["module"], req["name"])
    _seed(req.get("seed"))
    with torch.no_grad():
        value = _run("call", f"{req['name']}()", fn, *req.get("args", []), **req.get("kwargs", {}))
    return {"value": _as_data(value, f"{req['name']}()")}


def op_calls(req):
    """The same function on a list of argument lists, in one round trip: {module, name, calls}.

    Every call gets its own answer: a value, or an error that fails only that case. A tensor
    argument that a call changed comes back too, as it is afterwards (None where unchanged)."""
    fn = _lookup(req["module"], req["name"])
    values, errors, size, args_after = [], {}, 0, []
    for i, args in enumerate(req["calls"]):
        before = [a.clone() if type(a) is torch.Tensor else None for a in args]
        try:
            with torch.no_grad():
                value = _run("call", f"{req['name']}()", fn, *args)
            value = _as_data(value, f"{req['name']}()")
            if size + _nbytes(value) > protocol.MAX_BLOB:  # refuse now, so the other answers still fit
                raise ProbeError("result", f"the result cannot be sent back: {req['name']}() returned "
                                           f"more than the channel's {protocol.MAX_BLOB >> 20} MiB")
            size += _nbytes(value)
            values.append(value)
        except ProbeError as exc:
            values.append(None)
            errors[str(i)] = str(exc)
        # a tensor argument the call changed comes back as it is now (a function must not change them)
        args_after.append([None if b is None or _unchanged(a, b) else _as_data(a, "argument")
                           for a, b in zip(args, before)])
    return {"values": values, "errors": errors, "args_after": args_after}


def _unchanged(a, b):
    return (type(a) is torch.Tensor and a.shape == b.shape and a.dtype == b.dtype
            and bool(((a == b) | (a.isnan() & b.isnan())).all()))


def _nbytes(value):
    if isinstance(value, list):
        return sum(_nbytes(v) for v in value)
    return value.nelement() * value.element_size() if isinstance(value, torch.Tensor) else 8


def _copy_parameters(module, params, what):
    """Copy the reference's parameters in by name; a missing or extra name is the student's error."""
    own = dict(module.named_parameters())
    missing = sorted(set(own) - set(params))
    unexpected = sorted(set(params) - set(own))
    if missing or unexpected:
        raise ProbeError("load", f"{what} has parameters {sorted(own)}; the book's names are {sorted(params)}"
                         f" (missing {unexpected or 'none'}, extra {missing or 'none'})")
    with torch.no_grad():
        for name, value in params.items():
            if tuple(own[name].shape) != tuple(value.shape):
                raise ProbeError("load", f"{what}: parameter {name} has shape {tuple(own[name].shape)},"
                                         f" expected {tuple(value.shape)}")
            own[name].copy_(value)


def _describe_module(module):
    info = {
        "type": type(module).__name__,
        "params": {k: list(v.shape) for k, v in module.named_parameters()},
        "buffers": {k: [list(v.shape), str(v.dtype)] for k, v in module.named_buffers()},
        "state_keys": sorted(module.state_dict().keys()),
        "attrs": {},
    }
    for attr in ("num_heads", "head_dim", "d_out"):
        value = getattr(module, attr, None)
        if type(value) is int:
            info["attrs"][attr] = value
    heads = getattr(module, "heads", None)
    if isinstance(heads, torch.nn.ModuleList):
        info["heads"] = [type(h).__name__ for h in heads]
    dropout = getattr(module, "dropout", None)
    if isinstance(dropout, torch.nn.Dropout) and type(dropout.p) in (int, float):
        info["dropout"] = dropout.p
    mask = getattr(module, "mask", None)
    if type(mask) is torch.Tensor:
        info["mask"] = {"shape": list(mask.shape), "dtype": str(mask.dtype)}
    return info


def _build(req):
    """Construct (or build, for the exercises' factory functions) and prepare a module."""
    what = f"{req['name']}({', '.join(map(repr, req.get('args', [])))})"
    factory = _lookup(req["module"], req["name"])
    _seed(req.get("init_seed"))
    module = _run("construct", what, factory, *req.get("args", []), **req.get("kwargs", {}))
    if not isinstance(module, torch.nn.Module):
        raise ProbeError("construct", f"{what} gave a {type(module).__name__}, not an nn.Module")
    if req.get("params") is not None:
        _copy_parameters(module, req["params"], what)
    elif req.get("params_digest") is not None:  # drawn here, after the reference's own seed
        drawn = {k: protocol.digest(v) for k, v in module.named_parameters()}
        if drawn != req["params_digest"]:
            raise ProbeError("params differ", f"{what} draws other parameters than the reference's")
    if req.get("dtype"):
        _run("to", f"{what}.to({req['dtype']})", module.to, getattr(torch, req["dtype"]))
    module.train(bool(req.get("train", False)))
    return module, what


def _transpose_masks(module):
    """Every buffer named ``mask`` with its last two dimensions swapped, whatever its dtype and
    shape: a forward that uses its registered mask then looks at the future instead."""
    for name, buffer in list(module.named_buffers()):
        if name.rsplit(".", 1)[-1] == "mask" and buffer.dim() >= 2:
            owner = module.get_submodule(name.rpartition(".")[0])
            setattr(owner, "mask", buffer.transpose(-2, -1).contiguous())


def _forward(module, what, x, seed):
    _seed(seed)
    return _run("forward", f"{what} forward on shape {tuple(x.shape)}", module, x)


def op_module(req):
    """Build a module, optionally load weights, run forward on each input, describe it.

    Options, each asked for by a check: ``submodules`` (dotted names also run on each
    input), ``transpose_masks``, and ``grad_weights`` (one per input: backward of
    sum(output * weight); the parameters' gradients and the inputs as they are afterwards
    come back)."""
    module, what = _build(req)
    if req.get("transpose_masks"):
        _run("forward", f"{what}: swapping its mask buffer", _transpose_masks, module)
    reply = {"outputs": []}
    grad_weights = req.get("grad_weights")
    for i, x in enumerate(req.get("inputs", [])):
        if grad_weights:
            out = _forward(module, what, x, req.get("seed"))
            if not isinstance(out, torch.Tensor) or out.shape != grad_weights[i].shape:
                raise ProbeError("forward", f"{what} forward did not return a tensor of shape "
                                            f"{tuple(grad_weights[i].shape)}")
            _run("backward", f"{what} backward", lambda: (out * grad_weights[i]).sum().backward())
        else:
            with torch.no_grad():
                out = _forward(module, what, x, req.get("seed"))
        reply["outputs"].append(_as_data(out, f"{what} forward"))
    if grad_weights:
        reply["grads"] = {k: _as_data(v.grad, "gradient") for k, v in module.named_parameters()
                          if type(v.grad) is torch.Tensor}
        reply["inputs_after"] = [_as_data(x, "input") for x in req.get("inputs", [])]
    if req.get("submodules"):  # in order after one seed, as a forward calling them in turn would
        subs = {name: _run("lookup", f"{what}.{name}", module.get_submodule, name) for name in req["submodules"]}
        reply["sub_outputs"] = {name: [] for name in subs}
        for x in req.get("inputs", []):
            _seed(req.get("seed"))
            with torch.no_grad():
                for name, sub in subs.items():
                    out = _run("forward", f"{what}.{name} forward", sub, x)
                    reply["sub_outputs"][name].append(_as_data(out, f"{what}.{name} forward"))
    reply["info"] = _describe_module(module)
    if req.get("want_state"):
        reply["state"] = {k: _as_data(v, "state_dict") for k, v in module.state_dict().items()}
    return reply


def op_transfer(req):
    """Exercise 3.1: the student's own v2 (drawn after ``init_seed``), v1, and transfer function.

    The request holds a seed, not weights: an answer echoed from the request would earn nothing."""
    d_in, d_out = req["d_in"], req["d_out"]
    v2_cls = _lookup("self_attention", "SelfAttention_v2")
    v1_cls = _lookup("self_attention", "SelfAttention_v1")
    transfer = _lookup("exercises", "transfer_weights_v2_to_v1")
    _seed(req["init_seed"])
    sa_v2 = _run("construct", f"SelfAttention_v2({d_in}, {d_out})", v2_cls, d_in, d_out)
    drawn = {k: _as_data(v, "SelfAttention_v2 parameter").clone() for k, v in sa_v2.named_parameters()}
    torch.default_generator.manual_seed(0)
    sa_v1 = _run("construct", f"SelfAttention_v1({d_in}, {d_out})", v1_cls, d_in, d_out)
    _run("call", "transfer_weights_v2_to_v1()", transfer, sa_v2, sa_v1)
    # Only the weights come back: the grader runs them through the reference v1, so a bug in
    # the student's own forward costs points in self_attention, not in this exercise.
    return {"params": {k: _as_data(v, "SelfAttention_v1 parameter") for k, v in sa_v1.named_parameters()},
            "v2_params": drawn}


OPS = {"call": op_call, "calls": op_calls, "module": op_module, "transfer": op_transfer}


def serve(sock, hello):
    """Answer requests until the grader hangs up."""
    protocol.send(sock, {"hello": hello})
    while True:
        try:
            request = protocol.recv(sock)
        except protocol.ChannelError:
            return
        if request.get("op") == "load":
            sys.meta_path.insert(0, SubmissionFinder(request["sources"]))
            reply = {"ok": True}
        else:
            try:
                reply = {"ok": True, **OPS[request["op"]](request)}
            except ProbeError as exc:
                reply = {"ok": False, "stage": exc.stage, "error": str(exc)}
            except BaseException as exc:
                reply = {"ok": False, "stage": "probe", "error": _describe(exc)}
        reply["imported"] = sorted(n for n in request.get("_modules", []) if n in sys.modules)
        try:
            frame = protocol.encode(reply)
        except Exception as exc:
            frame = protocol.encode({"ok": False, "stage": "result",
                                     "error": f"the result cannot be sent back: {_describe(exc)}"})
        sock.sendall(frame)
