"""Set-up of the public tests of chapter 4 (pytest runs it before them).

Your GPT uses your chapter-3 ``MultiHeadAttention``, imported as the book does:
``from multihead_attention import MultiHeadAttention``. Copy your ``multihead_attention.py``
and ``causal_attention.py`` into this folder (you hand them in with chapter 4); until you do,
they are taken from the ``ch03_attention`` folder beside this one, and pytest says in one line
which are missing from both. tiktoken gets GPT-2's tokenizer files offline.

Each part's tests judge that part only, as the grader does: where a piece from an earlier part
(GELU, LayerNorm, FeedForward, TransformerBlock, GPTModel) does not behave as the book's, the tests
of a later part run with a stand-in for it (``book_pieces`` below; the earlier part's own tests say
what is wrong), so that one mistake fails the tests of one part.
"""
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

try:
    import tiktoken_offline
except ImportError:  # the master folder (solutions/): the engine holds the module, the stubs a copy
    sys.path.append(str(Path(__file__).resolve().parents[2] / "autograder" / "support"))
    import tiktoken_offline

import public_tests  # beside tiktoken_offline: the public tests' order and summary

# The parts in the book's order (the stub generator writes them here from the course's
# manifest; the master reads the manifest itself).
PARTS = ()
if not PARTS:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    PARTS = get("ch04_gpt").parts_table

# Every file you hand in, and the assignment it comes from (the stub generator writes it here
# from the course's manifest; the master reads the manifest itself).
HAND_IN = ()
if not HAND_IN:
    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from autograder.grading.course import get
    HAND_IN = tuple((f.file, f.assignment) for f in get("ch04_gpt").hand_in)

missing = public_tests.use_earlier(__file__, HAND_IN)

tiktoken_offline.install()


def pytest_report_header():
    """One line before the tests (and after them, see below) naming what is missing, and whence."""
    return public_tests.missing_lines(missing)


def pytest_terminal_summary(terminalreporter):
    # the missing files again, below the parts
    public_tests.summary(terminalreporter, PARTS, then=pytest_report_header())


@pytest.fixture(scope="session")
def gpt_124m():
    """``gpt_124m()`` gives ``GPTModel(GPT_CONFIG_124M)`` built after ``torch.manual_seed(123)``, as
    the book builds it, once for all tests (163 million parameters take seconds), with the random
    state right after building it (the book's first forward pass draws its dropout masks from
    there). Built on the first call, inside a test: an unwritten GPTModel fails that test with
    its NotImplementedError instead of erroring in the set-up."""
    built = {}

    def get():
        import gpt_model
        key = (gpt_model.GPTModel, gpt_model.TransformerBlock if hasattr(gpt_model, "TransformerBlock") else None)
        if key not in built:  # a model for each set of stand-ins (book_pieces) the tests run with
            torch.manual_seed(123)
            model = gpt_model.GPTModel(gpt_model.GPT_CONFIG_124M)
            built.clear()  # one 124M model at a time
            built[key] = (model, torch.get_rng_state())
        return built[key]
    return get


# -- stand-ins for the pieces of earlier parts ------------------------------------------------------
# (part of a test file, the pieces below it that a stand-in may replace, in the book's order)
BELOW = {"shortcuts": ("GELU",), "transformer_block": ("GELU", "LayerNorm", "FeedForward"),
         "gpt_model": ("GELU", "LayerNorm", "FeedForward", "TransformerBlock"),
         "generate": ("GELU", "LayerNorm", "FeedForward", "TransformerBlock", "GPTModel"),
         "exercises": ("GELU", "LayerNorm", "FeedForward", "TransformerBlock", "GPTModel")}
HOME = {"GELU": "feed_forward", "LayerNorm": "layer_norm", "FeedForward": "feed_forward",
        "TransformerBlock": "transformer_block", "GPTModel": "gpt_model"}


def _piece(name):
    """The class of that name the student's modules use now (a stand-in where one is in place)."""
    return getattr(sys.modules[HOME[name]], name)


class StandInGELU(torch.nn.GELU):
    """The book's GELU: torch's own tanh approximation."""

    def __init__(self):
        super().__init__(approximate="tanh")


class StandInLayerNorm(torch.nn.Module):
    """The book's LayerNorm: parameters scale (ones) and shift (zeros), eps 1e-5, the biased
    variance; torch's own layer_norm computes it."""

    def __init__(self, size):
        super().__init__()
        self.scale, self.shift = torch.nn.Parameter(torch.ones(size)), torch.nn.Parameter(torch.zeros(size))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.scale, self.shift, 1e-5)


class StandInFeedForward(torch.nn.Module):
    """The book's FeedForward: layers = Linear(d, 4d), GELU, Linear(4d, d), created in that order."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.layers = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), _piece("GELU")(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        return self.layers.forward(x)


class StandInTransformerBlock(torch.nn.Module):
    """The book's TransformerBlock (the wiring test_transformer_block.py checks), on the pieces
    the student's modules use now and the student's chapter-3 MultiHeadAttention."""

    def __init__(self, cfg):
        super().__init__()
        from multihead_attention import MultiHeadAttention
        d = cfg["emb_dim"]
        self.att = MultiHeadAttention(d_in=d, d_out=d, context_length=cfg["context_length"],
                                      num_heads=cfg["n_heads"], dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"])
        self.ff = _piece("FeedForward")(cfg)
        self.norm1, self.norm2 = _piece("LayerNorm")(d), _piece("LayerNorm")(d)
        self.drop_shortcut = torch.nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        h = x + self.drop_shortcut(self.att(self.norm1(x)))
        return h + self.drop_shortcut(self.ff(self.norm2(h)))


class StandInGPTModel(torch.nn.Module):
    """The book's GPTModel (the wiring test_gpt_model.py checks), on the blocks and norm the
    student's modules use now."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.tok_emb = torch.nn.Embedding(cfg["vocab_size"], d)
        self.pos_emb = torch.nn.Embedding(cfg["context_length"], d)
        self.drop_emb = torch.nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = torch.nn.Sequential(*(_piece("TransformerBlock")(cfg) for _ in range(cfg["n_layers"])))
        self.final_norm = _piece("LayerNorm")(d)
        self.out_head = torch.nn.Linear(d, cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(torch.arange(in_idx.shape[1], device=in_idx.device)))
        logits_of_every_position = self.out_head(self.final_norm(self.trf_blocks(x)))
        return logits_of_every_position


STAND_INS = {"GELU": StandInGELU, "LayerNorm": StandInLayerNorm, "FeedForward": StandInFeedForward,
             "TransformerBlock": StandInTransformerBlock, "GPTModel": StandInGPTModel}
PIECE_CFG = {"vocab_size": 23, "context_length": 6, "emb_dim": 8, "n_heads": 2, "n_layers": 2, "drop_rate": 0.0,
             "qkv_bias": True}


def _same_module(make, cfg_or_size, x, drop=None):
    """Whether the student's class of that name, made after a seed, has the stand-in's parameters
    (names and values, drawn after the same seed) and gives its outputs, in eval mode and, with
    ``drop``, in training mode after the same seed."""
    mine_class, book_class = make
    torch.manual_seed(11)
    mine = mine_class(cfg_or_size)
    torch.manual_seed(11)
    book = book_class(cfg_or_size)
    mine_params, book_params = dict(mine.named_parameters()), dict(book.named_parameters())
    if list(mine_params) != list(book_params) or any(
            mine_params[k].shape != v.shape or not torch.equal(mine_params[k], v) for k, v in book_params.items()):
        return False
    for train in ((False, True) if drop else (False,)):
        mine.train(train)
        book.train(train)
        torch.manual_seed(12)
        with torch.set_grad_enabled(False):
            got = mine(x)
        torch.manual_seed(12)
        with torch.set_grad_enabled(False):
            expected = book(x)
        if not (isinstance(got, torch.Tensor) and got.shape == expected.shape
                and torch.allclose(got, expected, atol=1e-5, rtol=1e-4)):
            return False
    return True


def _is_the_books(name):
    """Whether the student's piece ``name`` behaves as the book's, on the pieces below it as they
    stand now (each part's own tests say where it does not)."""
    try:
        mine = _piece(name)
        if name == "GELU":
            x = torch.linspace(-6, 6, 61).view(1, 61)
            return torch.allclose(mine()(x), F.gelu(x, approximate="tanh"), atol=1e-6)
        if name == "LayerNorm":
            torch.manual_seed(13)
            x = 3 * torch.randn(2, 3, 8) + 1
            if not _same_module((mine, StandInLayerNorm), 8, x):
                return False
            norm = mine(8)
            with torch.set_grad_enabled(False):  # other scale and shift than the ones and zeros they start as
                norm.scale.uniform_(0.5, 1.5)
                norm.shift.uniform_(-0.5, 0.5)
                return torch.allclose(norm(x), F.layer_norm(x, (8,), norm.scale, norm.shift, 1e-5), atol=1e-5)
        cfg = {**PIECE_CFG, "drop_rate": 0.25}
        if name == "GPTModel":
            x = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
        else:
            torch.manual_seed(13)
            x = torch.randn(2, 5, 8)
        return _same_module((mine, STAND_INS[name]), cfg, x, drop=name != "FeedForward")
    except Exception:  # a piece that cannot even run is not the book's (its tests say why)
        return False


@pytest.fixture(autouse=True)
def book_pieces(request, monkeypatch):
    """A stand-in (the book's piece, made here from torch's own classes) for each piece of an
    earlier part that does not behave as the book's, in the student's modules and the tests' own
    names, for the test's duration; the earlier part's tests fail where it is wrong."""
    part = request.path.stem.removeprefix("test_")
    folder = Path(__file__).resolve().parent
    for name in BELOW.get(part, ()):
        if HOME[name] not in sys.modules:
            try:
                __import__(HOME[name])
            except Exception:  # a module that cannot be imported fails the tests that import it
                continue
        if _is_the_books(name):
            continue
        mine = _piece(name)
        for module in list(sys.modules.values()):
            if str(getattr(module, "__file__", None) or "").startswith(str(folder)) and \
                    getattr(module, name, None) is mine:
                monkeypatch.setattr(module, name, STAND_INS[name])


def pytest_configure(config):
    public_tests.keep_going(config)


def pytest_collection_modifyitems(items):
    public_tests.book_order(items, PARTS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failure in the tests' own words: one line for a function not written yet."""
    public_tests.explain(item, call, (yield).get_result())


def pytest_exception_interact(node, call, report):
    """A module that cannot be imported, in the same short words."""
    public_tests.explain_collection(node, call, report, PARTS)


def pytest_sessionfinish(session, exitstatus):
    public_tests.hide_stubs(session, exitstatus)
