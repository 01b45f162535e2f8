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
    put after each file's first line."""
    out = {}
    for file, text in sources.items():
        for old, new in names.items():
            text = re.sub(rf"\b{old}\b", new, text)
        if comment:
            first, _, rest = text.partition("\n")
            text = f"{first}\n{comment}\n{rest}"
        out[file] = text
    return out


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
