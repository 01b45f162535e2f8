"""Classes for the similarity report's test and benchmark, made from the project's own banks.

``known_class()``: a chapter-3 class whose answer is known. Two students hand in the reference
itself; seven hand in the reference with one of the alternatives bank's styles for some modules
(styles no other student uses); one copied the "einsum everywhere" student's code and renamed the
variables (and put markup in a comment and a string: the page must show it as text); five make the
same common mistake (the mutants bank's softmax over dim=0, in one line of the reference); two
make one rare mistake (the columns renormalised) written two different ways, so that only the wrong
answer links them, not the code; and five more each make a mutant of their own.

``generated_class(n)``: ``n`` students for the benchmark, every file of every student unique (each
student's own names for the locals, comments, blank lines): the reference, each alternative once and
the mutants in turn, every tenth student copying an earlier one's work beyond the book (an
alternative or a mutant) with the names changed again.
"""
import ast
import random
import re

from banks import load, mutated_sources, reference_sources

ASSIGNMENT = "ch03_attention"
ORIGINAL = "einsum everywhere"
# alternatives whose styles no other student of the test class uses; the rest of each submission is the book's
ALTERNATIVES = (ORIGINAL, "torch.bmm, heads folded into the batch; wrapper with torch.dstack",
                "softmax by hand with the maximum subtracted",
                "attributes set in a loop over the book's names, helper methods",
                "MultiHeadAttention with a Python loop over the heads",
                "exercise 3.3 as a subclass of MultiHeadAttention; 3.1 with new Parameters",
                "plain student: own names, math.sqrt, torch.stack, append loops")
COMMON = "softmax over the wrong dim (dim=0) in SelfAttention_v1"
RARE = "masked_renormalized_weights renormalises by column sums (dim=0)"
SINGLES = ("heads split without transpose in MultiHeadAttention", "simple_causal_mask uses triu instead of tril",
           "missing 1/sqrt(d_k) in CausalAttention", "dot_product_loop skips the last element (range(n - 1))",
           "exercise 3.1: weights transferred untransposed")
# the rare mistake as the second student wrote it: other code, the same wrong answer
RARE_OTHER = ("    mask_simple = torch.tril(torch.ones_like(attn_weights))\n"
              "    masked_simple = attn_weights * mask_simple\n"
              "    row_sums = masked_simple.sum(dim=-1, keepdim=True)\n"
              "    return masked_simple / row_sums\n",
              "    kept = torch.tril(attn_weights)\n"
              "    return kept / kept.sum(0, keepdim=True)\n")
COPIER = "<img src=x onerror=console.error(1)>copier"
HOSTILE_COMMENT = "# </pre></code><script>console.error(2)</script><img src=y onerror=console.error(3)>\u202e"
# three more copiers, each of another alternative student's work, each disguised its own way
# ({copier: (the student copied, how)}; see reordered() and mechanical())
DISGUISES = {"copier-reordered": ("alt-1", ("reordered",)), "copier-renamed": ("alt-3", ("mechanical",)),
             "copier-mixed": ("alt-4", ("reordered", "mechanical"))}
# the copier's own names for the original's locals (whole words only)
RENAMES = {"scores": "sc", "result": "acc", "weights": "attn_w", "queries": "qs", "values": "vals", "context": "ctx"}


def _alternatives():
    return {a.name: a for a in load(ASSIGNMENT, "alternatives").ALTERNATIVES}


def _mutants():
    return {m.name: m for m in load(ASSIGNMENT, "mutants").MUTANTS}


def with_style(alternative):
    """The reference, with the modules the alternative writes in its own style taken from it."""
    sources = reference_sources(ASSIGNMENT)
    own = alternative.sources()
    for module in alternative.styles:
        sources[f"{module}.py"] = own[module]
    return sources


def renamed(sources, names, comment=""):
    """``sources`` with every whole word of ``names`` replaced (a copier hiding the copy), and ``comment``
    put before each file's first function or class (beside code the copy shares, so the page shows it)."""
    out = {}
    for file, text in sources.items():
        for old, new in names.items():
            text = re.sub(rf"\b{old}\b", new, text)
        if comment:
            at = re.search(r"^(def|class) ", text, re.M)
            at = at.start() if at else len(text)
            text = f"{text[:at]}{comment}\n{text[at:]}"
        out[file] = text
    return out


def _names(node, stored):
    """The names and attribute names ``node`` stores (``stored``) or reads."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Store) == stored}


def _independent(a, b):
    """Whether two assignments to names can change places: neither writes what the other reads or writes."""
    plain = [isinstance(s, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple)) for t in s.targets) for s in (a, b)]
    return all(plain) and not (
        _names(a, True) & (_names(b, True) | _names(b, False)) or _names(b, True) & _names(a, False))


DEAD = ("pass", "if False:\n    print('checking the shapes')", "unused_{k} = {k} * 2", "'a note to self'",
        "scratch_{k} = len(str({k}))\nscratch_{k} = scratch_{k} + 1")


def reordered(sources, rng):
    """``sources`` with the statements reordered and dead statements added, meaning unchanged: the
    functions and classes of each module and the methods of each class in reverse order, independent
    neighbouring statements of each function swapped, and after every statement of a function a dead
    one (``pass``, ``if False:``, an assignment nothing reads, a string)."""
    out = {}
    for file, text in sources.items():
        tree = ast.parse(text)
        for node in [tree, *ast.walk(tree)]:
            body = getattr(node, "body", None)
            if not isinstance(body, list):
                continue
            slots = [i for i, stmt in enumerate(body) if isinstance(stmt, (ast.FunctionDef, ast.ClassDef))]
            for i, stmt in zip(slots, [body[i] for i in reversed(slots)]):
                body[i] = stmt
            if isinstance(node, ast.FunctionDef):
                for i in range(len(body) - 1):
                    if _independent(body[i], body[i + 1]):
                        body[i], body[i + 1] = body[i + 1], body[i]
                padded = []
                for stmt in body:
                    padded += [stmt, *ast.parse(rng.choice(DEAD).format(k=rng.randrange(100, 999))).body]
                node.body = padded
        out[file] = ast.unparse(tree) + "\n"
    return out


class _Mechanical(ast.NodeTransformer):
    """Every name read ``x`` as ``[x][0]``; the names a function assigns renamed (``x`` -> ``x_1``)."""

    def __init__(self, renames):
        self.renames = renames

    def visit_Name(self, node):
        node.id = self.renames.get(node.id, node.id)
        if not isinstance(node.ctx, ast.Load) or node.id == "super":
            return node
        return ast.Subscript(ast.List([node], ast.Load()), ast.Constant(0), ast.Load())


def mechanical(sources):
    """``sources`` renamed mechanically, meaning unchanged (see ``_Mechanical``)."""
    out = {}
    for file, text in sources.items():
        tree = ast.parse(text)
        assigned = sorted({n.id for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for stmt in f.body
                           for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
        tree = _Mechanical({name: f"{name}_{i + 1}" for i, name in enumerate(assigned)}).visit(tree)
        out[file] = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    return out


def disguised(sources, how, seed=0):
    """``sources`` disguised each way of ``how`` in turn ("reordered", "mechanical")."""
    rng = random.Random(seed)
    for way in how:
        sources = reordered(sources, rng) if way == "reordered" else mechanical(sources)
    return sources


def known_class():
    """{student folder name: {file name: text}} (see the module's docstring)."""
    alternatives, mutants = _alternatives(), _mutants()
    students = {"ref-a": reference_sources(ASSIGNMENT), "ref-b": reference_sources(ASSIGNMENT)}
    for i, name in enumerate(ALTERNATIVES):
        students[f"alt-{i}"] = with_style(alternatives[name])
    original = with_style(alternatives[ORIGINAL])
    copy = renamed(original, RENAMES, HOSTILE_COMMENT)
    copy["simple_attention.py"] += f'\n\nNOTE = "{HOSTILE_COMMENT[2:]}"\n'
    students[COPIER] = copy
    for copier, (copied, how) in DISGUISES.items():
        students[copier] = disguised(students[copied], how)
    for i in range(5):
        students[f"common-{i}"] = mutated_sources(ASSIGNMENT, mutants[COMMON])
    students["rare-a"] = mutated_sources(ASSIGNMENT, mutants[RARE])
    other = reference_sources(ASSIGNMENT)
    assert other["causal_attention.py"].count(RARE_OTHER[0]) == 1
    other["causal_attention.py"] = other["causal_attention.py"].replace(*RARE_OTHER)
    students["rare-b"] = other
    for i, name in enumerate(SINGLES):
        students[f"single-{i}"] = mutated_sources(ASSIGNMENT, mutants[name])
    return students


IDENTIFIER = re.compile(r"\b([a-z][a-z_]{2,})\s*=(?!=)")


def _disguised(sources, rng, tag):
    """Every file made this student's own: the locals it assigns renamed, a comment and blank lines added."""
    names = sorted({m for text in sources.values() for m in IDENTIFIER.findall(text)} - {"self", "dim", "keepdim"})
    chosen = {n: f"{n[:3]}_{tag}" for n in rng.sample(names, min(len(names), 6))}
    out = {}
    for file, text in renamed(sources, chosen).items():
        lines = text.split("\n")
        for _ in range(3):
            at = rng.randrange(1, len(lines))
            if not lines[at].startswith((" ", "\t")) and not lines[at - 1].rstrip().endswith(("(", ",", "\\")):
                lines.insert(at, "")
        out[file] = f"# {tag}: my work for chapter 3\n" + "\n".join(lines)
    return out


def generated_class(n, seed=0):
    """({student folder name: {file name: text}}, {student: what they started from}) of ``n`` students,
    every file unique (see the docstring). What a student started from is ("reference", None),
    ("alternative", its name) or ("mutant", the Mutant); a copier's is its source's, and
    ``copied[student]`` names the source."""
    rng = random.Random(seed)
    bases = [(("reference", None), reference_sources(ASSIGNMENT))]
    bases += [(("alternative", a.name), with_style(a)) for a in load(ASSIGNMENT, "alternatives").ALTERNATIVES]
    for mutant in load(ASSIGNMENT, "mutants").MUTANTS:
        try:
            bases.append((("mutant", mutant), mutated_sources(ASSIGNMENT, mutant)))
        except AssertionError:  # a mutant the reference no longer fits is test_mutants's to report
            continue
    again = [base for base in bases if base[0][0] != "alternative"]  # one student each: no twin beyond the book
    students, origin, copied = {}, {}, {}
    for i in range(n):
        tag = f"s{i:04d}"
        beyond = [name for name, start in origin.items() if start[0] != "reference" and name not in copied]
        if i % 10 == 9 and beyond:  # a copy of an earlier student's work beyond the book, the names changed again
            source = rng.choice(beyond)
            students[tag], origin[tag], copied[tag] = _disguised(students[source], rng, tag), origin[source], source
        else:
            start, sources = bases[i] if i < len(bases) else again[i % len(again)]
            students[tag], origin[tag] = _disguised(sources, rng, tag), start
    return students, origin, copied


def write(root, students):
    """The class on disk: one folder per student."""
    for name, sources in students.items():
        (root / name).mkdir(parents=True)
        for file, text in sources.items():
            (root / name / file).write_text(text, encoding="utf-8")
    return root
