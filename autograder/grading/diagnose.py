"""Diagnosis by property: how a wrong answer is wrong, named only where the evidence fits exactly.

Trusted side, pure functions. Two kinds of evidence:

- a failure's text (``from_failure``): an exception the student's code raised, or the names of
  the parameters the module registered, matched against what one mistake makes happen and
  nothing else (``view`` refuses a float size, whichever size it is); read
  beside what the grader knows: the sizes a module was built with (a parameter of the wrong
  shape is ``wrong_size`` where exactly one argument gives each size) and the student's own
  line the failure names (.T on a line whose batched matmul does not fit);
- the answers themselves (the ``*_models`` functions): {mistake: model} dicts for
  ``compare.expect_close``'s ``mistakes``, where a model may be a projection of the answer
  onto the outputs that mistake can give (a dropout mask drawn from another seed is any 0/scaled
  pattern of the input), so that it fits exactly when, and only when, the answer has the property.

Names are fixed sentences (the class report counts students per name); where several mistakes
fit, ``kit.known_mistake`` names them all, and where none fits the message locates and stops.
"""
import re

import torch

from .result import NAMES_MISTAKE


# -- mistakes named from a failure's text ------------------------------------------------------
IN_PLACE = ("an in-place operation on the caller's tensor (x.div_(...), x.masked_fill_(...), x += ..., "
            "inplace=True): compute a new tensor and leave the argument as it was")
QKV_BIAS_MISSING = "W_query, W_key and W_value built without bias=qkv_bias (qkv_bias=True asks for a bias)"
QKV_BIAS_EXTRA = ("W_query, W_key or W_value with a bias where qkv_bias=False asks for none "
                  "(nn.Linear's default is bias=True: pass bias=qkv_bias)")
QKV_BIAS_ARGUMENT = ("qkv_bias=True passed where the exercise asks for no bias in W_query, W_key and W_value (your "
                     "class, built with the default qkv_bias=False, has none: the class is right, the argument is not)")
BIAS_MISSING = "an nn.Linear built with bias=False where the book's layer keeps its bias"
OUT_PROJ_IN_WRAPPER = "an out_proj added to the wrapper (MultiHeadAttentionWrapper only concatenates its heads)"
RENAMED = "attributes named differently from the book's (the book's names are part of the API)"
PLAIN_LIST = ("no parameters registered where the book's are all in its heads: the heads are not registered as "
              "submodules (nn.ModuleList registers them; a plain list, tuple or dict does not)")
MHA_FOR_WRAPPER = "a MultiHeadAttention where a MultiHeadAttentionWrapper is asked for"
WRAPPER_FOR_MHA = "a MultiHeadAttentionWrapper where a MultiHeadAttention is asked for"
NO_GRAD = ("an output that does not depend on any trainable weight (backward finds nothing that requires grad: look "
           "for weights made with requires_grad=False, a torch.no_grad() or a .detach() in forward)")
MISSING_IMPORT = "a missing import (a module used without `import torch` / `import torch.nn as nn` at the top)"
MISSPELT_IMPORT = "an import of a name the other module does not define (compare the name in both modules)"
SYNTAX = "a syntax error: Python cannot read the module, so nothing in it runs"
FLOAT_MASK = ("a mask that is not bool passed to masked_fill (it needs a bool mask: "
              "self.mask.bool()[:num_tokens, :num_tokens])")
FLOAT_HEAD_DIM = "a float size passed to view() (a size computed with /, such as d_out / num_heads: use //)"
NOT_CONTIGUOUS = ("view() on a tensor that is not contiguous (a transpose or permute before it: call .contiguous() "
                  "first, or use .reshape)")
ONE_HEAD = ("only one head registered (heads.0) where the book's has num_heads heads (look at the num_heads "
            "passed, and at how the heads are made: [head] * num_heads registers one module once)")
NOT_REGISTERED = ("no parameters registered where the book's module has them (plain tensors and buffers are not "
                  "trained: wrap them in nn.Parameter)")
TRANSPOSE_ALL = (".T on a batch of matrices: it reverses every dimension, the batch's too (keys.transpose(1, 2) "
                 "swaps the last two)")
PLAIN_ASSIGN = ("a plain tensor assigned to a parameter (copy it in with param.copy_(...) under torch.no_grad(), "
                "or wrap it in nn.Parameter)")
PARAM_IN_PLACE = ("a parameter changed in place with autograd on (param.copy_(...) outside `with torch.no_grad():`: "
                  "copy inside one, or use load_state_dict)")

_LOAD = re.compile(r"has parameters \[(?P<own>[^\]]*)\]; the book's names are \[(?P<book>[^\]]*)\] "
                   r"\(missing (?P<missing>\[[^\]]*\]|none), extra (?P<extra>\[[^\]]*\]|none)\)")
_SHAPE = re.compile(r"parameter (?P<param>[\w.]+) has shape \((?P<own>[\d, ]*)\), expected \((?P<book>[\d, ]*)\)")
_AT_LINE = re.compile(r"\((?P<module>\w+)\.py line (?P<line>\d+)\)")
# a batched matmul's own complaints: the batch sizes, or the matrices of a batch, do not fit
_BATCH_MISMATCH = re.compile(r"Expected size for first two dimensions of batch2 tensor|forward on shape \(\d+, \d+, "
                             r"\d+\) raised RuntimeError: The size of tensor a \(\d+\) must match the size of tensor b "
                             r"\(\d+\) at non-singleton dimension 0")
_DOT_T = re.compile(r"\.T\b")
_QKV_BIAS = re.compile(r"(^|\.)W_(query|key|value)\.bias$")
_RAISED = [  # (pattern of the exception's text, mistake): each pattern is raised by that mistake alone
    (re.compile(r"changed (the caller's input|its argument \d+) in place"), IN_PLACE),
    (re.compile(r"could not be imported: SyntaxError"), SYNTAX),
    (re.compile(r"could not be imported: NameError: name '(torch|nn|F)' is not defined"), MISSING_IMPORT),
    (re.compile(r"could not be imported: ImportError: cannot import name '\w+' from '\w+'"), MISSPELT_IMPORT),
    (re.compile(r"element 0 of tensors does not require grad and does not have a grad_fn"), NO_GRAD),
    (re.compile(r"masked_fill_? only supports boolean masks"), FLOAT_MASK),
    (re.compile(r"view\(\): argument 'size' failed to unpack .*but got float"), FLOAT_HEAD_DIM),
    (re.compile(r"view size is not compatible with input tensor's size and stride"), NOT_CONTIGUOUS),
    (re.compile(r"cannot assign '[\w.]+' as parameter '\w+' \(torch\.nn\.Parameter or None expected\)"), PLAIN_ASSIGN),
    (re.compile(r"a leaf Variable that requires grad is being used in an in-place operation"), PARAM_IN_PLACE),
]


def _names(listed) -> list:
    return [] if listed == "none" else re.findall(r"'([^']*)'", listed)


def _from_parameters(own, book, missing, extra) -> str | None:
    """The mistake whose module registers ``own`` where the book's registers ``book``, or None.
    ``missing``: the book's names the module lacks; ``extra``: its names the book's lacks."""
    if missing and not extra and all(_QKV_BIAS.search(n) for n in missing):
        return QKV_BIAS_MISSING
    if extra and not missing and all(_QKV_BIAS.search(n) for n in extra):
        return QKV_BIAS_EXTRA
    if missing and not extra and all(n.endswith(".bias") for n in missing):
        return BIAS_MISSING
    if extra and not missing and any(n.startswith("heads.") for n in book) and \
            sorted(extra) == ["out_proj.bias", "out_proj.weight"]:
        return OUT_PROJ_IN_WRAPPER
    if book and not own and all(n.startswith("heads.") for n in book):
        return PLAIN_LIST
    if book and not own:
        return NOT_REGISTERED
    first = [n for n in book if n.startswith("heads.0.")]
    if first and len(first) < len(book) and all(n.startswith("heads.") for n in book) and sorted(own) == sorted(first):
        return ONE_HEAD  # heads.1, heads.2 ... missing, heads.0 complete: one module, registered once
    if own and all(n.startswith("heads.") for n in book) and not any(n.startswith("heads.") for n in own) \
            and any(n.startswith("out_proj.") for n in own):
        return MHA_FOR_WRAPPER
    if own and any(n.startswith("out_proj.") for n in book) and all(n.startswith("heads.") for n in own):
        return WRAPPER_FOR_MHA
    suffixes = [sorted(n.rpartition(".")[2] if "." in n else "" for n in names) for names in (missing, extra)]
    if missing and len(missing) == len(extra) and suffixes[0] == suffixes[1] and \
            not any(n.startswith("heads.") for n in missing + extra):
        return RENAMED  # the same kinds of tensors, one for one, under other names
    return None


def sized(error, sizes):
    """``error`` carrying the sizes the module was built with ({argument: int}, where it failed to
    load the grader's parameters), for ``from_failure`` to read a wrong shape against."""
    error.sizes = sizes
    return error


def book_sizes(names, args, kwargs, derived=None):
    """{argument: int} of a constructor call, by the book's argument ``names`` in order, with the
    ints of a config dict among them and ``derived`` ({expression: function of that dict}) added.
    Bools and floats are no sizes."""
    sizes = dict(zip(names, args), **kwargs)
    for value in list(sizes.values()):
        if isinstance(value, dict):
            sizes.update(value)
    sizes = {k: v for k, v in sizes.items() if type(v) is int}
    for expression, fn in (derived or {}).items():
        try:
            sizes[expression] = fn(sizes)
        except (KeyError, ZeroDivisionError):
            pass
    return sizes


def wrong_size(param, builds) -> str | None:
    """The name of ``param`` sized with another argument than the book's, or None. ``builds``:
    [(its shape, the book's shape, {argument: int})] for the builds where the two differ. Named
    only where each differs in one dimension and, across them all, exactly one argument gives the
    student's size and exactly one the book's (sizes that coincide leave it open)."""
    yours = books = None
    for own, book, sizes in builds:
        differ = [i for i, (a, b) in enumerate(zip(own, book)) if a != b]
        if len(own) != len(book) or len(differ) != 1:
            return None
        (i,) = differ
        mine = {k for k, v in sizes.items() if v == own[i]}
        theirs = {k for k, v in sizes.items() if v == book[i]}
        yours, books = (mine, theirs) if yours is None else (yours & mine, books & theirs)
    if yours and books and len(yours) == len(books) == 1:
        return f"{param} sized with {yours.pop()} where the book uses {books.pop()}"
    return None


def _from_line(text, sources) -> str | None:
    """The mistake the student's own failing line shows, with the error it raised: a batched
    matmul whose sizes do not fit, on a line that transposes with .T."""
    at = _AT_LINE.search(text)
    if not (at and sources and _BATCH_MISMATCH.search(text)):
        return None
    lines = (sources.get(at["module"]) or "").splitlines()
    number = int(at["line"])
    if 1 <= number <= len(lines) and _DOT_T.search(lines[number - 1].split("#")[0]):
        return TRANSPOSE_ALL
    return None


def from_failure(text, sizes=None, sources=None) -> str | None:
    """The mistake a failed check's text shows exactly, or None (and None where it names one already).
    The runner calls it on a failure that is not a ``KnownMistake`` and records the name it returns:
    one of the fixed names above (or a parameter's and the arguments' names), never text of the
    child's. ``sizes``: the arguments the module was built with (``sized``), where known;
    ``sources``: the submission's {module: source}, to read the line a failure names."""
    if NAMES_MISTAKE.format("").strip() in text:
        return None
    load = _LOAD.search(text)
    if load:
        return _from_parameters(*(_names(load[k]) for k in ("own", "book", "missing", "extra")))
    shape = _SHAPE.search(text)
    if shape and sizes:
        own, book = (tuple(int(n) for n in shape[k].split(",") if n.strip()) for k in ("own", "book"))
        return wrong_size(shape["param"], [(own, book, sizes)])
    line = _from_line(text, sources)
    if line:
        return line
    for pattern, name in _RAISED:
        if pattern.search(text):
            return name
    return None


# -- pictures: attention weights seen before they are read ---------------------------------------
BOOK_TOKENS = ("Your", "journey", "starts", "with", "one", "step")


def picture(title, yours, expected, tokens=BOOK_TOKENS) -> dict | None:
    """The student's attention weights beside the expected ones, as data (lists of floats) that
    the renderings draw (classreport.attention_svg): a mask on the wrong triangle or a softmax over
    the wrong dimension is seen at a glance. None where ``yours`` is not a matrix of the same shape."""
    n = len(tokens)
    if not (isinstance(yours, torch.Tensor) and yours.shape == expected.shape == (n, n)):
        return None
    return {"title": title, "tokens": list(tokens), "yours": yours.double().nan_to_num(nan=-1.0).tolist(),
            "expected": expected.double().tolist()}


def shown(error, drawn):
    """``error`` carrying a picture (the runner puts it in the check's result), where there is one."""
    if drawn is not None:
        error.picture = drawn
    return error


# -- mistakes named from the answers ------------------------------------------------------------
LOOP_SHORT = "a loop that stops one step short (range(n - 1), or x[:-1])"
DROPOUT_OTHER_MASK = ("a dropout, but not the mask nn.Dropout(p) draws right after torch.manual_seed(seed): every "
                      "value is 0 or x / (1 - p), the zeros elsewhere (look at the seed used, at anything drawn "
                      "between it and the dropout, and at the dropout itself)")
INT_IDS = ("token ids stored as another integer dtype than torch.long (torch.tensor of a list of ints is "
           "int64 already: leave out the dtype)")
BATCH_ONLY = ("code that works on one matrix but not on a batch of them: take sizes from the last dimensions "
              "(shape[-1]) and transpose with .transpose(-2, -1), not shape[0] or .T")
PYTHON_NUMBER = "a Python number (.item() or float(...)) returned instead of a tensor"


class Projection:
    """A mistake's model given as the set of answers it can give: ``fn(answer)`` is the answer
    where it is one of them, else None (``compare.known_mistake`` calls it with the answer)."""

    def __init__(self, fn) -> None:
        self.fn = fn


def dropout_mask_models(x, p) -> dict[str, Projection]:
    """{mistake: model} for a dropout of ``x`` at rate ``p`` whose mask is not nn.Dropout's draw after
    the seed: any answer whose every entry is 0 or x / (1 - p), with some kept. What the evidence
    shows, not why: a wrong seed, a draw in between and a dropout of one's own all give it."""
    def model(actual):
        kept = x / (1 - p)
        ok = (isinstance(actual, torch.Tensor) and actual.shape == x.shape
              and bool(((actual == 0) | torch.isclose(actual, kept, rtol=1e-5, atol=1e-6)).all())
              and bool((actual != 0).any()))
        return actual if ok else None
    return {DROPOUT_OTHER_MASK: Projection(model)}


def python_number(actual, expected) -> str | None:
    """The mistake of returning a plain number equal to a 0-d expected tensor, or None."""
    if type(actual) in (int, float) and isinstance(expected, torch.Tensor) and expected.dim() == 0 and \
            torch.isclose(torch.tensor(float(actual), dtype=torch.float64), expected.double(), rtol=1e-4, atol=1e-5):
        return PYTHON_NUMBER
    return None


HEADS_ALONG_BATCH = "the heads concatenated along the batch (torch.cat(..., dim=0); the book's: dim=-1)"
HEADS_ALONG_TOKENS = "the heads concatenated along the tokens (torch.cat(..., dim=1); the book's: dim=-1)"
HEADS_STACKED = "the heads stacked (torch.stack) instead of concatenated (torch.cat(..., dim=-1))"


def concat_models(expected, num_heads) -> dict:
    """{mistake: output} for heads whose outputs are joined on the wrong dimension, from the right
    join ``expected`` (batch, tokens, num_heads * head_size)."""
    if expected.dim() != 3 or num_heads < 2:
        return {}
    heads = expected.chunk(num_heads, dim=-1)
    return {HEADS_ALONG_BATCH: torch.cat(heads, dim=0), HEADS_ALONG_TOKENS: torch.cat(heads, dim=1),
            HEADS_STACKED: torch.stack(heads, dim=-1)}
