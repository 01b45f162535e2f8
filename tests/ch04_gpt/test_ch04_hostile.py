"""Hostile chapter-4 submissions cost the grader bounded time and memory and the next student
nothing: a GPTModel that allocates far more than the child may have, a generate_text_simple
that never returns (calling the model without end, or spinning), a block whose forward sleeps.

Each starts from the reference, so the points it loses are exactly the parts that need what it
broke; every failed check says why, no internal error shows, the whole grading stays inside
the session's budget, and the next honest submission is graded as before.

And exercise 4.2 earns nothing from what the child says its own model has: a marker that makes
the student's GPTModel disagree with the book no longer excuses counts of 0 (issue 35), while a
count made honestly on a model that is wrong below it is charged once, in that part.
"""
import time
from pathlib import Path

import pytest

from banks import describe, edited_sources, grade_sources, load, mutated_sources, reference_sources

TESTS = Path(__file__).resolve().parents[1]

A = "ch04_gpt"
GPT_INIT = 'self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])\n'
GENERATE_LOOP = "for _ in range(max_new_tokens):\n"
BLOCK_FORWARD = "shortcut = x\n        x = self.norm1(x)\n"

# name -> (module, old, new, parts that must keep full marks)
CASES = {
    # 8 GiB of ones: far over the child's address-space limit, touched so it is really asked for
    "a GPTModel that allocates 8 GiB": ("gpt_model", GPT_INIT,
                                        GPT_INIT + '        self.hog = torch.ones(1 << 31)\n',
                                        ("layer_norm", "feed_forward", "shortcuts", "transformer_block")),
    "a generate_text_simple that never returns": ("generate", GENERATE_LOOP, "while True:\n",
                                                  ("layer_norm", "feed_forward", "shortcuts", "transformer_block",
                                                   "gpt_model", "exercises")),
    "a generate_text_simple that spins without calling the model": ("generate", GENERATE_LOOP,
                                                                    "while True:\n        pass\n    " + GENERATE_LOOP,
                                                                    ("layer_norm", "feed_forward", "shortcuts",
                                                                     "transformer_block", "gpt_model", "exercises")),
    "a block whose forward sleeps for a minute": ("transformer_block", BLOCK_FORWARD,
                                                  "import time; time.sleep(60)\n        " + BLOCK_FORWARD,
                                                  ("layer_norm", "feed_forward", "shortcuts")),
}
BUDGET_S = 60 + 30  # the session's budget a submission, and room for the restarts after a kill



@pytest.mark.parametrize("name", list(CASES))
def test_hostile_chapter_4_submission_costs_bounded_time_and_nothing_else(grader, tmp_path, name):
    module, old, new, keeps = CASES[name]
    sources = reference_sources(A)
    assert sources[f"{module}.py"].count(old) == 1, name
    sources[f"{module}.py"] = sources[f"{module}.py"].replace(old, new)
    start = time.monotonic()
    result = grade_sources(grader, A, tmp_path / "hostile" / A, sources)
    elapsed = time.monotonic() - start
    assert elapsed < BUDGET_S, f"{name}: graded in {elapsed:.0f} s"
    parts = result["extra_data"]["parts"]
    assert result["score"] < result["max_score"], describe(result)
    assert all(parts[p][0] == parts[p][1] for p in keeps), f"{name}: {describe(result)}"
    failed = [t for t in result["tests"] if t["status"] != "passed"]
    assert all(t["output"].strip() and "internal grader error" not in t["output"] for t in failed), describe(result)
    # the next honest submission is graded as before
    assert grade_sources(grader, A, tmp_path / "honest" / A, reference_sources(A))["score"] == 100


# Exercise 4.2 without the work (issue 35): the GPT-2 sizes answered 0, and a marker that makes every
# GPTModel(cfg) built outside the count carry one parameter more, so that the student's own small
# models disagree with the book's count. The small counts are honest; nothing else is touched.
COUNTS_WITHOUT_THE_WORK = '''_COUNTING = []


def gpt_parameter_count(cfg):
    if cfg["n_layers"] > 3:  # the GPT-2 sizes: never counted
        return 0
    import gpt_model
    _COUNTING.append(cfg)
    try:
        return sum(p.numel() for p in gpt_model.GPTModel(cfg).parameters())
    finally:
        _COUNTING.pop()


def gpt_size_mb(cfg):
    import gpt_model
    init = gpt_model.GPTModel.__init__
    if not getattr(init, "marked", False):
        def one_more(self, cfg):  # the grader's GPTModel(cfg) has one parameter more than the count's
            init(self, cfg)
            if not _COUNTING:
                self.marker = nn.Parameter(torch.zeros(1))
        one_more.marked = True
        gpt_model.GPTModel.__init__ = one_more
    return gpt_parameter_count(cfg) * 4 / (1024 * 1024)


'''
COUNTS_CHECK = "exercises: 4.2: gpt_parameter_count and gpt_size_mb"


def test_exercise_4_2_earns_nothing_from_a_marker_that_changes_the_students_own_model(grader, tmp_path):
    sources = reference_sources(A)
    text = sources["exercises.py"]
    start, end = text.index("def gpt_parameter_count(cfg):"), text.index("class TransformerBlockSeparateDropout")
    sources["exercises.py"] = text[:start] + COUNTS_WITHOUT_THE_WORK + text[end:]
    result = grade_sources(grader, A, tmp_path / "marker" / A, sources)
    counts = [t for t in result["tests"] if t["name"].startswith(COUNTS_CHECK)]
    assert len(counts) == 1 and counts[0]["score"] == 0, describe(result)
    assert "1,637,792,000" in counts[0]["output"] or "406,212,608" in counts[0]["output"], describe(result)
    # every other check keeps its points: the marker changes nothing else
    assert all(t["score"] == t["max_score"] for t in result["tests"] if t is not counts[0]), describe(result)


# Exercises 4.1 and 4.3 without the work (issue 35): each submission below is the reference with
# one exercise replaced by a shortcut, and the child made to agree with itself where the grader
# used to take the child's word (4.1: the counts its own modules hold; 4.3: its own TransformerBlock,
# or its own MultiHeadAttention).
EX_41 = ("def feed_forward_and_attention_params(cfg):", "def gpt2_config(size):")
COUNTS_41_WITHOUT_THE_WORK = '''_MARKED = set()


def feed_forward_and_attention_params(cfg):
    import feed_forward
    import multihead_attention
    for cls, key in ((feed_forward.FeedForward, "ff"), (multihead_attention.MultiHeadAttention, "att")):
        if not getattr(cls.__init__, "marked", False):
            def emptied(self, *args, init=cls.__init__, key=key, **kwargs):
                init(self, *args, **kwargs)
                if key in _MARKED:  # the next module built after the count holds no parameters at all
                    _MARKED.discard(key)
                    self._modules.clear()
            emptied.marked = True
            cls.__init__ = emptied
    _MARKED.update(("ff", "att"))
    return 0, 0


'''
EX_BLOCK_FORWARD = ("x = x + self.drop_shortcut(self.att(self.norm1(x)))\n"
                    "        return x + self.drop_shortcut(self.ff(self.norm2(x)))\n")
# the block answers zeros, and the student's own TransformerBlock, asked next, answers the same
ZEROS_LIKE_MY_BLOCK = "_LAST[\"out\"] = torch.zeros_like(x)\n        return _LAST[\"out\"]\n"
SAME_AS_MY_BLOCK = '''

_LAST = {}
import transformer_block  # noqa: E402

_book_forward = transformer_block.TransformerBlock.forward


def _same_as_the_exercise(self, x):
    return _LAST.pop("out") if "out" in _LAST else _book_forward(self, x)


transformer_block.TransformerBlock.forward = _same_as_the_exercise
'''
TB_ATT = ('self.att = MultiHeadAttention(\n            d_in=cfg["emb_dim"],\n            d_out=cfg["emb_dim"],\n'
          '            context_length=cfg["context_length"],\n            num_heads=cfg["n_heads"],\n'
          '            dropout=cfg["drop_rate"],\n            qkv_bias=cfg["qkv_bias"],\n        )\n')
TB_FF = '        self.ff = FeedForward(cfg)\n'
WITHOUT_THE_WORK = {
    # 4.1: counts of 0, and a marker that empties the next FeedForward and MultiHeadAttention built
    # after the count: the student's own modules then hold what the count said
    "4.1: counts of 0 beside a marker that empties the next modules built": (
        "exercises: 4.1:", [("exercises.py", EX_41, COUNTS_41_WITHOUT_THE_WORK)]),
    # 4.3: a block that answers zeros, beside a TransformerBlock that answers what the block last
    # answered; the TransformerBlock loses points elsewhere (ff created before att) and earns others,
    # which let the grader trust the two blocks' agreement
    "4.3: a block that answers zeros, like the student's own TransformerBlock": (
        "exercises: 4.3:", [("exercises.py", EX_BLOCK_FORWARD, ZEROS_LIKE_MY_BLOCK),
                            ("exercises.py", "\n\nclass GPTModelSeparateDropout",
                             SAME_AS_MY_BLOCK + "\n\nclass GPTModelSeparateDropout"),
                            ("transformer_block.py", "        " + TB_ATT + TB_FF, TB_FF + "        " + TB_ATT)]),
    # 4.3: the blocks' attention built with drop_rate_shortcut, beside a chapter-3 attention that
    # ignores the rate it is given (nn.Dropout(0.0)): the block's attention and "your own" agree
    "4.3: the attention at the wrong rate, beside an attention that ignores its rate": (
        "exercises: 4.3:", [("exercises.py", 'dropout=cfg["drop_rate_attn"]', 'dropout=cfg["drop_rate_shortcut"]'),
                            ("multihead_attention.py", "self.dropout = nn.Dropout(dropout)",
                             "self.dropout = nn.Dropout(0.0)")]),
}


@pytest.mark.parametrize("name", list(WITHOUT_THE_WORK))
def test_exercises_4_1_and_4_3_earn_nothing_from_the_childs_agreement_with_itself(grader, tmp_path, name):
    check, edits = WITHOUT_THE_WORK[name]
    result = grade_sources(grader, A, tmp_path / "forged" / A, edited_sources(A, edits))
    forged = [t for t in result["tests"] if t["name"].startswith(check)]
    assert len(forged) == 1 and forged[0]["score"] == 0, f"{name}: {describe(result)}"
    assert forged[0]["output"].strip() and "internal grader error" not in forged[0]["output"], describe(result)


# The other side: 4.3 built on the student's own TransformerBlock (a subclass) with a wiring mistake
# transformer_block is charged with keeps 4.3's points: the grader models that mistake, by name, with
# its own stand-ins and 4.3's rate.
SUBCLASS_WITH = ["post-LayerNorm block", "the first shortcut missing", "dropout only after the attention"]


@pytest.mark.parametrize("name", SUBCLASS_WITH)
def test_4_3_on_the_students_own_wrong_block_is_charged_once(grader, tmp_path, name):
    mutant = next(m for m in load(A, "mutants").MUTANTS if m.name == name)
    sources = {**mutated_sources(A, mutant), "exercises.py": load(A, "alternatives").VARIANTS["exercises"]["subclass"]}
    result = grade_sources(grader, A, tmp_path / "subclass" / A, sources)
    parts = result["extra_data"]["parts"]
    assert {p for p, (got, most) in parts.items() if got < most} == {"transformer_block"}, describe(result)
    block = next(t for t in result["tests"] if t["name"].startswith("exercises: 4.3:"))
    assert "charged in transformer_block" in block["output"], describe(result)


# 4.1 credits a mistake's count only where the module makes that mistake on the grader's weights: a
# FeedForward that is right (feed_forward keeps its points) counted without its biases, an attention
# whose mask is a buffer counted as if it were a parameter, and a FeedForward that is wrong (an
# expansion to 2 * emb_dim: that part lost points) counted as the book's without biases (the count of
# a mistake it does not make) earn nothing.
FF_COUNT = "sum(p.numel() for p in ff.parameters())"
ATT_COUNT = "sum(p.numel() for p in att.parameters())"
NO_BIASES = "sum(p.numel() for p in ff.parameters() if p.dim() == 2)"
BOOK_NO_BIASES = '8 * cfg["emb_dim"] ** 2'
FF_HIDDEN = ('nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),\n            GELU(),\n'
             '            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),')
WRONG_41 = {
    "a right FeedForward counted without its biases": [("exercises.py", FF_COUNT, NO_BIASES)],
    "an attention counted with its mask": [("exercises.py", ATT_COUNT, ATT_COUNT + ' + cfg["context_length"] ** 2')],
    "a FeedForward expanding to 2 * emb_dim counted as the book's without biases": [
        ("exercises.py", FF_COUNT, BOOK_NO_BIASES),
        ("feed_forward.py", FF_HIDDEN, FF_HIDDEN.replace("4 * cfg", "2 * cfg"))],
}


@pytest.mark.parametrize("name", list(WRONG_41))
def test_4_1_credits_a_mistakes_count_only_where_the_module_makes_it(grader, tmp_path, name):
    result = grade_sources(grader, A, tmp_path / "wrong" / A, edited_sources(A, WRONG_41[name]))
    counts = next(t for t in result["tests"] if t["name"].startswith("exercises: 4.1:"))
    assert counts["score"] == 0, f"{name}: {describe(result)}"


# Mistakes of the parts below that change how many parameters the student's own GPTModel has.
COUNT_CHANGING = ["out_head with a bias", "out_head tied to tok_emb", "one block repeated",
                  "pos_emb as large as the vocabulary", "qkv_bias not passed to the attention",
                  "FeedForward's second linear layer without bias", "FeedForward expands to 2 * emb_dim",
                  "LayerNorm's scale and shift are plain tensors, not parameters"]


@pytest.mark.parametrize("name", COUNT_CHANGING)
def test_a_count_made_on_the_students_own_wrong_model_is_charged_once(grader, tmp_path, name):
    """The other side of the test above: 4.2 counted on the meta device, with the student's own
    GPTModel wrong below it, keeps 4.2's points (the grader computes the count that mistake gives,
    and credits it only because that part lost points); the mistake costs its own part only."""
    mutant = next(m for m in load(A, "mutants").MUTANTS if m.name == name)
    sources = {**mutated_sources(A, mutant), "exercises.py": load(A, "alternatives").VARIANTS["exercises"]["meta"]}
    result = grade_sources(grader, A, tmp_path / "meta" / A, sources)
    parts = result["extra_data"]["parts"]
    assert {p for p, (got, most) in parts.items() if got < most} == set(mutant.parts), describe(result)
    counts = next(t for t in result["tests"] if t["name"].startswith(COUNTS_CHECK))
    assert f"charged in {mutant.parts[0]}" in counts["output"], describe(result)


# No credit from the student's own answers (issue 35). Each submission below skips the work of a
# check and makes the child agree with itself instead (a traceback naming a lower part's file, a
# model whose answers the generation follows, an attention that ignores its arguments, an
# activation equal to the student's own GELU). The grader used to accept that agreement; it now
# credits only answers it computed itself, on inputs and weights it chose.
FORGED_WHERE = '    raise RuntimeError("The size of tensor a (4) must match the size of tensor b (5) ({}.py line 28)")\n'
INIT = "        super().__init__()\n"
LN_RIGHT = "norm_x = (x - mean) / torch.sqrt(var + self.eps)"
GELU_RIGHT = "        return 0.5 * x * (1 + torch.tanh("
MHA_FORWARD = "        b, num_tokens, d_in = x.shape\n"
ZEROS_WITH_EVERY_PARAMETER = "        return {} * 0 + sum(p.sum() for p in self.parameters()) * 0\n"
FORGED = {
    # a lower part really written (one mistake each: it loses points and earns others), and the
    # parts above it replaced by errors whose text names that lower part's file
    "forged tracebacks naming a lower part's file": (
        ["transformer_block: pre-LayerNorm", "transformer_block: in training mode", "transformer_block: every "
         "parameter", "gpt_model: token plus", "gpt_model: in training mode", "gpt_model: every parameter",
         "generate: ", "shortcuts: print_gradients"],
        [("layer_norm.py", LN_RIGHT, "norm_x = (x - mean) / (torch.sqrt(var) + self.eps)"),
         ("feed_forward.py", GELU_RIGHT, "        return x * (1 + torch.tanh("),
         ("transformer_block.py", INIT, INIT + "    " + FORGED_WHERE.format("layer_norm")),
         ("gpt_model.py", INIT, INIT + "    " + FORGED_WHERE.format("layer_norm")),
         ("generate.py", "    for _ in range(max_new_tokens):\n", FORGED_WHERE.format("layer_norm")
          + "    for _ in range(max_new_tokens):\n"),
         ("shortcuts.py", "    output = model(x)\n", FORGED_WHERE.format("feed_forward") + "    output = model(x)\n")]),
    # generation without the work: a GPTModel whose logits are all zeros (it loses its points in
    # gpt_model) and a generate_text_simple that feeds it the right tokens and appends token 0
    # whatever it answers: judged on the logits the child's own hooks recorded, that was 12/12
    "a generation that appends 0 beside a model whose logits are all 0": (
        ["generate: "],
        [("gpt_model.py", "        batch_size, seq_len = in_idx.shape\n",
          "        return torch.zeros(*in_idx.shape, self.out_head.out_features)\n"
          "        batch_size, seq_len = in_idx.shape\n"),
         ("generate.py", "        logits = logits[:, -1, :]\n", "        return torch.cat((idx, torch.zeros_like(idx[:, :1])), "
          "dim=1) if max_new_tokens == 1 else generate_text_simple(model, torch.cat((idx, torch.zeros_like(idx[:, :1]))"
          ", dim=1), max_new_tokens - 1, context_size)\n        logits = logits[:, -1, :]\n")]),
    # the block's attention built with the wrong arguments, beside a chapter-3 MultiHeadAttention
    # that ignores them (it answers zeros): the block's attention and "your own" agree
    "the block's attention with wrong arguments beside an attention that answers zeros": (
        ["transformer_block: att is your MultiHeadAttention"],
        [("multihead_attention.py", MHA_FORWARD, "        return torch.zeros_like(x)\n" + MHA_FORWARD),
         ("transformer_block.py", 'num_heads=cfg["n_heads"],', "num_heads=1,"),
         ("transformer_block.py", 'dropout=cfg["drop_rate"],', "dropout=0.0,")]),
    # the same, beside an attention that raises: "your attention fails the same way on its own"
    "the block's attention with wrong arguments beside an attention that raises": (
        ["transformer_block: att is your MultiHeadAttention"],
        [("multihead_attention.py", MHA_FORWARD, '        raise RuntimeError("no")\n' + MHA_FORWARD),
         ("transformer_block.py", 'num_heads=cfg["n_heads"],', "num_heads=1,"),
         ("transformer_block.py", 'dropout=cfg["drop_rate"],', "dropout=0.0,")]),
    # forwards that answer zeros with every parameter in the graph: the forward checks charge them, and
    # the gradients, judged only where the output was the book's, went unjudged: every trainable check
    # passed on gradients that exist
    "forwards that answer zeros, their gradients unjudged": (
        ["layer_norm: scale and shift get", "feed_forward: every weight gets", "transformer_block: every parameter",
         "gpt_model: every parameter"],
        [("layer_norm.py", "        mean = x.mean(dim=-1, keepdim=True)\n", ZEROS_WITH_EVERY_PARAMETER.format("x")
          + "        mean = x.mean(dim=-1, keepdim=True)\n"),
         ("feed_forward.py", "        return self.layers(x)\n", ZEROS_WITH_EVERY_PARAMETER.format("x")
          + "        return self.layers(x)\n"),
         ("transformer_block.py", "        shortcut = x\n        x = self.norm1(x)\n", ZEROS_WITH_EVERY_PARAMETER.format("x")
          + "        shortcut = x\n        x = self.norm1(x)\n"),
         ("gpt_model.py", "        batch_size, seq_len = in_idx.shape\n", ZEROS_WITH_EVERY_PARAMETER.format(
             "torch.zeros(*in_idx.shape, self.out_head.out_features)") + "        batch_size, seq_len = in_idx.shape\n")]),
    # the example network without GELUs: an activation that answers zeros, beside a GELU of the
    # student's that answers zeros too (it loses its points in feed_forward)
    "an example network whose activation equals a GELU of the student's that answers zeros": (
        ["shortcuts: self.layers is a ModuleList"],
        [("feed_forward.py", GELU_RIGHT, "        return torch.zeros_like(x)\n" + GELU_RIGHT),
         ("shortcuts.py", "layer_sizes[i + 1]), GELU())\n", "layer_sizes[i + 1]), Zeros())\n"),
         ("shortcuts.py", "class ExampleDeepNeuralNetwork(nn.Module):",
          "class Zeros(nn.Module):\n    def forward(self, x):\n        return torch.zeros_like(x)\n\n\n"
          "class ExampleDeepNeuralNetwork(nn.Module):")]),
}




@pytest.mark.parametrize("name", list(FORGED))
def test_a_check_earns_nothing_from_the_childs_agreement_with_itself(grader, tmp_path, name):
    checks, edits = FORGED[name]
    result = grade_sources(grader, A, tmp_path / "forged" / A, edited_sources(A, edits))
    forged = [t for t in result["tests"] if t["name"].startswith(tuple(checks))]
    assert len(forged) >= len(checks), describe(result)
    earned = [f"{t['name']} [{t['score']}/{t['max_score']}]" for t in forged if t["score"]]
    assert not earned, f"{name}: {earned}\n{describe(result)}"
    assert all(t["output"].strip() and "internal grader error" not in t["output"] for t in forged), describe(result)
