"""What runs inside the sandboxed child: the submission's modules and the probes.

The child imports only the submission's sources (sent as text, served from memory),
runs the plan the grader sends (its one probe: steps that call, run, describe and
differentiate) and sends back plain data. It never sees the reference solutions or the
hidden suites, it decides nothing (every comparison happens in the grader), and it
knows no chapter: every module, class and attribute name comes in the plan, as data.
"""
import collections
import contextlib
import dis
import importlib.abc
import importlib.util
import io
import itertools
import os
import sys

import torch

from . import protocol
from .protocol import PLAN_CALLS, PLAN_DEPTH, PLAN_ITEMS, PLAN_LIMIT, PLAN_STRING

SUBMISSION_PREFIX = "/submission/"


class SubmissionFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the submission's top-level modules from the sources the grader sent.

    A module that fails to import while another one imports it (a.py importing a broken b.py)
    becomes a placeholder whose missing names fail only when used, so a mistake in one module
    costs only the checks that use what it defines.
    The module a probe asks for itself still fails with its own error."""

    def __init__(self, sources):
        self.sources = dict(sources)
        self.failed = {}      # module name -> why it could not be imported
        self.wanted = None    # the module a probe is importing directly
        self.base = self.sources
        self.variants = []    # [module, first line, last line, text]: one edit of the sources each
        self.current = None   # the variant whose modules sys.modules holds now (None: the sources as sent)
        self.kept = {}        # variant -> ({name: module}, failed) while another one is current
        self.held, self.held_failed = {}, {}  # the sources' own modules a variant's copies stand in for

    def use(self, variant) -> None:
        """Give sys.modules the modules of ``variant`` (an index of ``variants``, or None: the
        sources as sent): a variant's own copies of the modules its edit reaches (``_own``),
        imported on demand and kept apart from the others', and the sources' modules for the rest."""
        if variant == self.current:
            return
        if variant is not None and not (type(variant) is int and 0 <= variant < len(self.variants)):
            raise ProbeError("plan", f"no variant {variant!r}")
        if self.current is not None:  # the current variant's copies put away, the sources' modules back
            own = self._own(self.current)
            self.kept[self.current] = ({n: sys.modules.pop(n) for n in own if n in sys.modules}, self.failed)
            sys.modules.update(self.held)
            self.failed = self.held_failed
        self.sources = dict(self.base)
        if variant is not None:  # its own copies of the modules it edits (and those importing them)
            own = self._own(variant)
            self.held = {n: sys.modules.pop(n) for n in own if n in sys.modules}
            self.held_failed = self.failed
            modules, self.failed = self.kept.pop(variant, ({}, {n: w for n, w in self.failed.items() if n not in own}))
            sys.modules.update(modules)
            module, first, last, text = self.variants[variant]
            lines = self.base[module].splitlines(keepends=True)
            lines[first - 1:last] = [text]
            self.sources[module] = "".join(lines)
        self.current = variant

    def _own(self, variant):
        """The modules ``variant`` holds copies of its own: the module it edits and those that name
        it (which import it), and so on."""
        own, grew = {self.variants[variant][0]}, True
        while grew:
            more = {name for name, text in self.base.items() if name not in own and any(m in text for m in own)}
            own, grew = own | more, bool(more)
        return sorted(own)

    def find_spec(self, name, path=None, target=None):
        if path is None and name in self.sources:
            return importlib.util.spec_from_loader(name, self, origin=SUBMISSION_PREFIX + name + ".py")
        return None

    def create_module(self, spec) -> None:
        return None

    def exec_module(self, module) -> None:
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
    """A failure the grader should show as it is (with the stage it happened in); ``where``: the
    student's tensors where their code raised it (``_where``), or None."""

    def __init__(self, stage, message, where=None):
        super().__init__(message)
        self.stage = stage
        self.where = where


def _describe(exc, limit=2000):
    """One line: the exception, whole, and the last line of the submission it passed through."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"{type(exc).__name__} in {str(exc.filename).rsplit('/', 1)[-1]} line {exc.lineno}: {exc.msg}"
    where, tb = "", exc.__traceback__
    while tb is not None:  # the frames themselves: no source lines read (extract_tb stats every file)
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(SUBMISSION_PREFIX):
            where = f" ({filename[len(SUBMISSION_PREFIX):]} line {tb.tb_lineno})"
        tb = tb.tb_next
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    if len(text) > limit:  # only a pathological message is cut, and then at a word
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    return text + where


def shape_of(value):
    """A local's shape as data: a tensor's, or a short list or tuple of tensors' (else None). The
    grader reads the book's locals with it too (grading.shapes)."""
    if isinstance(value, torch.Tensor):
        return list(value.shape)[:protocol.WHERE_DIMS]
    if type(value) in (list, tuple) and 0 < len(value) <= protocol.WHERE_ITEMS \
            and all(isinstance(v, torch.Tensor) for v in value):
        return [list(v.shape)[:protocol.WHERE_DIMS] for v in value]
    return None


_RAISES = {dis.opmap["RAISE_VARARGS"], dis.opmap["RERAISE"]}


_VARIANT = [False]  # whether the plan running is a repair candidate's (``op_plan``'s "variant")


def _where(exc):
    """Where the submission's own code raised ``exc``: the innermost function of one of its modules,
    as {"module", "function" (its qualified name), "line", "tensors": {local: shape}}, or None.
    Only names, numbers and shapes: the grader reads the line itself from the sources it holds.
    Only for the errors torch raises on shapes; a stub's NotImplementedError is "not written yet".
    None in a repair candidate's plan: the search reads only whether its check passes."""
    if _VARIANT[0] or not isinstance(exc, (RuntimeError, IndexError, ValueError, TypeError)) \
            or isinstance(exc, NotImplementedError):
        return None
    found, last, tb = None, None, exc.__traceback__
    while tb is not None:  # a named function's frame: a comprehension's (<listcomp>) is its function's line
        code = tb.tb_frame.f_code
        if code.co_filename.startswith(SUBMISSION_PREFIX) and not code.co_name.startswith("<"):
            found = tb
        last, tb = tb, tb.tb_next
    if found is None or last.tb_frame.f_code.co_code[last.tb_lasti] in _RAISES:
        return None  # a `raise` of the student's own: their message says it all, no shapes to blame
    code, tensors = found.tb_frame.f_code, {}
    try:
        for name, value in list(found.tb_frame.f_locals.items()):
            shape = shape_of(value)
            if shape is not None and len(tensors) < protocol.WHERE_LOCALS:
                tensors[name] = shape
    except Exception:  # a student's tensor subclass whose shape raises: the error is still reported
        return None
    return {"module": code.co_filename[len(SUBMISSION_PREFIX):].removesuffix(".py"),
            "function": code.co_qualname, "line": found.tb_lineno, "tensors": tensors}


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
        raise ProbeError(stage, f"{what} raised {_describe(exc)}", _where(exc)) from None


def _seed(seed):
    if seed is not None:
        torch.default_generator.manual_seed(seed)  # what torch.manual_seed does on a CPU-only run


def _nbytes(value):
    if isinstance(value, list):
        return sum(_nbytes(v) for v in value)
    return value.nelement() * value.element_size() if isinstance(value, torch.Tensor) else 8


def _plain_tensors(module, limit=64):
    """Tensors a module (or a submodule) holds as plain attributes, not registered: {dotted name: tensor}."""
    found = {}
    for prefix, sub in module.named_modules():
        for key, value in vars(sub).items():
            if type(value) is torch.Tensor and not value.is_nested and len(found) < limit:
                found[f"{prefix}.{key}" if prefix else key] = value
    return found


def _copy_parameters(module, params, what, keep=()):
    """Copy the grader's parameters in by name; a missing or extra name is the student's error.

    Two mistakes are left for the checks about them, so that each costs points once: a weight
    kept as a plain tensor attribute of the right name gets its value all the same, and a
    parameter whose own name is in ``keep`` (what the reference holds as a buffer) stays as the
    module made it."""
    own = dict(module.named_parameters())
    plain = {k: v for k, v in _plain_tensors(module).items() if k in params}
    missing = sorted(k for k in set(own) - set(params) if k.rsplit(".", 1)[-1] not in keep)
    unexpected = sorted(set(params) - set(own) - set(plain))
    if missing or unexpected:
        raise ProbeError("load", f"{what} has parameters {sorted(own)}; the book's names are {sorted(params)}"
                         f" (missing {unexpected or 'none'}, extra {missing or 'none'})")
    own.update(plain)
    with torch.no_grad():
        for name, value in params.items():
            if tuple(own[name].shape) != tuple(value.shape):
                raise ProbeError("load", f"{what}: parameter {name} has shape {tuple(own[name].shape)},"
                                         f" expected {tuple(value.shape)}")
            own[name].copy_(value)


def _drew(module, digests):
    """Whether the module holds exactly the parameters these digests name (the same names, shapes,
    dtypes and bytes): then it runs with its own draw."""
    try:
        return {k: protocol.digest(v) for k, v in module.named_parameters()} == digests
    except Exception:  # whatever the module's parameters are, the grader can send its own
        return False


def _transpose_buffers(module, leaf):
    """Every buffer whose own name is ``leaf``, with its last two dimensions swapped, whatever its
    dtype and shape (a forward that uses such a buffer then sees it transposed)."""
    for name, buffer in list(module.named_buffers()):
        if name.rsplit(".", 1)[-1] == leaf and buffer.dim() >= 2:
            owner = module.get_submodule(name.rpartition(".")[0])
            setattr(owner, leaf, buffer.transpose(-2, -1).contiguous())


def _summary(value):
    """What ``describe`` says of one attribute: a number or short str as it is, a tensor's class,
    shape and dtype, a module's class and the torch.nn classes it is (with its items, for a
    ModuleList or Sequential), else only the class."""
    if value is None or type(value) in (bool, int, float) or (type(value) is str and len(value) <= PLAN_STRING):
        return value
    summary = {"class": type(value).__name__}
    if isinstance(value, torch.Tensor):
        summary.update(shape=list(value.shape), dtype=str(value.dtype))
    elif isinstance(value, torch.nn.Module):
        summary["torch"] = [c.__name__ for c in type(value).__mro__ if c.__module__.startswith("torch.nn")]
        if isinstance(value, (torch.nn.ModuleList, torch.nn.Sequential)):
            summary["items"] = [type(item).__name__ for item in itertools.islice(value, PLAN_LIMIT)]
    return summary


def _describe_module(module, attrs):
    """A module's structure; ``attrs``: dotted attribute names the grader asks about (one it
    lacks is left out)."""
    info = {
        "type": type(module).__name__,
        "params": {k: list(v.shape) for k, v in module.named_parameters()},
        "buffers": {k: [list(v.shape), str(v.dtype)] for k, v in module.named_buffers()},
        "state_keys": sorted(module.state_dict().keys()),
        "tensors": {k: list(v.shape) for k, v in _plain_tensors(module).items()},  # unregistered
        "attrs": {},
    }
    for dotted in attrs:
        value = module
        try:
            for attr in dotted.split("."):
                value = getattr(value, attr)
        except Exception:
            continue
        info["attrs"][dotted] = _summary(value)
    return info


# -- the plan probe: the one vocabulary the suites speak -------------------------------------
# Bounds of what one plan may send back: protocol.PLAN_*.


class _Budget:
    """What a plan's reply has used so far: tensor bytes and values."""

    def __init__(self):
        self.bytes = self.items = 0


def _plain(value, what, budget, depth=0):
    """A value of the student's as plain channel data (a copy): tensors, None, bool, int, float,
    str, lists (tuples and torch.Size become lists) and dicts with str keys, bounded; anything else is the
    student's error."""
    budget.items += 1
    if budget.items > PLAN_ITEMS:
        raise ProbeError("result", f"{what} holds more than {PLAN_ITEMS} values")
    if type(value) in (torch.Tensor, torch.nn.Parameter):
        tensor = _as_data(value, what)
        if budget.bytes + _nbytes(tensor) > protocol.MAX_BLOB:  # before the copy, which could exhaust the memory
            raise ProbeError("result", f"the result cannot be sent back: {what} holds more than the "
                                       f"channel's {protocol.MAX_BLOB >> 20} MiB")
        budget.bytes += _nbytes(tensor)
        return tensor.clone()
    if value is None or type(value) in (bool, float):
        return value
    if type(value) is int:
        if not -(1 << 63) <= value < (1 << 63):
            raise ProbeError("result", f"{what} holds an integer beyond 64 bits")
        return value
    if type(value) is str:
        if len(value) > PLAN_STRING:
            raise ProbeError("result", f"{what} holds a string of more than {PLAN_STRING} characters")
        return value
    if type(value) is collections.OrderedDict:  # a state_dict
        value = dict(value)
    if type(value) in (list, tuple, torch.Size, dict) and depth >= PLAN_DEPTH:
        raise ProbeError("result", f"{what} is nested more than {PLAN_DEPTH} levels deep")
    if type(value) in (list, tuple, torch.Size):
        return _plain_all(value, what, budget, depth + 1)
    if type(value) is dict:
        if not all(type(k) is str for k in value):
            raise ProbeError("result", f"{what} is a dict whose keys are not all str")
        return dict(zip(value, _plain_all(value.values(), what, budget, depth + 1)))
    if isinstance(value, torch.Tensor):
        raise ProbeError("result", f"{what} is a {type(value).__name__}, a tensor subclass; use a plain torch.Tensor")
    raise ProbeError("result", f"{what} is a {type(value).__name__}: expected tensors, numbers, str, None, "
                               "lists, tuples or dicts")


def _plain_all(values, what, budget, depth):
    """``_plain`` of each of ``values``; a number or None is taken in this loop, without a call
    (a module's description holds hundreds)."""
    found = []
    for value in values:
        if value is None or type(value) in (bool, float) or (type(value) is int and -(1 << 63) <= value < (1 << 63)):
            budget.items += 1
            if budget.items > PLAN_ITEMS:
                raise ProbeError("result", f"{what} holds more than {PLAN_ITEMS} values")
            found.append(value)
        else:
            found.append(_plain(value, what, budget, depth))
    return found


class _Printed:
    """What a call writes to sys.stdout: its first PLAN_STRING characters kept, the rest dropped."""

    def __init__(self):
        self.parts, self.size = [], 0

    def write(self, text):
        if isinstance(text, str) and self.size < PLAN_STRING:
            self.parts.append(text[:PLAN_STRING - self.size])
            self.size += len(self.parts[-1])
        return len(text) if isinstance(text, str) else 0

    def flush(self) -> None:
        pass

    def text(self) -> str:
        return "".join(self.parts)


class _Failed(Exception):
    """A step that cannot run because a step it uses failed."""


def _resolve(value, env, failed):
    """Request data with each {"$ref": step} replaced by that step's live object (tensors copied,
    so a call that changes its arguments cannot change a later step's)."""
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            name = value["$ref"]
            if name in failed:
                raise _Failed(name)
            return env[name]
        return {k: _resolve(v, env, failed) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, env, failed) for v in value]
    return value.clone() if type(value) is torch.Tensor else value


def _target(dotted, env, failed):
    """An earlier step's object, or ``module.name``, then attributes: ``tok.encode``,
    ``module.Class``, ``m.blocks.0.layer`` (digits index a sequence). ``torch.…`` is torch's own
    (``torch.optim.AdamW``), whatever the submission's modules import (``from torch import nn``)."""
    head, *rest = dotted.split(".")
    if head in failed:
        raise _Failed(head)
    if head in env:
        obj, path = env[head], head
    elif head == "torch" and rest:
        obj, path = torch, head
    else:
        if not rest:
            raise ProbeError("lookup", f"no earlier step or module.name called {dotted!r}")
        name, *rest = rest
        obj, path = _lookup(head, name), f"{head}.{name}"
    for attr in rest:
        path = f"{path}.{attr}"
        if attr.isdigit() and isinstance(obj, (torch.nn.Sequential, torch.nn.ModuleList, list, tuple)):
            obj = _run("lookup", path, lambda o=obj: o[int(attr)])
        else:
            obj = _run("lookup", path, getattr, obj, attr)
    return obj


def _step(step, env, failed, budget):
    """Run one step; returns (object, records)."""
    name = step["let"]
    _seed(step.get("seed"))
    records = {}
    if "call" in step:
        fn = _target(step["call"], env, failed)
        args = _resolve(step.get("args", []), env, failed)
        kwargs = _resolve(step.get("kwargs", {}), env, failed)
        what = step.get("what", f"{step['call']}()")
        # A live module being called is prepared before the call; a constructed one after.
        if isinstance(fn, torch.nn.Module):
            _prepare(fn, step, step["call"])
        handles = _hooks(step, fn, env, failed, records, budget)
        undo = _reloads(step, env, failed) + _replace(step) + _inject(step, records)
        printed = _Printed() if step.get("printed") else None
        try:
            with torch.enable_grad() if step.get("grad") else torch.no_grad(), \
                    contextlib.redirect_stdout(printed) if printed is not None else contextlib.nullcontext():
                obj = _run("call", what, fn, *args, **kwargs)
        finally:
            for handle in handles:
                handle.remove()
            for restore in undo:
                restore()
        if printed is not None:
            records["$printed"] = printed.text()
        if "$injected" in records:  # each stand-in's calls: what the submission passed it, as data
            records["$injected"] = {name: [_plain(call, f"what {what} passed to {name}", budget) for call in calls]
                                    for name, calls in records["$injected"].items()}
        if step.get("changed_args"):  # each argument sent as a tensor, as it is now where the call changed it
            records["$changed"] = [None if type(sent) is not torch.Tensor or _same_tensor(arg, sent)
                                   else _plain(arg, f"{what}: argument {k + 1}", budget)
                                   for k, (sent, arg) in enumerate(zip(step.get("args", []), args))]
        if step.get("result"):  # a function's answer: tensors or numbers only (the object stays live)
            _as_data(obj, step["result"])
        if not isinstance(fn, torch.nn.Module) and ({"params", "params_digest", "train", "stand_in",
                                                      "transpose_buffers"} & set(step)):
            if not isinstance(obj, torch.nn.Module):
                raise ProbeError("construct", f"{what} gave a {type(obj).__name__}, not an nn.Module")
            _prepare(obj, step, what)
    elif "data" in step:
        obj = _resolve(step["data"], env, failed)
    elif "describe" in step:
        module = _module(step["describe"], env, failed)
        obj = _run("describe", f"describing {step['describe']}", _describe_module, module, step.get("attrs", []))
    elif "parameters" in step:
        module = _module(step["parameters"], env, failed)
        obj = _run("parameters", f"{step['parameters']}.named_parameters()", lambda: dict(module.named_parameters()))
    elif "unregistered" in step:
        module = _module(step["unregistered"], env, failed)
        obj = {k: v for k, v in _run("unregistered", f"the tensors of {step['unregistered']}", _plain_tensors,
                                     module).items()
               if v.layout == torch.strided and v.device.type == "cpu" and not v.is_complex()}
    elif "iterate" in step:
        source = _target(step["iterate"], env, failed)
        limit = step.get("limit", PLAN_LIMIT)
        obj = _run("iterate", f"iterating over {step['iterate']}",
                   lambda: list(itertools.islice(iter(source), limit)))
    elif "len" in step:
        source = _target(step["len"], env, failed)
        obj = _run("len", f"len({step['len']})", len, source)
    elif "attr" in step:
        obj = _target(step["attr"], env, failed)
    elif "read_file" in step:
        obj = _run("read_file", f"reading {step['read_file']}", _read_file, step["read_file"], step.get("remove", False))
    elif "buffer" in step:  # bytes as a file object in memory (io.BytesIO): torch.load's without a file
        obj = io.BytesIO(_resolve(step["buffer"], env, failed).numpy().tobytes())
    elif "write_file" in step:
        obj = _run("write_file", f"writing {step['write_file']}", _write_file, step["write_file"], step["bytes"])
    elif "backward" in step:
        out = _target(step["backward"], env, failed)
        weight = _resolve(step.get("weight"), env, failed)
        if not isinstance(out, torch.Tensor) or (weight is not None and out.shape != weight.shape):
            shape = tuple(weight.shape) if weight is not None else "(any)"
            raise ProbeError("backward", f"{step['result']} did not return a tensor of shape {shape}" if "result" in step
                             else f"{step['backward']} is not a tensor of shape {shape}")
        obj = _run("backward", step.get("what", f"{step['backward']} backward"),
                   lambda: (out if weight is None else out * weight).sum().backward())
    elif "grads" in step:
        module = _module(step["grads"], env, failed)
        obj = _run("grads", f"{step['grads']}.named_parameters()",
                   lambda: {k: v.grad for k, v in module.named_parameters()})
    else:
        raise ProbeError("plan", f"step {name} does nothing")
    return obj, records


def _module(dotted, env, failed):
    module = _target(dotted, env, failed)
    if not isinstance(module, torch.nn.Module):
        raise ProbeError("lookup", f"{dotted} is a {type(module).__name__}, not an nn.Module")
    return module


def _prepare(module, step, what):
    if step.get("stand_in"):
        _stand_in(module, step["stand_in"], what)
    if step.get("params") is not None:
        _copy_parameters(module, step["params"], what, step.get("params_keep", ()))
    elif step.get("params_digest") is not None and not _drew(module, step["params_digest"]):
        raise ProbeError("load", f"{protocol.PARAMS_DIFFER}: {what} draws other parameters than the reference's")
    if "train" in step:
        _run("train", f"{what}.train()", module.train, bool(step["train"]))
    if step.get("transpose_buffers"):
        _run("transpose", f"{what}: transposing its buffers", _transpose_buffers, module, step["transpose_buffers"])


def _stand_in(module, spec, what):
    """Replace each named submodule by an ``nn.Linear`` with the grader's weight and bias, so a
    module built on lower pieces is run with a known function in their place (the grader does
    the same with the reference): a mistake in a lower piece then costs nothing here. Drawing
    no random numbers, the swap leaves the seeded draws after it as they were."""
    for dotted, weights in spec.items():
        _run("lookup", f"{what}.{dotted}", module.get_submodule, dotted)
        parent, _, leaf = dotted.rpartition(".")
        owner = _run("lookup", f"{what}.{parent}", module.get_submodule, parent)
        _run("stand-in", f"{what}.{dotted} = a stand-in", setattr, owner, leaf, _linear(weights))


def _linear(weights):
    """An ``nn.Linear`` holding the grader's ``weight`` and ``bias`` (None: none); it leaves the
    random state as it was (so the seeded draws after it stay theirs)."""
    weight, bias = weights["weight"], weights.get("bias")
    state = torch.get_rng_state()
    linear = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    torch.set_rng_state(state)
    with torch.no_grad():
        linear.weight.copy_(weight)
        if bias is not None:
            linear.bias.copy_(bias)
    return linear


def _inject(step, records):
    """``inject`` ({"module.Name": spec}): while the step runs, the name the submission's modules
    call (where it is defined, and wherever a module of the submission bound it) is a stand-in
    of the grader's, whatever the submission's own is (written, wrong or blank). Per spec, calling
    the stand-in gives an ``nn.Linear`` holding ``weight`` and ``bias`` or a copy of ``returns``
    (plain data), drawing no random numbers, or torch's ``torch.nn.<torch>`` built with ``kwargs``,
    drawing what torch draws (so the order the submission builds its pieces in shows). Each call's [k, args, kwargs] is recorded for the grader, k counting the calls of every stand-in
    of the step in turn (returns the undo functions)."""
    undo, order = [], []
    for dotted, spec in step.get("inject", {}).items():
        module_name, _, name = dotted.rpartition(".")
        calls = records.setdefault("$injected", {}).setdefault(dotted, [])
        try:
            own, defining = _lookup(module_name, name), [sys.modules[module_name]]
        except ProbeError:  # it does not import, or lacks the name: where imported, the name is a placeholder
            own, defining = None, []
        modules = list(dict.fromkeys(defining + _submission_modules()))
        undo += rebind(modules, module_name, name, own, stand_in_factory(spec, calls, order))
    return undo[::-1]


def rebind(modules, module_name, name, own, stand_in) -> list:
    """``stand_in`` bound, in each of ``modules``, where it holds ``own`` (under any name) or a
    placeholder of ``name``, and as ``name`` in the module ``module_name``; returns the undo
    functions. The grader does the same with the reference's modules (grading.probes.stood_in)."""
    undo = []
    for module in modules:
        for key, value in list(vars(module).items()):
            if value is own or (key == name and (module.__name__ == module_name or isinstance(value, _Unavailable))):
                setattr(module, key, stand_in)
                undo.append(lambda module=module, key=key, value=value: setattr(module, key, value))
    return undo


def _submission_modules():
    finder = _finder()
    return [sys.modules[name] for name in (finder.sources if finder is not None else ()) if name in sys.modules]


def stand_in_factory(spec, calls, order):
    """The grader's stand-in of a plan's ``inject`` spec (see ``_inject``), recording its calls in
    ``calls`` and their turn in ``order``."""
    def stand_in(*args, **kwargs):
        if len(order) >= PLAN_CALLS:
            raise ProbeError("stand-in", f"the grader's stand-ins were called more than {PLAN_CALLS} times")
        calls.append([len(order), list(args), kwargs])
        order.append(calls)
        if "returns" in spec:
            return _resolve(spec["returns"], {}, set())
        if "torch" in spec:
            return getattr(torch.nn, spec["torch"])(**spec.get("kwargs", {}))
        return _linear(spec)  # copies the grader's values: draws nothing
    return stand_in


def _hooks(step, fn, env, failed, records, budget):
    """Forward hooks on the submodules a step records: per call, [inputs..., output]. Names are
    relative to the module being called, or start with an earlier step's name."""
    handles = []
    for dotted in step.get("record", []):
        base = fn if isinstance(fn, torch.nn.Module) else None
        sub = (_run("lookup", f"{step['call']}.{dotted}", base.get_submodule, dotted) if base is not None
               else _target(dotted, env, failed))
        if not isinstance(sub, torch.nn.Module):
            raise ProbeError("lookup", f"{dotted} is a {type(sub).__name__}, not an nn.Module")
        calls = records[dotted] = []

        def hook(module, inputs, output, calls=calls, dotted=dotted) -> None:
            if len(calls) >= PLAN_CALLS:
                raise ProbeError("record", f"{dotted} was called more than {PLAN_CALLS} times")
            calls.append(_plain([*inputs, output], f"what {dotted} was given and returned", budget))
        handles.append(sub.register_forward_hook(hook))
    return handles


def _reloads(step, env, failed):
    """``reload`` ({earlier step: [params before its 2nd call, before its 3rd, ...]}): the grader's
    parameters copied into that module before each of its later calls in this step (None: left as
    they are). A witness, not a count: a cache keeps what the earlier calls computed with the
    earlier weights, a model that recomputes them follows the new ones, and the grader's expected
    answer says which. The forward is wrapped on the instance, so ``model(x)`` and
    ``model.forward(x)`` both see it; undone after the step (returns the undo functions)."""
    undo = []
    for dotted, sets in step.get("reload", {}).items():
        module = _module(dotted, env, failed)
        own = module.__dict__.get("forward")  # an instance forward of the submission's own, if any
        calls = [0]

        def forward(*args, _module=module, _inner=module.forward, _sets=sets, _calls=calls, _dotted=dotted,
                    **kwargs):
            k = _calls[0]
            _calls[0] += 1
            if 1 <= k <= len(_sets) and _sets[k - 1] is not None:
                _copy_parameters(_module, _sets[k - 1], f"{_dotted} (before its call {k + 1})")
            return _inner(*args, **kwargs)

        object.__setattr__(module, "forward", forward)

        def restore(module=module, own=own) -> None:
            if own is None:
                module.__dict__.pop("forward", None)
            else:
                object.__setattr__(module, "forward", own)
        undo.append(restore)
    return undo


def _replace(step):
    """``replace`` ({module.name: module.name}): each name set to the other's object for the call (a
    stand-in the grader owns for a lower piece the called function uses), put back after it; a
    module of the submission that is missing or broken is left out (returns the undo functions)."""
    undo = []
    for dotted, source in step.get("replace", {}).items():
        module_name, _, name = dotted.rpartition(".")
        finder = _finder()
        if finder is not None and (module_name not in finder.sources or module_name in finder.failed):
            continue
        module = _run("import", f"importing {module_name}", importlib.import_module, module_name)
        stand_in = _lookup(*source.rsplit(".", 1))
        had, old = hasattr(module, name), getattr(module, name, None)
        setattr(module, name, stand_in)
        undo.append(lambda module=module, name=name, had=had, old=old:
                    setattr(module, name, old) if had else delattr(module, name))
    return undo


def _read_file(path, remove):
    """The bytes of the file at ``path`` as a uint8 tensor (at most protocol.MAX_BLOB), the file
    removed afterwards where ``remove``, whether or not it could be read."""
    data = bytearray()
    try:
        with open(path, "rb") as f:  # in pieces: a read of MAX_BLOB bytes at once allocates them all first
            while len(data) <= protocol.MAX_BLOB and (piece := f.read(1 << 20)):
                data += piece
    finally:
        if remove and os.path.lexists(path):
            os.remove(path)
    if len(data) > protocol.MAX_BLOB:
        raise ProbeError("read_file", f"{path} holds more than {protocol.MAX_BLOB >> 20} MiB")
    return torch.frombuffer(data, dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)


def _write_file(path, data):
    with open(path, "wb") as f:
        f.write(data.numpy().tobytes())


def op_plan(req):
    """Run the grader's steps in order; each names its result (see session.StudentSession.plan),
    with the modules of ``req["variant"]`` (see SubmissionFinder.use) where it names one.

    A step that fails gets its error; the steps that use it are not run."""
    finder = _finder()
    if finder is not None:
        finder.use(req.get("variant"))
    _VARIANT[0] = req.get("variant") is not None
    env, failed, budget = {}, set(), _Budget()
    values, records, errors, unchanged, changed, wheres, printed, injected = {}, {}, {}, [], {}, {}, {}, {}
    sent = {step["let"]: step["data"] for step in req["steps"] if "data" in step}  # as the grader sent it
    for step in req["steps"]:
        name = step["let"]
        try:
            obj, recorded = _step(step, env, failed, budget)
            if step.get("return") and "changed_from" in step and _same_tensor(obj, sent.get(step["changed_from"])):
                unchanged.append(name)  # the grader holds this value already: it need not travel back
            elif step.get("return"):
                values[name] = _plain(obj, step.get("result") or f"{name} ({_action(step)})", budget)
            if "$changed" in recorded:
                changed[name] = recorded.pop("$changed")
            if "$printed" in recorded:
                printed[name] = recorded.pop("$printed")
            if "$injected" in recorded:
                injected[name] = recorded.pop("$injected")
            if "record" in step:
                records[name] = recorded
            env[name] = obj
        except _Failed as exc:
            failed.add(name)
            errors[name] = f"not run: {exc.args[0]} failed"
        except ProbeError as exc:
            failed.add(name)
            errors[name] = str(exc)
            if exc.where is not None:
                wheres[name] = exc.where
        except BaseException as exc:  # a student's object misbehaving where no _run wraps it
            failed.add(name)
            errors[name] = f"{_action(step)} raised {_describe(exc)}"
            if (where := _where(exc)) is not None:
                wheres[name] = where
    reply = {"values": values, "records": records, "errors": errors}
    if unchanged:
        reply["unchanged"] = unchanged
    if changed:
        reply["changed_args"] = changed
    if wheres:
        reply["wheres"] = wheres
    if printed:
        reply["printed"] = printed
    if injected:
        reply["injected"] = injected
    return reply


def _same_tensor(value, sent):
    """Whether ``value`` is exactly the tensor the grader sent (the same shape, dtype and bytes:
    compared as bytes, so a NaN is its own and -0.0 is not 0.0; no digests, a call's each argument
    is asked about)."""
    try:
        return (type(value) in (torch.Tensor, torch.nn.Parameter) and type(sent) is torch.Tensor
                and value.dtype == sent.dtype and value.shape == sent.shape
                and torch.equal(_bytes(value), _bytes(sent)))
    except Exception:  # a tensor with no readable bytes is sent back, or refused, as any value is
        return False


def _bytes(tensor):
    return torch.Tensor.detach(tensor).cpu().contiguous().reshape(-1).view(torch.uint8)


ACTIONS = ("call", "iterate", "len", "attr", "data", "backward", "grads", "parameters", "describe", "unregistered",
           "read_file", "write_file", "buffer")


def _action(step):
    key = next((k for k in ACTIONS if k in step), "step")
    return f"{key} {step[key] if isinstance(step.get(key), str) else ''}".strip()


def op_plans(req) -> dict:
    """Several plans in one round trip (``req["plans"]``: {"steps", "variant"} each, the steps
    ``req["steps"]`` where all share them); one reply each, a plan that fails as a whole its own
    {"ok": False, "error"}."""
    replies = []
    for plan in req["plans"]:
        try:
            replies.append({"ok": True, **op_plan({"steps": req.get("steps"), **plan})})
        except BaseException as exc:
            replies.append({"ok": False, "error": str(exc) if isinstance(exc, ProbeError) else _describe(exc)})
    return {"replies": replies}


OPS = {"plan": op_plan, "plans": op_plans}


def serve(sock, hello) -> None:
    """Answer requests until the grader hangs up."""
    protocol.send(sock, {"hello": hello})
    while True:
        try:
            request = protocol.recv(sock)
        except protocol.ChannelError:
            return
        if request.get("op") == "load":
            sys.meta_path.insert(0, SubmissionFinder(request["sources"]))
            sys.meta_path[0].variants = list(request.get("variants", ()))
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
