"""An exception from the student's code, explained by the shapes of their tensors and the book's.

Trusted side. The child reports where the student's code raised (``session.Fault``: the
function, the line, each tensor local's shape; checked as data). Here the same steps run on
the reference, in this process, and the book's function of the same name is watched as it
returns: a local that both functions have, that the student's code no longer changes after
the failing line, and whose shape differs from the book's, is named with both shapes. Where
none does (or the reference cannot be run that way), the message lists the student's tensors
at that line and stops: it never guesses a cause the evidence does not show. The line shown is
read from the student's sources the grader holds, never from the child.

The child chooses where it says the code raised (a submission can point it into a huge generated
function), so the work is bounded: the module parsed and the function walked by size, the
replay of the book's code by the calls recorded and by time. Over a bound, the tensors are
listed and the feedback says the comparison was skipped, and why.
"""
import ast
import functools
import itertools
import re
import sys
import time

import torch

from . import course
from ..sandbox import child


# The bounds (see the module's docstring). The book's largest module is 12.6 KiB, its largest
# function 389 syntax nodes, and a replay of a check's steps takes milliseconds: an honest
# submission stays far inside them, a forged where into 240 KiB of loops cost 10 s a check.
MAX_SOURCE_CHARS = 64 << 10
MAX_FUNCTION_NODES = 5000
MAX_BOOK_CALLS = 1000
BOOK_SECONDS = 2.0
SKIPPED = "The grader did not compare them with the book's code: "


class Skipped(Exception):
    """Over a bound: the sentence that says which, for the feedback."""


def explain(fault, sources, assignment) -> str | None:
    """One or two sentences about ``fault`` (a session.Fault) for the check's feedback, or None."""
    where = fault.where
    yours = dict(where.tensors)
    if not yours:
        return None
    text = sources[where.module].split("\n")[where.line - 1].strip()  # lines as Python counts them
    if len(text) > 100:
        text = text[:99] + "…"
    place = f"In your `{where.function}` ({where.module}.py line {where.line}: {_code(text)})"
    skipped = None
    try:
        settled, makes = _statement(sources[where.module], where.function, where.line, yours)
        book, returned = _book_locals(fault, assignment) if settled or makes else ({}, None)
    except Skipped as exc:
        settled, makes, book, returned, skipped = [], None, {}, None, str(exc)
    differ = [(name, yours[name], book[name]) for name in settled if name in book and yours[name] != book[name]]
    if differ:  # a tensor whose every successor has the book's shape is not where the shapes part
        made = _made_from(sources[where.module], where.function, where.line, [name for name, _, _ in differ])
        differ = [(name, mine, theirs) for name, mine, theirs in differ
                  if not ((after := [m for m in made.get(name, ()) if m in settled and m in book])
                          and all(yours[m] == book[m] for m in after))]
    if differ:
        said = place + ": " + "; ".join(f"your `{name}` {_has(mine)} where the book's code {_has(theirs)}"
                                        for name, mine, theirs in differ) + "."
    else:
        said = place + ", your tensors had these shapes: " + ", ".join(
            f"`{name}` {_shape_text(shape)}" for name, shape in yours.items()) + "."
    if makes is RETURN and returned is not None:
        said += f" The book's `{where.function}` returns {_of(returned)} there."
    elif makes is not None and makes is not RETURN and makes in book:
        said += f" In the book's code, `{makes}` (what this line makes) {_has(book[makes])}."
    said += _asked(fault.error, returned if makes is RETURN else book.get(makes))
    if skipped:
        said += " " + SKIPPED + skipped
    return said


RETURN = object()   # the failing statement is a return
_VIEW = re.compile(r"shape '\[(?P<asked>\d+(?:, \d+)*)\]' is invalid for input of size (?P<size>\d+)")


def _asked(error, made) -> str:
    """Where a ``view``/``reshape`` on the failing line asked for a shape its tensor cannot take and
    the book's code makes ``made`` there: a sentence when that tensor holds exactly the values of the
    book's shape and the two shapes differ in one size (the line's target, not its input, is off); else ""."""
    found = _VIEW.search(error)
    if not found or made is None or (made and all(type(s) is tuple for s in made)):
        return ""
    asked, size = tuple(int(n) for n in found["asked"].split(", ")), int(found["size"])
    differ = [i for i, (a, b) in enumerate(zip(asked, made)) if a != b]
    if len(asked) != len(made) or len(differ) != 1 or size != _product(made):
        return ""
    i = differ[0]
    return (f" The tensor your line reshapes holds {size} values, as the book's {_shape_text(made)} does; your line "
            f"asks for {_shape_text(asked)}: size {asked[i]} in dimension {i}, where the book's is {made[i]}.")


def _product(shape) -> int:
    total = 1
    for n in shape:
        total *= n
    return total


def _code(text):
    """``text`` as a Markdown code span, whatever backticks it holds."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if "`" in text else f"{fence}{text}{fence}"


def _shape_text(shape) -> str:
    if shape and all(type(s) is tuple for s in shape):  # a list of tensors
        return "[" + ", ".join(map(_shape_text, shape)) + "]"
    return "(" + ", ".join(map(str, shape)) + (",)" if len(shape) == 1 else ")")


def _has(shape) -> str:
    if shape and all(type(s) is tuple for s in shape):
        return f"holds tensors of shapes {_shape_text(shape)}"
    return f"has shape {_shape_text(shape)}"


def _of(shape) -> str:
    if shape and all(type(s) is tuple for s in shape):
        return f"tensors of shapes {_shape_text(shape)}"
    return f"a tensor of shape {_shape_text(shape)}"


def _statement(source, qualname, line, names) -> tuple[list, object] | tuple[list, None]:
    """What the student's function ``qualname`` shows at ``line``, read from their source: of
    ``names``, the locals whose value there is the one the function returns with (no assignment
    to them in the failing statement or after it, nor in a loop around it), comparable with the
    book's locals as its function returns; and what the failing statement makes: RETURN, the one
    name it assigns (where that is its last value), or None. Skipped where the module or the
    function is over its bound."""
    if len(source) > MAX_SOURCE_CHARS:
        raise Skipped(f"this file is too large to analyse ({len(source) >> 10} KiB; the bound is "
                      f"{MAX_SOURCE_CHARS >> 10} KiB).")
    try:
        function = _function(_parse(source), qualname.split("."))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], None
    if function is None:
        return [], None
    # One walk, cut at the bound: the work never grows with the function beyond it.
    nodes = list(itertools.islice(ast.walk(function), MAX_FUNCTION_NODES + 1))
    if len(nodes) > MAX_FUNCTION_NODES:
        raise Skipped(f"`{qualname}` is too large to analyse (over {MAX_FUNCTION_NODES:,} syntax nodes).")
    statements = [n for n in nodes if isinstance(n, ast.stmt) and n is not function
                  and n.lineno <= line <= n.end_lineno]
    if not statements:
        return [], None
    failing = max(statements, key=lambda n: n.lineno)  # the innermost: it starts last
    loops = [n for n in statements if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    stores = [n for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    # The loops around the line nest: the outermost holds every store of the others.
    outer = min(loops, key=lambda n: n.lineno, default=None)
    looped = {n.id for n in ast.walk(outer) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} if outer else set()
    later = {n.id for n in stores if n.lineno >= failing.lineno} | looped
    makes = None
    if isinstance(failing, ast.Return):
        makes = RETURN
    elif isinstance(failing, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = failing.targets if isinstance(failing, ast.Assign) else [failing.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            name = targets[0].id
            after = {n.id for n in stores if n.lineno > failing.end_lineno}
            makes = name if name not in after | looped else None
    return [name for name in names if name not in later], makes


def _made_from(source, qualname, line, names) -> dict:
    """{name: the locals the student's function assigns from it}: for each of ``names``, the targets
    of the assignments that read it after its last assignment before ``line`` and before ``line``.
    A tensor of another shape than the book's whose successors all have the book's shapes was only
    named otherwise (the bonus notebook's ``qkv = qkv.permute(...)``): it is not where the shapes part.
    Called after ``_statement``, within its bounds (the same cached tree and function)."""
    function = _function(_parse(source), qualname.split("."))
    if function is None:
        return {}
    nodes = list(itertools.islice(ast.walk(function), MAX_FUNCTION_NODES + 1))
    assigns = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and n.value is not None
               and n.end_lineno < line]
    made = {}
    for name in names:
        stores = [n.lineno for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                  and n.id == name and n.lineno < line]
        last = max(stores, default=0)
        made[name] = [t.id for a in assigns if a.lineno > last
                      and any(isinstance(r, ast.Name) and r.id == name for r in ast.walk(a.value))
                      for target in (a.targets if isinstance(a, ast.Assign) else [a.target])
                      for t in ast.walk(target) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)]
    return made


@functools.lru_cache(maxsize=2)
def _parse(source):
    """The module's tree: parsed once for the checks of a submission that fail in it (the
    trees are only read)."""
    return ast.parse(source)


def _function(tree, path) -> "ast.FunctionDef | ast.AsyncFunctionDef | None":
    """The def at the qualified name ``path`` (["Class", "method"]) in ``tree``, or None."""
    node = tree
    for part in path:
        if part == "<locals>":
            continue
        node = next((n for n in ast.iter_child_nodes(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                           ast.ClassDef)) and n.name == part), None)
        if node is None:
            return None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _book_locals(fault, assignment) -> tuple | tuple[dict, None]:
    """({local: shape}, the returned value's shape or None) of the reference's function of the
    same module and name, as it returns in the failing step when the fault's steps run on the
    reference here (an earlier step may have called it on other inputs); ({}, None) where it
    does not. Which of the step's calls failed in the student's run is not known: only a shape
    the same in every call of the step is the book's there (a growing cache's keys are not).
    Skipped where the replay records more than MAX_BOOK_CALLS calls or runs over BOOK_SECONDS."""
    if not fault.steps:
        return {}, None
    a = course.get(assignment)
    folders = tuple(str(f) for f in [a.solutions, *(course.get(name).solutions for name in a.builds_on)])
    file = f"{fault.where.module}.py"
    *before, failing = fault.steps
    mark = "failing_step_begins"
    while any(step["let"] == mark for step in fault.steps):
        mark += "_"
    steps = [*before, {"let": mark, "call": f"{__name__}.{failing_step_begins.__name__}"}, failing]
    began, calls = [], []   # per call of the book's function in the failing step: (locals' shapes, returned)
    over = []               # why the replay stopped being watched, if it did
    deadline = time.thread_time() + BOOK_SECONDS   # this thread's CPU: a loaded machine does not count

    def watch(frame, event, arg) -> None:
        if over:
            return
        code = frame.f_code
        if event == "call" and code is failing_step_begins.__code__:
            began.append(True)
        elif (event == "return" and began and code.co_qualname == fault.where.function
                and code.co_filename.startswith(folders) and code.co_filename.endswith("/" + file)):
            if len(calls) == MAX_BOOK_CALLS:
                over.append(f"the book's `{fault.where.function}` returned more than {MAX_BOOK_CALLS:,} "
                            "times in that step.")
                sys.setprofile(None)   # the rest of the replay runs unwatched
                return
            calls.append(({name: shape for name, value in frame.f_locals.items()
                           if (shape := _shape(value)) is not None}, _shape(arg)))
        if time.thread_time() > deadline:
            over.append(f"replaying it took over {BOOK_SECONDS:g} s of CPU.")
            sys.setprofile(None)

    state, profile = torch.get_rng_state(), sys.getprofile()
    sys.setprofile(watch)
    try:
        course.reference_modules(a)  # on sys.path and imported, as the suites' ``ref`` has them
        reply = child.op_plan({"steps": steps})
    except Exception:  # the reference could not run these steps: no book shapes, nothing guessed
        return {}, None
    finally:
        sys.setprofile(profile)
        torch.set_rng_state(state)
    if over:
        raise Skipped(over[0])
    if failing["let"] in reply["errors"] or not calls:  # the book's code fails there too, or never ran
        return {}, None
    (first, returned), *others = calls
    same = {name: shape for name, shape in first.items() if all(c.get(name) == shape for c, _ in others)}
    return same, returned if all(r == returned for _, r in others) else None


def failing_step_begins() -> None:
    """A step of the replay calls this right before the failing step: the book's function is
    watched from here on."""


def _shape(value) -> tuple | None:
    """A local's shape as the child reports it (child.shape_of), as tuples."""
    shape = child.shape_of(value)
    if shape is None:
        return None
    return tuple(tuple(s) for s in shape) if shape and isinstance(shape[0], list) else tuple(shape)
