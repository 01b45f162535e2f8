"""The engine's trades keep their direction: a lower trade never imports a higher one.

From the bottom: ``paths`` and ``support`` (import nothing of the engine), the ``sandbox`` (the
trust boundary), ``grading`` (the hidden suites ride with it), ``authoring``, ``platforms``,
and on top the commands (``cli``, ``__main__``, the old names kept for instructors' configs).
Every import counts, a function's own included (a lazy import is still a dependency). The
rules: no import against the direction, no circle of imports (between packages or inside one), and no
``_name`` of another package (what one package offers another has a public name). A module
named in a string that another process runs (``-c "from autograder.x import y"``, ``-m
autograder.x``, a config nbgrader loads) must exist: a move that forgets one fails here, not
in a child.
"""
import ast
import re
from pathlib import Path

import pytest

from autograder.grading import course

ENGINE = Path(__file__).resolve().parents[1] / "autograder"
# the trades, from the bottom; a module may import its own trade and those below it
RANKS = {"base": 0, "sandbox": 1, "grading": 2, "authoring": 3, "platforms": 4, "commands": 5}
IN_STRINGS = re.compile(r"(?:from|import|-m)\s+(autograder(?:\.\w+)+)")


def trade(module):
    """The trade of a dotted module name of the engine (autograder.x.y)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("paths", "support", "__init__"):
        return "base"
    if parts[1] == "suites":  # the hidden suites run in the grader, beside the reference
        return "grading"
    if parts[1] in ("sandbox", "grading", "authoring", "platforms"):
        return parts[1]
    return "commands"  # cli, __main__, and the old names (nbgrade, nbgrader_plugin, shards)


def engine_sources(root=ENGINE):
    """{dotted module name: source} of every module of the engine (templates are data)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        inside = path.relative_to(root)
        if "templates" in inside.parts or "__pycache__" in inside.parts:
            continue
        name = ".".join(("autograder", *inside.with_suffix("").parts)).removesuffix(".__init__")
        found[name] = path.read_text(encoding="utf-8")
    return found


def _package(module, sources):
    return module if f"{module}.__init__" in sources or any(m.startswith(module + ".") for m in sources) \
        else module.rpartition(".")[0]


def _bindings(module, source, sources):
    """[(local name, engine module or None, module taken from, name taken or None, line)] for
    every import of ``module``: ``from X import y`` where X.y is a module binds that module."""
    here, found = _package(module, sources), []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.asname, alias.name, alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: the package, up level - 1 packages
                anchor = here.split(".")[:len(here.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                if f"{base}.{alias.name}" in sources:  # a module of a package
                    found.append((alias.asname or alias.name, f"{base}.{alias.name}", f"{base}.{alias.name}", None,
                                  node.lineno))
                else:
                    found.append((alias.asname or alias.name, None, base, alias.name, node.lineno))
    return found


def imports(module, source, sources):
    """[(imported module, names taken from it, line)] of one module, every import in it."""
    return [(target, (name,) if name else (), line) for _, _, target, name, line in _bindings(module, source, sources)
            if target == "autograder" or target.startswith("autograder.")]


def named_in_strings(source):
    """[(module, line)] for every engine module a string of ``source`` imports or runs."""
    return [(name, node.lineno) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for name in IN_STRINGS.findall(node.value)]


def _module_aliases(source, module, sources):
    """{local name: engine module} for the names a module binds to other engine modules."""
    return {local: bound for local, bound, *_ in _bindings(module, source, sources) if local and bound in sources}


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def violations(sources):
    """Every broken rule in ``sources`` ({dotted module: source}), one line each."""
    found, graph = [], {m: set() for m in sources}
    for module, source in sources.items():
        mine = trade(module)
        for target, names, line in imports(module, source, sources):
            if target not in sources:
                found.append(f"{module}:{line} names {target}, which is no module of the engine")
                continue
            graph[module].add(target)
            theirs = trade(target)
            if RANKS[theirs] > RANKS[mine]:
                found.append(f"{module}:{line} ({mine}) imports {target} ({theirs}): against the direction")
            if theirs != mine:
                found += [f"{module}:{line} takes {name} from {target}: a private name of another package"
                          for name in names if _private(name)]
        found += [f"{module}:{line} names {name} in a string, which is no module of the engine"
                  for name, line in named_in_strings(source) if name not in sources]
        aliases = _module_aliases(source, module, sources)
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr)
                    and node.value.id in aliases and trade(aliases[node.value.id]) != mine):
                found.append(f"{module}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}: a private name "
                             "of another package")
    found += [f"import circle: {' -> '.join(sorted(c))}" for c in _circles(graph)]
    return found


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for after in graph.get(node, ()):
            if after not in index:
                visit(after)
                low[node] = min(low[node], low[after])
            elif after in on_stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_the_engine_keeps_its_direction():
    sources = engine_sources()
    assert {trade(m) for m in sources} == set(RANKS), "every trade has modules (a rename would hide one)"
    assert violations(sources) == []


def test_the_sandbox_and_the_support_modules_stand_alone():
    """Nothing a child or a student's copy runs reaches what grades or renders."""
    sources = engine_sources()
    for module in (m for m in sources if trade(m) in ("sandbox", "base")):
        for target, _, line in imports(module, sources[module], sources):
            assert trade(target) in ("sandbox", "base"), f"{module}:{line} imports {target}"
    copied = {f"autograder.support.{Path(f).stem}" for a in course.assignments() for f in a.support}
    for module in (m for m in sources if m.startswith("autograder.support.")):
        taken = [target for target, _, _ in imports(module, sources[module], sources)]
        assert all(t.startswith("autograder.support.") for t in taken), f"{module} imports {taken}"
        if module in copied:
            assert taken == [], f"{module} must run on its own (students copy it)"


BASE = {
    "autograder": "",
    "autograder.paths": "",
    "autograder.sandbox": "",
    "autograder.sandbox.child": "from . import protocol\n",
    "autograder.sandbox.protocol": "def encode(): pass\ndef _frame(): pass\n",
    "autograder.grading": "",
    "autograder.grading.runner": "from ..sandbox import child\n",
    "autograder.platforms": "",
    "autograder.platforms.report": "from ..grading.runner import Grader\ndef _in_order(): pass\n",
    "autograder.cli": "from .platforms import report\n",
}


@pytest.mark.parametrize("module, source, says", [
    ("autograder.sandbox.child", "from ..grading import runner\n", "against the direction"),
    ("autograder.sandbox.child", "def f():\n    from autograder.platforms.report import table\n",
     "against the direction"),  # a lazy import is an import
    ("autograder.grading.runner", "from ..platforms.report import table\n", "against the direction"),
    ("autograder.sandbox.child", 'CODE = "import sys; from autograder.zygote import main"\n', "no module of the engine"),
    ("autograder.sandbox.child", 'RUN = ["python", "-m", "autograder.platforms.gone"]\nRUN2 = "-m autograder.gone"\n',
     "no module of the engine"),
    ("autograder.platforms.report", "from ..sandbox.protocol import _frame\n", "private name of another package"),
    ("autograder.platforms.report", "from ..sandbox import protocol\nprotocol._frame()\n",
     "private name of another package"),
    ("autograder.cli", "from .platforms.report import _in_order\n", "private name of another package"),
])
def test_the_rules_catch_a_planted_import(module, source, says):
    assert violations(BASE) == []
    broken = violations({**BASE, module: BASE[module] + source})
    assert broken and all(says in line for line in broken[:1]), broken


def test_a_circle_is_caught_inside_a_package_and_between_packages():
    """Each import of a circle may go downhill on its own reading; the circle is still caught."""
    planted = {**BASE, "autograder.sandbox.protocol": "from ..sandbox import child\n"}
    assert violations(planted) == ["import circle: autograder.sandbox.child -> autograder.sandbox.protocol"]
    # sandbox -> grading is already against the direction; a circle is also reported as such
    planted = {**BASE, "autograder.sandbox.child": "from ..grading import runner\n"}
    assert any(line.startswith("import circle: autograder.grading.runner") for line in violations(planted))


def test_the_private_rule_allows_a_package_its_own_names():
    planted = {**BASE, "autograder.sandbox.child": "from .protocol import _frame\nfrom . import protocol\n"
                                                   "protocol._frame()\n"}
    assert violations(planted) == []


def test_every_platform_starts_its_grader_one_way():
    """Only grading.engine.start_grader constructs a runner.Grader (and no platform starts a Zygote of
    its own): every platform's results then come from the same options, notes and fingerprint."""
    sources = engine_sources()
    for module, source in sources.items():
        calls = {node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                 for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)}
        if module not in ("autograder.grading.engine", "autograder.grading.runner"):
            assert "Grader" not in calls, f"{module} builds a Grader: use grading.engine.start_grader"
        if trade(module) in ("platforms", "commands", "authoring"):
            assert "Zygote" not in calls, f"{module} starts a Zygote: use grading.engine.start_zygote"


# Names of a chapter's own that are no module, class or function of a solution: the attributes
# the book gives its modules, which a probe would otherwise be tempted to read by name.
CHAPTER_ATTRIBUTES = {"W_query", "W_key", "W_value", "heads", "num_heads", "head_dim", "out_proj", "mask",
                      "dropout", "d_out", "transfer_weights", "trf_blocks", "tok_emb", "pos_emb", "att", "ff",
                      "norm1", "norm2", "final_norm", "out_head", "drop_emb", "drop_shortcut", "scale", "shift"}


def chapter_names():
    """{name: what it is} for every assignment's modules, the classes and functions its solutions
    define (top level), and the book's attribute names (CHAPTER_ATTRIBUTES)."""
    names = dict.fromkeys(CHAPTER_ATTRIBUTES, "an attribute the book gives a chapter's object")
    for assignment in course.assignments():
        for path in Path(assignment.solutions).glob("*.py"):
            if path.stem.startswith("test_") or path.stem == "conftest":
                continue
            names.setdefault(path.stem, f"a module of {assignment.name}")
            names.update({node.name: f"defined in {assignment.name}'s {path.name}"
                          for node in ast.parse(path.read_text()).body
                          if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not node.name.startswith("_")
                          and node.name not in names})
    return names


# calls whose string argument is a name in code: an attribute, or a module imported
_BY_NAME = {"getattr", "setattr", "hasattr", "delattr", "import_module", "__import__"}


def chapter_identifiers(source, names):
    """[(line, name)] where ``source`` uses one of ``names`` (chapter_names) as an identifier: an
    import of an assignment's module, an attribute (``x.mask``), a name it reads (``GPTModel``), or
    a string a getattr or import_module reads as one. Words in docstrings, comments and other
    strings are prose and data: a suite's plan hands the sandbox a chapter's names that way."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            used = [part for alias in node.names for part in alias.name.split(".")]
        elif isinstance(node, ast.ImportFrom):
            used = (node.module or "").split(".") + [alias.name for alias in node.names]
        elif isinstance(node, ast.Attribute):
            used = [node.attr]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            used = [node.id]
        elif isinstance(node, ast.Call) and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in _BY_NAME:
            used = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        else:
            continue
        found += [(node.lineno, name) for name in used if name in names]
    return sorted(set(found))


def test_the_sandbox_names_no_chapter():
    """The sandbox (the trust boundary) imports no assignment and names no assignment's identifiers
    as identifiers: it knows modules, calls, tensors and plans, and a chapter's names (its modules,
    classes, functions, the book's attribute names) reach it only as data, in a suite's plan. Checked
    on the code's names (imports, attributes, names read, getattr's strings), not on prose."""
    names = chapter_names()
    assert {"self_attention", "SelfAttention_v2", "transfer_weights_v2_to_v1", "GPTModel", "mask"} <= set(names)
    found = [f"autograder/sandbox/{path.name}:{line}: {name} ({names[name]})"
             for path in sorted((ENGINE / "sandbox").glob("*.py"))
             for line, name in chapter_identifiers(path.read_text(), names)]
    assert not found, ("the sandbox names an assignment's identifiers in its code:\n  " + "\n  ".join(found) +
                       "\nhand a chapter's names to the sandbox as data (a step of a plan: grading.probes writes "
                       "them), or, where the sandbox's own identifier only shares a chapter's name, rename it")


def test_the_chapter_name_check_sees_names_in_code_not_words_in_prose():
    names = chapter_names()
    planted = '''"""Turns tensors into bytes; a MultiHeadAttention is data here."""
import self_attention
from gpt_model import GPTModel


def f(module, x):  # mask, dropout: words of a comment
    text = "the mask of a CausalAttention"
    return getattr(module, "num_heads"), x.mask, GPTModel, text
'''
    found = chapter_identifiers(planted, names)
    assert sorted(name for _, name in found) == ["GPTModel", "GPTModel", "gpt_model", "mask", "num_heads",
                                                 "self_attention"], found
    assert "MultiHeadAttention" not in {name for _, name in chapter_identifiers(planted, names)}
    assert chapter_identifiers('"""tensors, model, data and loss, in words."""\nx = 1\n',
                               {**names, "tensors": "a module", "model": "a module"}) == []