"""Feedback by search: one edit of the student's own source that makes a failed check pass.

For a failed check, the functions it called in the student's files (and the functions those call)
are edited one change at a time (``edits``: an axis, a transpose, an operator, a constant, a slice,
the arguments of a call, a variable, a removed call, two statements' order). Every candidate runs in
the sandbox as the student's code does (``session.plans``: a child loads each as a variant of the
submission, and runs many candidates' plans in one round trip), and the check itself, here in the
trusted process, compares each candidate's answers with its own expected ones. A candidate that
passes is run once more, alone, in a fresh child with the edited file as the submission: only then
is it a verified repair. Nothing the child says is a verdict, and no score ever changes: the
repair is feedback (``Check.repair``), bounded in candidates and in CPU time (``Work``: the
grader's and the children's, which a busy machine stretches far less than the wall clock).
"""
import ast
import collections
import decimal
import functools
import itertools
import re
import textwrap
import time
from dataclasses import dataclass

from ..sandbox import cputime
from .shapes import MAX_FUNCTION_NODES, MAX_SOURCE_CHARS

MAX_CANDIDATES = 600  # per submission
MAX_PER_CHECK = 200   # per failed check: a later one (often the same mistake seen from above) gets its turn
SHARE = 0.5           # of the grading's own time, the search may add (at least MIN_SECONDS)
MIN_SECONDS = 0.12
NAMED_SHARE = 0.3     # of that bound, where the catalogue named every failed check's mistake already
BATCHES = (8, 16)  # candidates per round trip: small first (the likeliest edits come first), then 16 at a time

# kind -> what the `change` hint says changes; in the order candidates are tried
KINDS = {"dimension": "the dimension argument", "transpose": "a transpose", "sign": "a sign or a negation",
         "operator": "the operator", "constant": "a constant", "slice": "a slice or index", "placement": "where a term sits",
         "removed": "a call or term removed", "arguments": "the order of the arguments",
         "order": "the order of two statements", "added": "a term added", "called": "a call's parentheses",
         "method": "a method call added", "rewritten": "a few of its tokens",
         "variable": "which variable is used"}
_DIM_KEYWORDS = {"dim", "axis", "dim0", "dim1", "start_dim", "end_dim"}
_REDUCTIONS = {"sum", "mean", "var", "std", "amax", "amin", "max", "min", "norm", "logsumexp", "prod", "argmax",
               "argmin"}
_COMPARES = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
_FILLS = {"zeros": "ones", "ones": "zeros", "zeros_like": "ones_like", "ones_like": "zeros_like"}
_TRANSPOSES = {"transpose", "permute", "t", "swapaxes", "mT", "T"}
_RESHAPES = {"reshape", "view", "contiguous", "flatten"}
_SWAPS = {ast.Add: (ast.Sub,), ast.Sub: (ast.Add,), ast.Mult: (ast.Div, ast.MatMult), ast.Div: (ast.Mult,),
          ast.MatMult: (ast.Mult,), ast.FloorDiv: (ast.Div,), ast.BitAnd: (ast.BitOr,), ast.BitOr: (ast.BitAnd,)}
# unparsed with their brackets, or (a slice) where no bracket may go
_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.Tuple, ast.List, ast.Slice)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


@dataclass(frozen=True)
class Edit:
    """One candidate: lines ``first``..``last`` of ``module`` become ``text``; ``line`` is the one the
    student is shown, ``old``/``new`` the fragment before and after, ``where`` the call it sits in."""
    module: str
    first: int
    last: int
    text: str
    line: int
    kind: str
    old: str
    new: str
    where: str = ""
    times: int = 1  # the same slip at each of its places on the line (`a[:n], b[:n]` for `a[-n:], b[-n:]`)

    def variant(self):
        return (self.module, self.first, self.last, self.text)

    def applied(self, sources) -> dict:
        """``sources`` with this edit made."""
        lines = sources[self.module].splitlines(keepends=True)
        lines[self.first - 1:self.last] = [self.text]
        return {**sources, self.module: "".join(lines)}

    def phrase(self) -> str:
        """The edit in the student's terms: "with `dim=-1` in place of `dim=0` in `torch.softmax(...)`"."""
        old, new = _short(self.old), _short(self.new)
        if self.kind == "order":
            return f"with `{new}` moved above `{old}`"
        if not self.new:
            return f"without `{old}`"
        places = f" at each of its {self.times} places on the line" if self.times > 1 else ""
        return f"with `{new}` in place of `{old}`" + (f" in `{self.where}`" if self.where else "") + places

    def data(self, sources) -> dict:
        """``Check.repair``: the file, the line, the line as written and as edited, the kind of change,
        the edit in words (``phrase``), and the last line it changes (two statements swapped: the
        second one's end)."""
        was = sources[self.module].splitlines()[self.line - 1]
        now = self.applied(sources)[self.module].splitlines()[self.line - 1]
        return {"file": f"{self.module}.py", "line": self.line, "was": was.strip(), "now": now.strip(),
                "kind": self.kind, "fix": self.phrase(), "last": self.last}


def _short(text, width=80):
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def sentence(repair, hints, others=False) -> str:
    """The feedback's first sentence for a check that ``repair`` (``Check.repair``) makes pass."""
    where = f"{repair['file']} line {repair['line']}: "
    if hints == "line":
        text = "one change on this line makes this check pass."
    elif hints == "fix":
        text = f"{repair['fix']} this check passes."
    else:
        text = f"a change of {KINDS[repair['kind']]} on this line makes this check pass."
    return where + text + (" Other single edits make it pass too." if others else "")


# -- the candidates ------------------------------------------------------------------------------

def _too_large(function):
    """Over the bound the shape analysis keeps too (shapes.MAX_FUNCTION_NODES): its edits would grow
    with the function, and a submission can write one of any size (the search tries none there)."""
    return sum(1 for _ in itertools.islice(ast.walk(function), MAX_FUNCTION_NODES + 1)) > MAX_FUNCTION_NODES


def _stub(function):
    return any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n.exc or ast.Pass())
               for n in ast.walk(function))


class _Module:
    """One of the student's files, parsed once: its functions and classes by name."""

    def __init__(self, name, source):
        self.name, self.source = name, source
        self.tree = ast.parse(source)
        self.lines = source.splitlines(keepends=True)
        self.defs, self.methods, self.imports, self.walked = {}, {}, {}, {}
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs[node.name] = [node]
            elif isinstance(node, ast.ClassDef):
                methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                self.methods.update({f"{node.name}.{m.name}": m for m in methods})
                # forward first: what a check calls most
                self.defs[node.name] = sorted(methods, key=lambda m: m.name != "forward")
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.imports.update({a.asname or a.name: (node.module, a.name) for a in node.names})

    @functools.cached_property
    def applied(self) -> dict:
        """{name: the methods called on it without arguments anywhere in the file} (`item.strip()`)."""
        found = {}
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                    and not n.args and not n.keywords and n.func.value.id not in ("self", "torch", "nn", "F"):
                found.setdefault(n.func.value.id, set()).add(n.func.attr)
        return {k: sorted(v) for k, v in found.items()}

    def walk(self, function) -> list:
        """``ast.walk(function)``, listed once: every edit kind walks it."""
        if id(function) not in self.walked:
            self.walked[id(function)] = list(ast.walk(function))
        return self.walked[id(function)]

    def segment(self, node):
        """``node``'s text as the student wrote it."""
        text = "".join(self.lines[node.lineno - 1:node.end_lineno]).encode()
        end = len(text) - len(self.lines[node.end_lineno - 1].encode()) + node.end_col_offset
        return text[node.col_offset:end].decode(errors="replace")

    def span(self, node, text):
        """``node``'s text replaced by ``text``: (first, last, the new text of those lines)."""
        first, last = node.lineno, node.end_lineno
        head = self.lines[first - 1].encode()[:node.col_offset].decode(errors="replace")
        tail = self.lines[last - 1].encode()[node.end_col_offset:].decode(errors="replace")
        return first, last, head + text + tail


def targets(modules, asked, fault=None) -> list:
    """[(module, function node, tier)]: what the check called (``asked``: "module.name"; ``fault``:
    (module, qualified name, line) of the function that raised), tier 0, then what those call, tier 1,
    nearest first: a function or method of the student's, or the ``forward`` of a submodule their
    class built from a class of theirs (``self.att(x)``, ``for block in self.trf_blocks``), down to
    DEPTH calls away."""
    found, seen = [], set()

    def add(module, nodes, tier):
        for node in nodes:
            if id(node) not in seen and not _stub(node) and not _too_large(node):
                seen.add(id(node))
                found.append((module, node, tier))

    if fault and fault[0] in modules:
        add(modules[fault[0]], [modules[fault[0]].methods.get(fault[1])] * (fault[1] in modules[fault[0]].methods)
            or modules[fault[0]].defs.get(fault[1], []), 0)
    for name in asked:
        module, _, attr = name.partition(".")
        if module in modules:
            add(modules[module], modules[module].defs.get(attr.split(".")[0], []), 0)
    level = list(found)
    for _ in range(DEPTH):
        before = len(found)
        for module, node, _ in level:
            for where, defs in _callees(modules, module, node):
                add(where, defs, 1)
        level = found[before:]
    return found


DEPTH = 3  # calls away from what the check called: a GPT's forward, its blocks', their attention's


def _resolve(modules, module, name):
    """Where the name ``name`` that ``module`` uses is defined among the student's files: (module, name)."""
    if name in module.imports and module.imports[name][0] in modules:
        return modules[module.imports[name][0]], module.imports[name][1]
    return module, name


def _callees(modules, module, node):
    """[(module, [function nodes])] that the function ``node`` calls: functions by name, its class's
    own methods, and the classes of the submodules it calls (its class's ``self.X = Class(...)``, or
    a container of them)."""
    owner = next((k.split(".")[0] for k, m in module.methods.items() if m is node), None)
    loops = {t.id: it for n in module.walk(node) if isinstance(n, ast.For) and isinstance(t := n.target, ast.Name)
             and isinstance(it := n.iter, ast.Attribute)}  # `for block in self.trf_blocks`
    out = []
    for call in module.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Name) and func.id in loops:
            func = loops[func.id]
        if isinstance(func, ast.Name):
            where, name = _resolve(modules, module, func.id)
            out.append((where, where.defs.get(name, [])))
        elif owner and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            method = module.methods.get(f"{owner}.{func.attr}")
            if method is not None:
                out.append((module, [method]))
                continue
            for built in _built(module, owner, func.attr):
                where, name = _resolve(modules, module, built)
                if name in where.defs and f"{name}.forward" in where.methods:
                    out.append((where, [where.methods[f"{name}.forward"]]))
    return out


def _built(module, owner, attr):
    """The names of the classes called in what class ``owner``'s methods assign to ``self.attr``."""
    names = []
    for key, method in module.methods.items():
        if key.split(".")[0] != owner:
            continue
        for stmt in module.walk(method):
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == attr
                                                    and isinstance(t.value, ast.Name) and t.value.id == "self"
                                                    for t in stmt.targets):
                names += [c.func.id for c in ast.walk(stmt.value) if isinstance(c, ast.Call)
                          and isinstance(c.func, ast.Name)]
    return names


def _int(node):
    """The value of an int literal (``-1`` included), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _text(node, text):
    """``node``'s source (``text``), in parentheses where it is an expression that may need them."""
    return f"({text})" if isinstance(node, ast.expr) and not isinstance(node, _ATOMIC) else text


def _call_name(call):
    return f"{ast.unparse(call.func)}(...)"


def edits(module, function, tier=0) -> list:
    """Every one-edit candidate of ``function`` (a node of ``module``), as (kind, Edit) pairs."""
    out, alike = [], {}

    def edit(kind, node, new, old_text=None, new_text=None, where=""):
        plain = new.id if isinstance(new, ast.Name) else ast.unparse(new)  # a name: most of the edits
        first, last, text = module.span(node, _text(new, plain))
        made = Edit(module.name, first, last, text, node.lineno, kind,
                    module.segment(node) if old_text is None else old_text, plain if new_text is None else new_text,
                    where)
        out.append(made)
        if first == last:  # the same edit elsewhere on its line: the slip may be made at each place
            alike.setdefault((made.kind, made.old, made.new, made.where, first), []).append((node, _text(new, plain)))

    def ints(node, values, kind, where="", prefix=""):
        value = _int(node)
        for other in values:
            if other != value:
                edit(kind, node, ast.Constant(other), f"{prefix}{value}", f"{prefix}{other}", where)

    names = _locals(module, function)
    params = [a.arg for a in function.args.args + function.args.kwonlyargs if a.arg not in ("self", "cls")]
    used = {n.id for n in module.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    unused = [p for p in params if p not in used]  # a parameter never read: the constant beside it may be it
    attributes = {n.attr for n in module.walk(function) if isinstance(n, ast.Attribute)
                  and isinstance(n.value, ast.Name) and n.value.id == "self"}
    called = {id(n.func) for n in module.walk(function) if isinstance(n, ast.Call)}
    powers = {id(n.right) for n in module.walk(function) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)}
    called_names = {n.func.id for n in module.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    keyed = [n for n in module.walk(function) if isinstance(n, ast.Subscript)
             and isinstance(n.slice, ast.Constant) and type(n.slice.value) is str]  # `params["g"]`
    keys = {n.slice.value for n in keyed if len(n.slice.value) <= 40}
    looked_up = sorted({module.segment(n) for n in keyed})
    applied = module.applied
    receivers = {id(n.func.value) for n in module.walk(function) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and not n.args and not n.keywords}
    for node in module.walk(function):
        if isinstance(node, ast.Call):
            where = _call_name(node)
            method = node.func.attr if isinstance(node.func, ast.Attribute) else None
            for kw in node.keywords:
                if kw.arg in _DIM_KEYWORDS and _int(kw.value) is not None:
                    ints(kw.value, (-1, -2, 0, 1, 2, 3), "dimension", where, f"{kw.arg}=")
                elif kw.arg == "diagonal" and _int(kw.value) is not None:
                    ints(kw.value, (-1, 0, 1, 2), "constant", where, "diagonal=")
                elif kw.arg and isinstance(kw.value, ast.Constant) and type(kw.value.value) is bool:
                    edit("constant", kw.value, ast.Constant(not kw.value.value), f"{kw.arg}={kw.value.value}",
                         f"{kw.arg}={not kw.value.value}", where)
                if kw.arg in params and isinstance(kw.value, ast.Constant):
                    edit("variable", kw.value, ast.Name(kw.arg), f"{kw.arg}={kw.value.value!r}",
                         f"{kw.arg}={kw.arg}", where)
            for arg in node.args:
                if _int(arg) is not None and abs(_int(arg)) <= 3:
                    ints(arg, (-1, -2, 0, 1, 2, 3), "transpose" if method in _TRANSPOSES else "dimension", where)
                if isinstance(arg, ast.Constant) and type(arg.value) in (int, float, bool):
                    for name in unused:
                        edit("variable", arg, ast.Name(name), where=where)
            given = {kw.arg for kw in node.keywords}
            for kw in node.keywords:  # `enumerate(xs, start=1)`, `bincount(x, minlength=n)`: a keyword not meant
                if kw.arg and isinstance(kw.value, (ast.Constant, ast.UnaryOp)) and kw.arg not in _DIM_KEYWORDS:
                    edit("removed", node, ast.Call(node.func, node.args, [k for k in node.keywords if k is not kw]),
                         f"{kw.arg}={module.segment(kw.value)}", "", where)
            if method in _REDUCTIONS and "keepdim" not in given:
                edit("constant", node, ast.Call(node.func, node.args, [*node.keywords, ast.keyword(
                    "keepdim", ast.Constant(True))]))
            if (method or getattr(node.func, "id", None)) in ("triu", "tril") and "diagonal" not in given \
                    and len(node.args) == 1:
                for k in (1, -1):
                    edit("constant", node, ast.Call(node.func, node.args, [*node.keywords, ast.keyword(
                        "diagonal", ast.Constant(k))]))
            if method in ("var", "std") and not given & {"unbiased", "correction"}:
                edit("constant", node, ast.Call(node.func, node.args, [*node.keywords, ast.keyword(
                    "unbiased", ast.Constant(False))]))
            if isinstance(node.func, ast.Name) and node.func.id in ("min", "max") and len(node.args) > 1:
                edit("operator", node.func, ast.Name("max" if node.func.id == "min" else "min"))
            if method == "get" and len(node.args) == 2 and isinstance(node.args[1], ast.Constant):
                for other in looked_up:  # `cfg.get(k, 1)` where another entry was the fallback
                    edit("constant", node.args[1], _as_written(other), where=where)
            interleaved = _interleaved(node) if method == "repeat" else None
            if interleaved is not None:  # k0 k1 k0 k1 where each copy in a row was meant, k0 k0 k1 k1
                edit("operator", node, interleaved)
            if isinstance(node.func, ast.Name) and node.func.id in ("list", "sorted") and len(node.args) == 1:
                edit("operator", node.func, ast.Name("sorted" if node.func.id == "list" else "list"))
            if method in _FILLS:  # a tensor initialised to zeros where ones were meant, and back
                edit("constant", node.func, ast.Attribute(node.func.value, _FILLS[method], ast.Load()))
            if method and not (isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "torch", "nn", "F")):
                edit("transpose" if method in _TRANSPOSES else "removed", node, node.func.value)
            if len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
                inner = node.args[0]
                edit("removed", node, inner)
                if isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Add, ast.Sub)):
                    edit("placement", node, ast.BinOp(ast.Call(node.func, [inner.left], []), inner.op, inner.right))
                if _method_call(inner):  # f(a.sum(...)) -> f(a).sum(...)
                    edit("placement", node, ast.Call(ast.Attribute(ast.Call(node.func, [inner.func.value], []),
                                                                   inner.func.attr, ast.Load()), inner.args, inner.keywords))
            if _method_call(node) and isinstance(node.func.value, ast.Call) and len(node.func.value.args) == 1 \
                    and not node.func.value.keywords and not isinstance(node.func.value.args[0], ast.Starred):
                outer = node.func.value  # f(a).sum(...) -> f(a.sum(...))
                edit("placement", node, ast.Call(outer.func, [ast.Call(ast.Attribute(
                    outer.args[0], node.func.attr, ast.Load()), node.args, node.keywords)], []))
            if method in _RESHAPES and not _turned(node.func.value):  # heads merged without moving them back
                edit("transpose", node, ast.Call(ast.Attribute(ast.Call(ast.Attribute(
                    node.func.value, "transpose", ast.Load()), [ast.Constant(1), ast.Constant(2)], []), method,
                    ast.Load()), node.args, node.keywords))
            if (method or getattr(node.func, "id", None)) == "einsum" and node.args and isinstance(
                    node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                quote = module.segment(node.args[0])[-1]  # the student's quotes, kept
                for subscripts in _einsum_swaps(node.args[0].value):  # an operand's or the output's axes
                    edit("transpose", node.args[0], _as_written(quote + subscripts + quote), where=where)
            for arg in node.args:  # `cat((new, old))` for `cat((old, new))`: a sequence's order
                if isinstance(arg, (ast.Tuple, ast.List)) and 2 <= len(arg.elts) <= 4:
                    for i in range(len(arg.elts) - 1):
                        elts = list(arg.elts)
                        if ast.dump(elts[i]) != ast.dump(elts[i + 1]) and not any(
                                isinstance(e, ast.Starred) for e in elts[i:i + 2]):
                            elts[i], elts[i + 1] = elts[i + 1], elts[i]
                            edit("arguments", arg, type(arg)(elts, ast.Load()), where=where)
            for i in range(len(node.args) - 1):
                a, b = node.args[i], node.args[i + 1]
                if ast.dump(a) != ast.dump(b) and not any(isinstance(x, ast.Starred) for x in (a, b)):
                    args = list(node.args)
                    args[i], args[i + 1] = b, a
                    edit("arguments", node, ast.Call(node.func, args, node.keywords), where=where)
        elif isinstance(node, ast.Attribute) and node.attr in ("T", "mT") and isinstance(node.ctx, ast.Load):
            edit("transpose", node, node.value)
        elif isinstance(node, ast.Attribute) and node.attr == "weight" and isinstance(node.ctx, ast.Load):
            edit("transpose", node, ast.Attribute(node, "T", ast.Load()))
        elif isinstance(node, ast.AugAssign):
            for op in _SWAPS.get(type(node.op), ()):
                edit("operator", node, ast.AugAssign(node.target, op(), node.value))
            edit("operator", node, ast.Assign([node.target], node.value, lineno=node.lineno))
        elif isinstance(node, (ast.For, ast.While)):
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (
                        ast.Name, ast.Subscript)) and stmt is not node:
                    edit("operator", stmt, ast.AugAssign(stmt.targets[0], ast.Add(), stmt.value))
        elif isinstance(node, ast.BinOp):
            for op in _SWAPS.get(type(node.op), ()):
                edit("operator", node, ast.BinOp(node.left, op(), node.right))
            if isinstance(node.op, (ast.Sub, ast.Div, ast.MatMult)):
                edit("arguments", node, ast.BinOp(node.right, node.op, node.left))
            if isinstance(node.op, (ast.Add, ast.Sub)):
                edit("removed", node, node.left)
            if isinstance(node.op, ast.Add) or (isinstance(node.op, ast.Sub) and isinstance(node.left, ast.Constant)):
                edit("removed", node, node.right)  # `1 - p` where `p` was meant too
                call = node.left
                if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords:
                    edit("placement", node, ast.Call(call.func, [ast.BinOp(call.args[0], node.op, node.right)], []))
                # `a / sqrt(v) + eps` for `a / sqrt(v + eps)`: the term outside the division too
                inner = node.left.right if isinstance(node.left, ast.BinOp) and isinstance(
                    node.left.op, (ast.Div, ast.Mult)) else None
                if isinstance(inner, ast.Call) and len(inner.args) == 1 and not inner.keywords:
                    moved = ast.Call(inner.func, [ast.BinOp(inner.args[0], node.op, node.right)], [])
                    edit("placement", node, ast.BinOp(node.left.left, node.left.op, moved))
            if isinstance(node.op, ast.MatMult):
                for side in ("left", "right"):
                    turned = ast.Call(ast.Attribute(getattr(node, side), "transpose", ast.Load()),
                                      [ast.Constant(-2), ast.Constant(-1)], [])
                    edit("transpose", node, ast.BinOp(turned if side == "left" else node.left, node.op,
                                                      turned if side == "right" else node.right))
                    plain, other = _untransposed(getattr(node, side)), node.right if side == "left" else node.left
                    if plain is not None:  # `q.T @ k` -> `q @ k.T`: the transpose on the other side
                        moved = plain[1](other)
                        edit("transpose", node, ast.BinOp(plain[0], node.op, moved) if side == "left"
                             else ast.BinOp(moved, node.op, plain[0]))
            if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and \
                    type(node.right.value) in (int, float) and node.right.value:
                c = node.right.value
                for other in dict.fromkeys((-c, 1 / c, 2 * c, c / 2)):
                    edit("constant", node.right, ast.Constant(other))
            elif _int(node.right) is not None:
                ints(node.right, (_int(node.right) - 1, _int(node.right) + 1), "constant", module.segment(node))
            if isinstance(node.op, ast.Pow) and not isinstance(node.right, ast.Constant):
                edit("sign", node.right, _negated(node.right))  # `b ** e` for `b ** -e`: a power not inverted
            if isinstance(node.op, ast.Div) and isinstance(node.left, ast.Constant):
                edit("removed", node, node.right)  # `1 / x` where `x` was meant
            if isinstance(node.op, ast.Mult) and (_int(node.left) or 0) > 0:  # `2 * d` for `4 * d`, `4 * d` for `d`
                c = _int(node.left)
                ints(node.left, [v for v in (c * 2, c // 2 if c % 2 == 0 else 0, c - 1, c + 1) if v > 0],
                     "constant", module.segment(node))
                edit("removed", node, node.right)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARES:
            # `<` for `<=`: an off-by-one at a bound; `==` for `!=`
            edit("operator", node, ast.Compare(node.left, [_COMPARES[type(node.ops[0])]()], node.comparators))
        elif isinstance(node, ast.Dict) and 2 <= len(node.keys) <= 4:  # `{**a, **b}` for `{**b, **a}`: who overrides
            for i in range(len(node.keys) - 1):
                if node.keys[i] is None and node.keys[i + 1] is None:
                    values = list(node.values)
                    values[i], values[i + 1] = values[i + 1], values[i]
                    edit("arguments", node, ast.Dict(list(node.keys), values))
        elif isinstance(node, ast.BoolOp):
            edit("operator", node, ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values))
        elif isinstance(node, ast.Constant) and type(node.value) is float and id(node) not in powers:
            # a decimal slip (1e-6 for 1e-5, 0.44715 for 0.044715), and a bound of 1.0 for 0.0 or back
            slips = [float(decimal.Decimal(repr(node.value)).scaleb(shift)) for shift in (1, -1)] if node.value else []
            for other in dict.fromkeys([*slips, *(v for v in (0.0, 1.0) if v != node.value)]):
                edit("constant", node, ast.Constant(other))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert, ast.Not)) \
                and _int(node) is None:
            edit("sign", node, node.operand)  # `-x`, `~mask`, `not c` where the plain value was meant
        elif isinstance(node, (ast.Tuple, ast.List)) and isinstance(node.ctx, ast.Load):
            # `cat((x2, -x1))` for `cat((-x2, x1))`: the minus on another element (one edit where the
            # sign sits, not a compensating one on a later line)
            signed = [i for i, e in enumerate(node.elts) if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub)]
            if len(signed) == 1 and len(node.elts) <= 4 and not any(isinstance(e, ast.Starred) for e in node.elts):
                for i in range(len(node.elts)):
                    if i != signed[0]:
                        elts = list(node.elts)
                        elts[signed[0]], elts[i] = elts[signed[0]].operand, _negated(elts[i])
                        edit("sign", node, type(node)(elts, ast.Load()))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and type(node.slice.value) is str:
            quote = module.segment(node.slice)[-1]  # `params["g"]` for `params["b"]`: another key read here
            for other in sorted(keys - {node.slice.value}):
                edit("variable", node.slice, _as_written(quote + other + quote), where=module.segment(node))
        elif isinstance(node, ast.Subscript):
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for part in parts:
                if _int(part) is not None and abs(_int(part)) <= 2:
                    ints(part, (-2, -1, 0, 1), "slice", module.segment(node))
                elif isinstance(part, ast.Slice) and part.step is None:
                    _slices(part, edit)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            for method in applied.get(node.id, ()):  # `item` where `item.strip()` was meant, as elsewhere
                if id(node) not in receivers:
                    edit("method", node, ast.Call(ast.Attribute(node, method, ast.Load()), [], []))
            for other in sorted(set(names) - {node.id}):
                # the same kind: both called, or neither; and the other one already has a value there
                if (id(node) in called) == (other in called_names) and names[other] < node.lineno:
                    edit("variable", node, ast.Name(other))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and tier == 0 and \
                isinstance(node.value, ast.Name) and node.value.id == "self":
            for other in sorted(attributes - {node.attr}):
                edit("variable", node, ast.Attribute(node.value, other, ast.Load()))
    unread_maps = _projections(module, function, edit) if tier == 0 else set()
    out += _at_each_place(module, alike)
    _statements(module, function, out)
    order = list(KINDS)
    # a value computed and never used is the likeliest one meant: the edits that use it come first
    # (a name unpacked beside others, `b, num_tokens, d_in = x.shape`, is often left unread: not one)
    unread = {n for n, value in _computed(function).items() if n in names and n not in used}

    def key(e):
        # a sibling written for its twin (`norm2` for `norm1`, `bias_k` for `bias_v`): a copy-paste slip,
        # tried with the operators, not after every other kind
        rank = order.index("operator" if e.kind == "variable" and _siblings(e.old, e.new) else e.kind)
        return (not (e.kind == "added" or (e.kind == "variable" and (e.new in unread or e.new in unread_maps))), rank,
                -_alike(e.old, e.new) if e.kind == "variable" else 0)
    return sorted(out, key=key)


def _at_each_place(module, alike) -> list:
    """One edit made at each of the places on a line where the same single edit fits (the slip
    copied: `keys[:, :n], values[:, :n]`, `[item for item in xs if item]` for `.strip()` twice)."""
    out = []
    for (kind, old, new, where, line), places in alike.items():
        places = sorted(places, key=lambda p: p[0].col_offset)
        if len(places) < 2 or any(a.end_col_offset > b.col_offset for (a, _), (b, _) in zip(places, places[1:])):
            continue  # one place, or places inside each other
        text = module.lines[line - 1].encode()
        for node, replacement in reversed(places):
            text = text[:node.col_offset] + replacement.encode() + text[node.end_col_offset:]
        out.append(Edit(module.name, line, line, text.decode(errors="replace"), line, kind, old, new, where,
                        len(places)))
    return out


def _interleaved(node):
    """``x.repeat(1, g, 1, 1)`` as ``x.repeat_interleave(g, dim=1)`` (None where more than one axis grows)."""
    grown = [i for i, a in enumerate(node.args) if _int(a) != 1]
    if node.keywords or len(node.args) < 2 or len(grown) != 1:
        return None
    return ast.Call(ast.Attribute(node.func.value, "repeat_interleave", ast.Load()), [node.args[grown[0]]],
                    [ast.keyword("dim", ast.Constant(grown[0]))])


def _as_written(text):
    """A node that ``edit`` puts in as ``text`` itself (a name's id is not unparsed): a string in the
    student's own quotes."""
    return ast.Name(text)


def _einsum_swaps(subscripts):
    """``einsum``'s subscripts with two letters of one operand, or of the output, swapped."""
    if subscripts.count("->") != 1 or not re.fullmatch(r"[a-zA-Z,\->. ]*", subscripts):
        return []
    terms = re.split(r"(,|->)", subscripts.replace(" ", ""))
    out = []
    for t, term in enumerate(terms):
        if term in (",", "->") or len(term) > 6:
            continue
        for i, j in itertools.combinations(range(len(term)), 2):
            if term[i] != term[j]:
                letters = list(term)
                letters[i], letters[j] = letters[j], letters[i]
                out.append("".join(terms[:t] + ["".join(letters)] + terms[t + 1:]))
    return out


def _siblings(a, b):
    """Whether two names differ in one of their parts only (split at `_` and digits, `self.` left out):
    `norm1`/`norm2`, `bias_k`/`bias_v`, `keys_new`/`values_new`, `d_in`/`d_out`; not `x`/`shortcut`."""
    parts = [re.findall(r"[A-Za-z]+|\d+", name.rpartition(".")[2]) for name in (a, b)]
    return len(parts[0]) == len(parts[1]) > 1 and sum(x != y for x, y in zip(*parts)) == 1


def _projections(module, function, edit):
    """A map of its class that ``function`` never uses, put where a sibling's is: `values = x` where
    `keys = x @ self.W_key` stands beside it and `self.W_value` is never read (or `self.W_key(x)`);
    and in place of its twin used twice, `self.norm2(x)` for `self.norm1(x)` where `self.norm1` is never read.
    Returns those maps ({"self.A"})."""
    owner = next((k.split(".")[0] for k, m in module.methods.items() if m is function), None)
    if owner is None:
        return set()
    methods = [m for k, m in module.methods.items() if k.split(".")[0] == owner]
    # the maps it holds: `self.A = <a call>` (nn.Linear(...), nn.Parameter(...)), not `self.d_out = d_out`
    assigned = {target.attr for m in methods for target, value in _assignments(m)
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self" and isinstance(value, ast.Call)}
    read = {n.attr for n in module.walk(function) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)}
    unread = sorted(assigned - read - {k.split(".")[1] for k in module.methods if k.startswith(owner + ".")})

    def own_map(node):  # self.A
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
    uses = collections.Counter(n.attr for n in module.walk(function) if own_map(n) and isinstance(n.ctx, ast.Load))
    styles, inside = {}, set()  # operand's dump -> how a map is applied to it ("matmul", "call")
    for node in module.walk(function):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and own_map(node.right):
            styles.setdefault(ast.dump(node.left), set()).add("matmul")
            inside.add(id(node.left))
        elif isinstance(node, ast.Call) and own_map(node.func) and len(node.args) == 1 and not node.keywords:
            styles.setdefault(ast.dump(node.args[0]), set()).add("call")
            inside.add(id(node.args[0]))
    for node in module.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in inside:
            for style in sorted(styles.get(ast.dump(node), ())):
                for attr in unread:
                    applied = ast.Attribute(ast.Name("self"), attr, ast.Load())
                    edit("added", node, ast.BinOp(node, ast.MatMult(), applied) if style == "matmul"
                         else ast.Call(applied, [node], []))
        if own_map(node) and isinstance(node.ctx, ast.Load) and node.attr in assigned and uses[node.attr] > 1:
            for attr in unread:  # used twice while its twin is never: a copy-paste
                if _siblings(node.attr, attr):
                    edit("variable", node, ast.Attribute(node.value, attr, ast.Load()))
    return {f"self.{attr}" for attr in unread}


def _method_call(node):
    """``a.m(...)``, ``a`` not a module nor ``self`` (``x.sum(dim=0)``, not ``torch.sum(x)``)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not (
        isinstance(node.func.value, ast.Name) and node.func.value.id in ("self", "torch", "nn", "F"))


def _untransposed(node):
    """(the tensor, a function putting the same transpose on another one) for ``a.T``, ``a.mT`` and
    ``a.transpose(i, j)``; else None."""
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        return node.value, lambda other: ast.Attribute(other, node.attr, ast.Load())
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "transpose" \
            and _method_call(node):
        return node.func.value, lambda other: ast.Call(ast.Attribute(other, "transpose", ast.Load()),
                                                       node.args, node.keywords)
    return None


def _turned(node):
    """Whether the chain of method calls ``node`` ends in (or holds) a transpose or a permute."""
    while isinstance(node, (ast.Call, ast.Attribute)):
        if isinstance(node, ast.Attribute) and node.attr in _TRANSPOSES:
            return True
        node = node.func if isinstance(node, ast.Call) else node.value
    return False


def _negated(node):
    return ast.UnaryOp(ast.USub(), node)


def _alike(a, b):
    """How alike two names are (the characters they share at the start and at the end): `keys` is
    more often written for `values`, `W_key` for `W_query`, than `x` for `context_vec`."""
    start = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    end = next((i for i, (x, y) in enumerate(zip(reversed(a), reversed(b))) if x != y), min(len(a), len(b)))
    return start + end


def _assignments(function):
    """(target, value) of each assignment in ``function``, a tuple's elements paired
    (``a, b = f(x), g(x)``); an unpacked value pairs each target with None."""
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, (ast.Tuple, ast.List)):
                    values = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) and \
                        len(node.value.elts) == len(target.elts) else [None] * len(target.elts)
                    yield from zip(target.elts, values)
                else:
                    yield target, node.value


def _computed(function):
    """{name: its value}: the local names of ``function`` given a value of their own (not unpacked)."""
    return {t.id: v for t, v in _assignments(function) if isinstance(t, ast.Name) and v is not None}


def _locals(module, function):
    """{name: the line it first has a value on} for the parameters (0) and assigned names of
    ``function`` (self and cls left out)."""
    names = {}
    for n in module.walk(function):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names[n.id] = min(names.get(n.id, n.lineno), n.lineno)
    names.update({a.arg: 0 for a in function.args.args + function.args.kwonlyargs})
    return {k: v for k, v in names.items() if k not in ("self", "cls")}


def _slices(part, edit):
    """A slice's bounds off by one, and ``[:n]`` from the other end (``[-n:]``), and back."""
    if part.lower is not None and part.upper is not None:  # the whole window one step over, either way
        for op in (ast.Add(), ast.Sub()):
            edit("slice", part, ast.Slice(ast.BinOp(part.lower, op, ast.Constant(1)),
                                          ast.BinOp(part.upper, op, ast.Constant(1))))
    for bound in ("lower", "upper"):
        value = getattr(part, bound)
        if value is None:
            continue
        for delta in (1, -1):
            moved = ast.BinOp(value, ast.Add() if delta > 0 else ast.Sub(), ast.Constant(1))
            if _int(value) is not None:
                moved = ast.Constant(_int(value) + delta)
            edit("slice", part, ast.Slice(**{**_bounds(part), bound: moved}))
    if (part.lower is None) != (part.upper is None):
        value = part.lower if part.upper is None else part.upper
        flipped = ast.Constant(-_int(value)) if _int(value) is not None else ast.UnaryOp(ast.USub(), value)
        edit("slice", part, ast.Slice(flipped, None) if part.lower is None else ast.Slice(None, flipped))


def _bounds(part):
    return {"lower": part.lower, "upper": part.upper, "step": part.step}


def _statements(module, function, out):
    """Two adjacent statements swapped, and a call's statement removed."""
    for node in module.walk(function):
        for body in (getattr(node, f, None) for f in ("body", "orelse")):
            if not isinstance(body, list):
                continue
            for a, b in zip(body, body[1:]):
                if isinstance(a, _SIMPLE) and isinstance(b, _SIMPLE) and a.end_lineno < b.lineno \
                        and _whole_lines(module, a) and _whole_lines(module, b):
                    lines = module.lines
                    text = "".join(lines[b.lineno - 1:b.end_lineno] + lines[a.end_lineno:b.lineno - 1]
                                   + lines[a.lineno - 1:a.end_lineno])
                    out.append(Edit(module.name, a.lineno, b.end_lineno, text, a.lineno, "order",
                                    ast.unparse(a), ast.unparse(b)))
            for stmt in body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Attribute, ast.Name)):
                    # `model.reset_cache` alone on its line does nothing: its call was meant
                    first, last, text = module.span(stmt.value, module.segment(stmt.value) + "()")
                    out.append(Edit(module.name, first, last, text, stmt.lineno, "called", module.segment(stmt.value),
                                    module.segment(stmt.value) + "()"))
                if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign)) and isinstance(
                        getattr(stmt, "value", None), (ast.Call, ast.BinOp)) and stmt is not function.body[-1]:
                    first, last, text = module.span(stmt, "pass")
                    out.append(Edit(module.name, first, last, text, stmt.lineno, "removed", ast.unparse(stmt), ""))


def _whole_lines(module, stmt):
    head = module.lines[stmt.lineno - 1].encode()[:stmt.col_offset]
    tail = module.lines[stmt.end_lineno - 1].encode()[stmt.end_col_offset:]
    return not head.strip() and tail.strip() in (b"", b"\\") and not tail.strip().startswith(b";")


@functools.lru_cache(maxsize=64)
def _parsed(name, source):
    """``source`` parsed as a ``_Module`` once for every failed check of a search (a class's blank
    stubs fail forty); None where it is too large to search or does not parse."""
    if len(source) > MAX_SOURCE_CHARS:  # as the shape analysis: too large to search
        return None
    try:
        return _Module(name, source)
    except (SyntaxError, ValueError, RecursionError):  # a file that does not parse has no edit to try
        return None


def reference_lines(assignment) -> dict:
    """{module: (its reference's lines, each pair of them in a row), as ``_bare`` writes them}: this
    assignment's modules and the earlier ones it builds on. Read in the trusted process only; a
    candidate that makes the student's lines lines of the reference is tried first, and one on lines
    the reference also has last (``_rank``)."""
    from . import course
    folders = [(assignment.solutions, m + ".py") for m in assignment.module_names]
    folders += [(course.get(earlier).solutions, m) for earlier, ms in assignment.builds_on.items() for m in ms]
    out = {}
    for folder, name in folders:
        out.setdefault(name.removesuffix(".py"), _reference_file(str(folder / name)))
    return out


@functools.lru_cache(maxsize=None)
def _reference_file(path) -> tuple:
    try:
        with open(path, encoding="utf-8") as f:
            return known_lines(f)
    except OSError:
        return frozenset(), frozenset()


def known_lines(lines) -> tuple:
    """(the lines, each two in a row), bare (``_bare``; blank lines left out), and each distinct line
    as written (its code and its tokens, ``_tokens``) for ``_rewritten``."""
    lines = list(lines)
    bare = [b for b in map(_bare, lines) if b]
    written = {code: tokens for code in map(_code, lines) if (tokens := _tokens(code))}
    return frozenset(bare), frozenset(zip(bare, bare[1:])), tuple(written.items())


def _code(line) -> str:
    return line.rstrip("\r\n")


_TOKEN = re.compile(r"""(?:[rbfuRBFU]{1,2})?(?:'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")"""
                    r"|0[xXoObB][\da-fA-F_]+|(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[jJ]?"
                    r"|[A-Za-z_]\w*|\*\*|//|==|!=|<=|>=|->|\S")


def _tokens(code) -> tuple:
    """(text in one kind of quotes, start, end) of each of ``code``'s tokens, up to its comment."""
    out = []
    for m in _TOKEN.finditer(code):
        if m.group() == "#":
            break
        out.append((m.group().replace("'", '"'), m.start(), m.end()))
    return tuple(out)


@functools.lru_cache(maxsize=1 << 16)
def _bare(line) -> str:
    """A line up to its comment (``_tokens`` finds where it starts), without its spaces, in one kind
    of quotes."""
    if "#" in line:
        return "".join("".join(token.split()) for token, _, _ in _tokens(line))
    return "".join(line.split()).replace("'", '"')  # the same, faster: the tokens are every non-space


def _rank(edit, module, known) -> int:
    """0 where ``edit`` makes its lines of ``module`` lines of the reference (``known``: its
    ``known_lines``), in the reference's order where it spans several, and they were not already;
    1 where they were not (the student's own lines, the likelier place of a mistake); 2 where they
    were, but not between the reference's neighbours (written twice, or moved); 3 where they were
    already, in their place (the edit can only take them away from it)."""
    lines, pairs = known[:2]

    def fits(text):
        bare = [b for b in map(_bare, text) if b]
        return all(b in lines for b in bare) and all(p in pairs for p in zip(bare, bare[1:]))
    # the reference's with the lines around them too: a line of the reference written a second time,
    # or in another place, is the student's own
    before = next((line for line in reversed(module.lines[:edit.first - 1]) if _bare(line)), "")
    after = next((line for line in module.lines[edit.last:] if _bare(line)), "")
    written = module.lines[edit.first - 1:edit.last]
    if fits([before, *written, after]):
        return 3
    return 0 if fits(edit.text.splitlines()) else 2 if fits(written) else 1


RUN = 12  # tokens of a line a rewrite may change, on either side


def _run(tokens, p, q):
    """Where the tokens between the first ``p`` and the last ``q`` of a line sit in it, with the
    spaces around them: (start, end)."""
    return tokens[p - 1][2] if p else tokens[0][1], tokens[len(tokens) - q][1] if q else tokens[-1][2]


def _parses(lines) -> bool:
    """Whether a function's lines (as ``module.lines`` holds them) parse on their own."""
    try:
        ast.parse(textwrap.dedent("".join(lines)))
        return True
    except (SyntaxError, ValueError):
        return False


def _rewritten(module, function, known) -> list:
    """Each of ``function``'s lines that the reference does not have, made the reference's line
    nearest it where the two differ in one run of at most RUN tokens and share at least as many as
    they differ in (a pattern's characters, a filter left out, `x *` dropped, `arange(1, n + 1)`):
    kind "rewritten", or "added"/"removed" where one side of the run is empty. Two of the nearest,
    at most, for each line; only a candidate that parses."""
    lines, _, written = known
    skip = {n for node in module.walk(function) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            for n in range(node.lineno, node.end_lineno + 1)}  # a docstring
    out, first = [], min([function.lineno] + [d.lineno for d in function.decorator_list])
    for number in range(function.body[0].lineno, function.end_lineno + 1):
        line = module.lines[number - 1]
        mine = _tokens(_code(line))
        if not mine or number in skip or _bare(line) in lines:
            continue
        near = []
        for code, theirs in written:
            p = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a[0] != b[0]), min(len(mine), len(theirs)))
            q = next((i for i, (a, b) in enumerate(zip(reversed(mine[p:]), reversed(theirs[p:]))) if a[0] != b[0]),
                     min(len(mine), len(theirs)) - p)
            run = max(len(mine), len(theirs)) - p - q
            if 0 < run <= RUN and p + q >= max(2, run):
                near.append((-(p + q), code, theirs, p, q))
        for _, code, theirs, p, q in sorted(near)[:2]:
            (start, end), (r_start, r_end) = _run(mine, p, q), _run(theirs, p, q)
            text = line[:start] + code[r_start:r_end] + line[end:]
            if not _parses(module.lines[first - 1:number - 1] + [text] + module.lines[number:function.end_lineno]):
                continue
            old, new = line[start:end].strip(), code[r_start:r_end].strip()
            kind = "rewritten" if old and new else "removed" if old else "added"
            if kind == "added":  # shown with the token after it (at the line's end, the one before)
                if q:
                    old, new = line[start:mine[-q][2]].strip(), code[r_start:theirs[-q][2]].strip()
                else:
                    old, new = line[mine[p - 1][1]:end].strip(), code[theirs[p - 1][1]:r_end].strip()
            out.append(Edit(module.name, number, number, text, number, kind, old, new))
    return out


def candidates(sources, own, asked, fault=None, known=None) -> list:
    """The one-edit candidates for a check that called ``asked`` (and raised in ``fault``), nearest
    first: the functions it called, in the order of ``KINDS``, then what those call; each once.
    ``known`` (``reference_lines``): an edit that makes the student's lines lines of the reference's
    same module comes before the rest, and one on lines the reference has too after them (most
    students write the book's lines, and so does the reference; a candidate is still only a repair
    once the check passes with it)."""
    modules = {name: module for name in own if (module := _parsed(name, sources[name])) is not None}
    seen, out = set(), []
    for tier in (0, 1):
        for module, function, level in targets(modules, asked, fault):
            if level != tier:
                continue
            found = edits(module, function, tier)
            if known and module.name in known:
                found += _rewritten(module, function, known[module.name])
            for e in found:
                key = e.variant()
                if key not in seen and e.text != "".join(module.lines[e.first - 1:e.last]):
                    seen.add(key)
                    out.append(e)
    if fault and len(fault) > 2 and fault[0] in modules:
        near = _backward_slice(modules[fault[0]], fault[1], fault[2])
        # where the check raised: the lines whose values reach the line that raised, nearest first
        out.sort(key=lambda e: (0, near[e.module, e.line]) if (e.module, e.line) in near else (1, 0))
    if known:
        out.sort(key=lambda e: _rank(e, modules[e.module], known[e.module]) if e.module in known else 1)
    return out


def _backward_slice(module, qualname, line):
    """{(module, line): rank} of the statements whose values reach ``line`` of ``qualname`` (the
    line that raised): that line (rank 0), the earlier statements of its function that assign a name
    it reads, and so on (ranked by distance), then where its class assigns a ``self.`` attribute
    they read (after them)."""
    function = module.methods.get(qualname) or next(iter(module.defs.get(qualname, [])), None)
    if function is None:
        return {}
    statements = [n for n in module.walk(function) if isinstance(n, ast.stmt) and n is not function
                  and not isinstance(n, (ast.For, ast.While, ast.If, ast.With, ast.Try))]

    def reads(stmt):
        return {ast.unparse(n) for n in ast.walk(stmt) if isinstance(n, (ast.Name, ast.Attribute))
                and isinstance(n.ctx, ast.Load)}

    def writes(stmt):  # `a`, `self.a`, and each of `a, self.b = ...`
        return {ast.unparse(n) for n in ast.walk(stmt)
                if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Store)}
    faulty = [s for s in statements if s.lineno <= line <= s.end_lineno]
    if not faulty:
        return {}
    wanted, near = set().union(*map(reads, faulty)), {(module.name, line): 0}
    for stmt in sorted((s for s in statements if s.lineno < line), key=lambda s: -s.lineno):
        if writes(stmt) & wanted:
            near[module.name, stmt.lineno] = line - stmt.lineno
            wanted |= reads(stmt)
    owner = qualname.split(".")[0]
    for name, method in module.methods.items():
        if name.split(".")[0] == owner and method is not function:
            for stmt in ast.walk(method):
                if isinstance(stmt, ast.stmt) and writes(stmt) & wanted:
                    near.setdefault((module.name, stmt.lineno), line + stmt.lineno)
    return near


# -- running them ---------------------------------------------------------------------------------

def _same(a, b):
    """Whether two plans' steps are the same (tensors by value). Plain leaves (ids, words, names)
    are compared where they stand: a chapter-2 plan holds thousands of them."""
    import torch
    if type(a) in _PLAIN or type(b) in _PLAIN:
        return type(a) is type(b) and a == b
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and torch.equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_leaf_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_leaf_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _leaf_same(x, y):
    if type(x) in _PLAIN:
        return type(x) is type(y) and x == y
    return _same(x, y)


_PLAIN = (int, float, str, bool, type(None))


class _Batch:
    """Candidates run together: the n-th plan one candidate's check sends is sent, in the same round
    trip, for every later candidate of the batch (the checks send the same inputs), and each
    candidate's check then reads its own answer. ``limit``: the CPU seconds a round trip may take."""

    def __init__(self, session, members, work, limit=None):
        self.session, self.members, self.work, self.limit = session, members, work, limit
        self.sent = {}  # n -> (steps, {variant: Plan or StudentFailure})
        self.unsearchable = False  # the check needs what the search does not run: no candidate can pass it
        self.reached = set()  # members that answered every plan before one the search does not run
        self.lost = False  # a round trip of several failed whole (one of them too slow, or the child died)

    def answer(self, variant, n, steps, needs, memory):
        from ..sandbox.session import StudentFailure
        if memory is not None:  # a child of its own per plan: not run in the search
            if n == 0:
                self.unsearchable = True
            else:  # the check compared every answer before this one and went on: confirmation runs the rest
                self.reached.add(variant)
            return StudentFailure("not run in the repair search")
        left = self.work.left() if self.limit is None else min(self.limit, self.work.left())
        timeout = max(0.05, min(self.session.timeout, left))  # CPU seconds, as the session's
        known = self.sent.get(n)
        if known is not None and variant in known[1] and _same(known[0], steps):
            return known[1][variant]
        later = self.members[self.members.index(variant):] if known is None else [variant]
        answers = self.session.plans([(steps, needs, v) for v in later], timeout=timeout)
        if len(later) > 1 and isinstance(answers[0], StudentFailure) and all(a is answers[0] for a in answers):
            self.lost = True  # one failure for all (plans' own: no answer of the child's says so)
        answers = dict(zip(later, answers))
        if known is None:
            self.sent[n] = (steps, answers)
        return answers[variant]


class _Variant:
    """What a check sees as the submission's session while one candidate runs."""

    def __init__(self, batch, variant, sources):
        self.batch, self.variant, self.sources = batch, variant, sources
        self.faults, self.calls = [], 0

    def plan(self, steps, *, needs=None, timeout=None, batch=False, memory=None):
        n, self.calls = self.calls, self.calls + 1
        answer = self.batch.answer(self.variant, n, steps, needs, memory)
        if isinstance(answer, Exception):
            raise answer
        return answer


@dataclass
class Failed:
    """A failed check as the search needs it: ``passes(session)`` runs it again on that session
    (True where it passes, by the check's own comparisons here); what it asked the child
    for (``asked``) and where it raised (``fault``: (module, function, line))."""
    index: int
    passes: object
    asked: tuple
    fault: object


class Work:
    """The search's clock: CPU seconds of this process and of the sandboxed children it runs (read
    from outside them, sandbox/cputime), which a busy machine stretches far less than the wall clock
    (tests/test_busy_machine.py); the wall clock only a backstop (``cputime.backstop``) against a
    child that stalls."""

    def __init__(self, session, seconds):
        self.session, self.seconds = session, seconds
        self.children = 0.0  # CPU seconds of the children that confirmed a repair, gone now
        self.start = self._now()
        self.backstop = time.monotonic() + cputime.backstop(seconds)

    def _now(self):
        return time.process_time() + self.session.cpu_seconds() + self.children

    def used(self) -> float:
        return self._now() - self.start

    def left(self) -> float:
        return self.seconds - self.used()

    def over(self) -> bool:
        return self.left() <= 0 or time.monotonic() > self.backstop


def search(failed, session, own, new_session, seconds, max_candidates=MAX_CANDIDATES, kept=(), known=None):
    """{check index: (repair data, others exist)} for the ``failed`` checks (``Failed``) of the
    submission that ``session`` graded (``own``: the modules its student wrote), and what the
    search did. The candidates run in that session's child, as variants (``StudentSession.vary``);
    a repair is confirmed in a fresh one, ``new_session(sources)``, where the ``kept`` checks (those
    that passed) that call the edited file must pass too. ``seconds``: the bound in CPU seconds (``Work``);
    ``known``: the reference's lines, the candidates' first order (``candidates``)."""
    sources = session.sources
    work = Work(session, seconds)
    session.deadline = max(session.deadline, work.backstop)  # the search's own bound, not what grading left
    found, tried, bound, cache = {}, 0, None, {}
    fixes = {}  # check index -> [(checks the repair makes pass, its Edit, others exist)]
    # in the order they ran (the suites check the lower functions first); a repair found for one check
    # is run on every other failed one (one mistake fails several checks)
    for check in failed:
        if check.index in fixes:
            continue
        if work.over():
            bound = "time"
            break
        key = (check.asked, check.fault)
        if key not in cache:  # [candidates, how many of them checks before this one tried]
            cache[key] = [candidates(sources, own, check.asked, check.fault, known), 0]
        every, start = cache[key]
        # a check that called the same functions as an earlier one goes on from where that one stopped
        pool = every[start:start + max(0, min(MAX_PER_CHECK, max_candidates - tried))]
        cache[key][1] = start + len(pool)
        if start + len(pool) < len(every):
            bound = "candidates"
        while pool:  # until a candidate is confirmed, or none is left
            hit, count, timed_out = _first_passing(check, pool, session, work)
            tried += count
            bound = bound or ("time" if timed_out else None)
            if hit is None:
                break
            edit, others = hit
            confirmed = _confirm(edit, sources, [check] + [c for c in failed if c is not check], new_session, kept, work)
            for c in confirmed:
                fixes.setdefault(c.index, []).append((len(confirmed), edit, others and c is check))
            pool = [] if confirmed else pool[pool.index(edit) + 1:]
    # where several repairs make a check pass: the one that makes the most of them pass (it explains
    # the most), and of those the first found (the nearest the check that found it)
    for index, options in fixes.items():
        _, edit, others = max(options, key=lambda o: o[0])
        found[index] = (edit.data(sources), others or len(options) > 1)
    return found, {"checks": len(failed), "candidates": tried, "seconds": round(work.used(), 3),
                   "found": len(found), "bound": bound}


def _first_passing(check, pool, session, work):
    """The nearest candidate of ``pool`` that ``check`` passes (or passes up to a plan the search does
    not run, a memory measurement: ``_confirm`` runs that one), with whether others in its batch do;
    (None, ...) where none does before ``work`` is over. Returns (hit, candidates tried, timed out)."""
    if not pool:
        return None, 0, False
    session.vary([e.variant() for e in pool])
    sources, tried, start, each = session.sources, set(), 0, None
    sizes = iter((*BATCHES, *[BATCHES[-1]] * len(pool)))
    again = []  # the halves of a round trip lost whole, run before the candidates after them
    while True:
        if again:
            members = again.pop(0)
        else:
            size = next(sizes)
            if each:  # no larger than the time left holds: a round trip cut short by the bound is lost whole
                size = max(1, min(size, int(work.left() / (1.25 * each))))
            members = list(range(start, min(start + size, len(pool))))
            start += len(members)
        if not members:
            break
        if work.over():
            return None, len(tried), True
        # one slow candidate (a loop made long by its edit) costs a few times the batch, not the whole bound
        limit = None if each is None else max(0.02, 3 * each * len(members))
        batch, before = _Batch(session, members, work, limit), work.used()
        passing = []
        for i in members:
            if work.over():
                break
            tried.add(i)
            if check.passes(_Variant(batch, i, pool[i].applied(sources))) or i in batch.reached:
                passing.append(i)
            elif batch.unsearchable:  # the rest of the pool would fail the same way: left to other checks
                return None, len(tried), False
        if passing:
            return (pool[passing[0]], len(passing) > 1), len(tried), False
        if batch.lost:
            if len(members) > 1:
                again[:0] = [members[:len(members) // 2], members[len(members) // 2:]]
            continue
        each = max(each or 0.0, (work.used() - before) / len(members))  # this check's cost of a candidate
    return None, len(tried), work.over()


def _confirm(edit, sources, checks, new_session, kept, work):
    """The checks among ``checks`` that pass with ``edit`` made, each run as the student's code is:
    a fresh child whose submission is the edited sources, nothing else; none where the edit breaks
    one of the ``kept`` checks that calls the edited file (it passed before: the edit is no repair,
    only a coincidence the failed check cannot tell from one)."""
    session = new_session(edit.applied(sources))
    try:
        fixed = [c for c in checks if c.passes(session)]
        near = [c for c in kept if any(name.split(".")[0] == edit.module for name in c.asked)]
        return fixed if fixed and all(c.passes(session) for c in near) else []
    finally:
        work.children += session.cpu_seconds()  # the search's own work: its bound counts it
        session.close()
