"""Hidden checks for section 4.7, generating text (12 points).

generate_text_simple runs on the student's own GPTModel with the grader's weights and stand-ins
for its blocks, final norm and output head; every new token is judged against the logits the
grader computes itself with the same weights (the book's GPTModel, or the book's with the
mistake gpt_model was charged with, by name: that mistake costs nothing here). What the child's
hooks record of the model's calls serves the feedback only (which tokens it was given, which
mistake that is). Where the student's GPTModel cannot be built or run, or gpt_model lost points in
this grading and the generation on it is not right, generate_text_simple is judged again on a model
the grader chooses (``library_model``: torch's own nn.Embedding, nn.TransformerEncoderLayer and
nn.Linear, reached in the child through the student's own ``import torch``, with the grader's
weights), every expected token computed here on the same weights: one mistake, one part."""
import ast

import pytest
import torch

from _gpt import (on_stand_ins, GPT_MISTAKES, KEEP, TIED, block_names, built, gpt_forward, live_ids, params, run, stand_ins,
                  swapped, token_ids)
from autograder.grading.compare import seeded, set_seed, yours_vs_expected
from autograder.grading.diagnose import LOOP_SHORT
from autograder.grading.kit import charged, once
from autograder.grading.result import failure
from autograder.sandbox.session import StudentFailure

points = pytest.mark.points
GEN = "generate.generate_text_simple"
GPT = "gpt_model.GPTModel"
# vocab_size <= context_length, so that the book's model with the positions of the token ids
# (pos_emb(in_idx), a mistake charged in gpt_model) can be run on every sequence; three sizes
CFGS = [
    {"vocab_size": 8, "context_length": 8, "emb_dim": 12, "n_heads": 3, "n_layers": 2, "drop_rate": 0.0,
     "qkv_bias": False},
    {"vocab_size": 10, "context_length": 10, "emb_dim": 8, "n_heads": 2, "n_layers": 3, "drop_rate": 0.0,
     "qkv_bias": True},
    {"vocab_size": 6, "context_length": 6, "emb_dim": 16, "n_heads": 4, "n_layers": 1, "drop_rate": 0.0,
     "qkv_bias": False},
]


def model_case(ref, cfg, seed):
    """The reference GPTModel built after ``seed`` with stand-ins for its blocks, final norm and
    output head (bias-free, as the book's: so that out_head's own mistakes, a bias or a tie, cost
    nothing here), and the spec."""
    spec = stand_ins(block_names(cfg), cfg["emb_dim"], seed + 1)
    spec["out_head"] = {"weight": seeded(cfg["vocab_size"], cfg["emb_dim"], seed=seed + 2)}
    return swapped(built(ref.gpt_model.GPTModel, cfg, seed), spec), spec


def generation(cfg, idx, max_new_tokens, context_size, module, spec):
    """The student's GPTModel with the grader's weights and stand-ins, and their generation."""
    return [{"let": "m", "call": GPT, "args": [cfg], **on_stand_ins(spec), "params_keep": KEEP, "params": params(module),
             "train": False},
            *live_ids("idx", "m.tok_emb.weight", idx),
            {"let": "out", "call": GEN, "args": [{"$ref": "m"}, {"$ref": "idx"}, max_new_tokens, context_size],
             "record": ["m"], "return": True},
            {"let": "idx_after", "attr": "idx", "return": True}]


def judge_steps(idx, out, calls, max_new_tokens, context_size):
    """Replay the generation on the model's recorded answers; fail at the first step that differs."""
    what = f"generate_text_simple(model, idx of shape {tuple(idx.shape)}, max_new_tokens={max_new_tokens}, " \
           f"context_size={context_size})"
    if len(calls) != max_new_tokens:
        raise failure(f"{what} called the model {len(calls)} times; expected once per new token.",
                      LOOP_SHORT if len(calls) == max_new_tokens - 1 else None)
    only_new(idx, out, calls, what)
    seq = idx
    for step, call in enumerate(calls):
        given, logits = call[0], call[-1]
        want = seq[:, -context_size:]
        if not (isinstance(given, torch.Tensor) and given.shape == want.shape and torch.equal(given, want)):
            mistake = None
            if isinstance(given, torch.Tensor) and given.shape == seq[:, :context_size].shape and \
                    torch.equal(given, seq[:, :context_size]) and seq.shape[1] > context_size:
                mistake = "cropping the first tokens (idx[:, :context_size]; the book keeps the last ones, idx[:, -context_size:])"
            elif isinstance(given, torch.Tensor) and given.shape == seq.shape and torch.equal(given, seq):
                mistake = "no cropping to the last context_size tokens"
            elif isinstance(given, torch.Tensor) and context_size > 1 and \
                    given.shape == seq[:, -(context_size - 1):].shape and torch.equal(given, seq[:, -(context_size - 1):]):
                mistake = "cropping to context_size - 1 tokens (idx[:, -context_size:] keeps context_size)"
            raise failure(f"{what}: step {step + 1}: " + yours_vs_expected(
                yours=f"{list(getattr(given, 'shape', ()))} tokens", yours_are="gave the model",
                expected=f"the last {want.shape[1]} of the sequence so far") + ".", mistake)
        if not isinstance(logits, torch.Tensor) or logits.dim() != 3 or logits.shape[:2] != given.shape:
            raise AssertionError(f"{what}: the model's answer at step {step + 1} is not (batch, num_tokens, vocab)")
        nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        seq = torch.cat([seq, nxt], dim=1)
        if not isinstance(out, torch.Tensor) or out.shape[0] != seq.shape[0] or out.shape[1] < seq.shape[1]:
            continue
        got = out[:, seq.shape[1] - 1]
        if not torch.equal(got, nxt[:, 0]):
            mistake = None
            if torch.equal(got, logits[:, 0, :].argmax(dim=-1)):
                mistake = "the first position's logits (logits[:, -1, :] is the last)"
            elif torch.equal(got, logits[:, -1, :].argmin(dim=-1)):
                mistake = "argmin instead of argmax"
            raise failure(f"{what}: new token {step + 1} is {got.tolist()}, but the most likely next token "
                          f"after the model's last position is {nxt[:, 0].tolist()}.", mistake)
    if not isinstance(out, torch.Tensor) or out.shape != seq.shape or not torch.equal(out, seq):
        raise AssertionError(f"{what}: " + yours_vs_expected(
            yours=list(getattr(out, 'shape', ())) or type(out).__name__, yours_are="returned",
            expected=f"the prompt followed by the {max_new_tokens} new tokens, shape {list(seq.shape)}"))


def only_new(idx, out, calls, what):
    """Fail, naming the mistake, where ``out`` is exactly the new tokens without the prompt."""
    new = []
    for call in calls:
        logits = call[-1]
        if not isinstance(logits, torch.Tensor) or logits.dim() != 3:
            return
        new.append(logits[:, -1, :].argmax(dim=-1, keepdim=True))
    if new and isinstance(out, torch.Tensor) and out.shape == (idx.shape[0], len(new)) and \
            torch.equal(out, torch.cat(new, dim=1)):
        raise failure(f"{what}: " + yours_vs_expected(
            yours=f"{list(out.shape)}: only the new tokens", yours_are="returned",
            expected=f"the prompt followed by them, shape {[idx.shape[0], idx.shape[1] + len(new)]}") + ".", ONLY_NEW)


ONLY_NEW = "only the new tokens returned (the book returns the prompt with them: idx grows by one each step)"


def models(student, module, spec):
    """{mistake charged in gpt_model (None: the book's): the logits of that GPTModel}, computed here."""
    found = {None: lambda ids: run(module, ids, cache=False)}  # ids: the student's sequence so far
    for name in charged(student, ["gpt_model"], [name for name in GPT_MISTAKES if name != TIED]):  # a tie: stood in
        found[name] = lambda ids, v=GPT_MISTAKES[name]: gpt_forward(ids, module, spec, variant=v)
    return found


def departure(model, out, idx, max_new_tokens, context_size):
    """Where ``out`` leaves the greedy generation through ``model`` (the grader's logits on the
    sequence so far): None where every new token is a most likely one (within rounding, so that
    a tie may go either way), else (step, the token given, the most likely one)."""
    n = idx.shape[1]
    if not isinstance(out, torch.Tensor) or out.dtype != idx.dtype or out.shape != (idx.shape[0], n + max_new_tokens) \
            or not torch.equal(out[:, :n], idx):
        return 0, None, None
    for step in range(max_new_tokens):
        try:
            with torch.no_grad():
                logits = model(out[:, :n + step][:, -context_size:])[:, -1, :]
        except (IndexError, RuntimeError):  # that model cannot run there: the answer is not its
            return step + 1, out[:, n + step].tolist(), None
        given = out[:, n + step]
        if not bool(((given >= 0) & (given < logits.shape[-1])).all()):
            return step + 1, given.tolist(), logits.argmax(dim=-1).tolist()
        best = logits.max(dim=-1).values
        if not bool((logits.gather(1, given[:, None]).squeeze(1) >= best - 1e-5 * best.abs().clamp(min=1)).all()):
            return step + 1, given.tolist(), logits.argmax(dim=-1).tolist()
    return None


def run_case(student, ref, cfg, idx, max_new_tokens, context_size, seed):
    """The generation judged on the student's GPTModel; where that model cannot be built or run, or
    gpt_model lost points, and the generation on it is not right, judged on ``library_model``
    instead (its failure then is the one reported). Returns the plan of the model it passed on."""
    module, spec = model_case(ref, cfg, seed)
    plan = student.plan([*generation(cfg, idx, max_new_tokens, context_size, module, spec)[:3],
                         {"let": "runs", "call": "m", "args": [{"$ref": "idx"}]},  # the model runs on the prompt
                         *generation(cfg, idx, max_new_tokens, context_size, module, spec)[3:]], needs=GEN)
    stand_in = plan.failed("m") is not None or plan.failed("runs") is not None or "gpt_model" in student.failed_parts
    try:
        return judge_case(student, plan, module, spec, idx, max_new_tokens, context_size)
    except (AssertionError, StudentFailure):
        if not stand_in or torch_from(student) is None:
            raise
    model = library_model(cfg, seed, idx, max_new_tokens, context_size)
    student.judged_anew()
    plan = student.plan(library_generation(torch_from(student), cfg, idx, max_new_tokens, context_size, model),
                        needs=GEN)
    judge_steps(idx, plan.values["out"], plan.records["out"]["m"], max_new_tokens, context_size)  # feedback only
    off = departure(lambda ids: run(model, ids, cache=False), plan.values["out"], idx, max_new_tokens, context_size)
    if off is not None:
        raise departed(off, idx, max_new_tokens, context_size, LIBRARY_WORDS)
    student.notes.append(f"generate_text_simple is judged on the grader's own model ({LIBRARY_WORDS}): your GPTModel "
                         "could not be built or run, or lost points in gpt_model, which charges it.")
    return plan


LIBRARY_WORDS = "torch's nn.Embedding, nn.TransformerEncoderLayer and nn.Linear in an nn.Sequential, with the " \
    "grader's weights"


def library_model(cfg, seed, idx, max_new_tokens, context_size):
    """The grader's language model for judging a generation without the student's GPTModel: token
    ids (batch, num_tokens) to logits (batch, num_tokens, vocab_size), built here from torch's own
    classes, in eval mode, its attention weighted up so that every token of the window counts. A
    witness: of the models drawn after ``seed``, ``seed + 1``, ..., the first on which feeding the
    wrong window (the whole sequence, its first context_size tokens, or one token fewer), wherever
    that is another window than the book's, gives other tokens than the book's generation, so that
    the tokens computed here tell a crop from none."""
    def build(k):
        set_seed(seed + k)
        d = cfg["emb_dim"]
        model = torch.nn.Sequential(
            torch.nn.Embedding(cfg["vocab_size"], d),
            torch.nn.TransformerEncoderLayer(d, cfg["n_heads"], dim_feedforward=2 * d, dropout=0.0, batch_first=True),
            torch.nn.Linear(d, cfg["vocab_size"])).eval()
        with torch.no_grad():
            model[1].self_attn.in_proj_weight.mul_(3.0)
            model[1].self_attn.out_proj.weight.mul_(10.0)
        return model

    def witness():
        for k in range(64):
            if _tells_the_windows_apart(build(k), idx, max_new_tokens, context_size):
                return build(k)
        return build(0)
    return once(("ch04 generate library model", tuple(sorted(cfg.items())), seed, idx.numpy().tobytes(),
                 tuple(idx.shape), max_new_tokens, context_size), witness)


def _greedy(model, idx, max_new_tokens, window):
    """The greedy generation through ``model`` fed ``window(sequence so far)``, computed here."""
    seq = idx
    with torch.no_grad():
        for _ in range(max_new_tokens):
            seq = torch.cat([seq, model(window(seq))[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
    return seq


def _tells_the_windows_apart(model, idx, max_new_tokens, context_size):
    book = _greedy(model, idx, max_new_tokens, lambda seq: seq[:, -context_size:])
    wrong = [lambda seq: seq, lambda seq: seq[:, :context_size]]
    if context_size > 1:
        wrong.append(lambda seq: seq[:, -(context_size - 1):])
    n = idx.shape[1]
    for window in wrong:
        other = any(not torch.equal(window(book[:, :n + k]), book[:, :n + k][:, -context_size:])
                    for k in range(max_new_tokens))
        if other and torch.equal(_greedy(model, idx, max_new_tokens, window), book):
            return False
    return True


def library_generation(torch_module, cfg, idx, max_new_tokens, context_size, model):
    """The plan: ``library_model``'s layers made in the child from torch's own classes, reached
    through the student's ``torch_module`` (its ``import torch``), the grader's weights copied in,
    and the student's generation through them."""
    d, vocab = cfg["emb_dim"], cfg["vocab_size"]
    nn = f"{torch_module}.torch.nn"
    return [{"let": "emb", "call": f"{nn}.Embedding", "args": [vocab, d]},
            {"let": "enc", "call": f"{nn}.TransformerEncoderLayer", "args": [d, cfg["n_heads"]],
             "kwargs": {"dim_feedforward": 2 * d, "dropout": 0.0, "batch_first": True}},
            {"let": "head", "call": f"{nn}.Linear", "args": [d, vocab]},
            {"let": "m", "call": f"{nn}.Sequential", "args": [{"$ref": "emb"}, {"$ref": "enc"}, {"$ref": "head"}],
             "params": params(model), "train": False},
            *live_ids("idx", "m.0.weight", idx),
            {"let": "out", "call": GEN, "args": [{"$ref": "m"}, {"$ref": "idx"}, max_new_tokens, context_size],
             "record": ["m"], "return": True},
            {"let": "idx_after", "attr": "idx", "return": True}]


def torch_from(student):
    """The submission's module through which the child reaches torch: generate.py, else another of
    its modules, that imports torch at its top level (``import torch``); None where none does.
    Read here, from the sources; a module that shadows the name afterwards fails its own plan."""
    sources = getattr(student, "sources", None) or {}
    for name in ["generate", *sorted(n for n in sources if n != "generate")]:
        try:
            tree = ast.parse(sources.get(name) or "")
        except (SyntaxError, ValueError, RecursionError):
            continue
        if any(isinstance(node, ast.Import) and any(a.name == "torch" and a.asname is None for a in node.names)
               for node in tree.body):
            return name
    return None


def judge_case(student, plan, module, spec, idx, max_new_tokens, context_size):
    """The generation of ``plan`` on the student's GPTModel, judged as run_case says."""
    out = plan.values["out"]
    # what the child's hooks recorded says what went wrong: it can make the check fail, never pass
    judge_steps(idx, out, plan.records["out"]["m"], max_new_tokens, context_size)  # feedback only
    first = None
    for name, model in models(student, module, spec).items():
        off = departure(model, out, idx, max_new_tokens, context_size)
        if off is None:
            if name is not None:
                student.notes.append(f"generate_text_simple itself is right: its tokens are those of the book's "
                                     f"GPTModel with the mistake charged in gpt_model ({name}).")
            return plan
        first = first or off
    raise departed(first, idx, max_new_tokens, context_size, None, out)


def departed(off, idx, max_new_tokens, context_size, library, out=None):
    """The failure of a generation that leaves the greedy one at ``off`` (``departure``'s answer);
    ``library``: the words for the grader's own model it was judged on (None: the book's GPTModel)."""
    what = f"generate_text_simple(model, idx of shape {tuple(idx.shape)}, max_new_tokens={max_new_tokens}, " \
           f"context_size={context_size})" + (f" on the grader's model ({library})" if library else "")
    step, given, best = off
    if not step:
        return AssertionError(f"{what}: " + yours_vs_expected(
            yours=list(getattr(out, "shape", ())) or type(out).__name__, yours_are="returned",
            expected=f"the prompt followed by the {max_new_tokens} new tokens, token ids of shape "
                     f"{[idx.shape[0], idx.shape[1] + max_new_tokens]}"))
    if library:
        return AssertionError(f"{what}: new token {step} is {given}, " + (
            f"but the most likely next token after the last position's logits is {best}" if best is not None
            else "which that model cannot give") + ".")
    return AssertionError(f"{what}: new token {step} is {given}, " + (
        f"but the most likely next token, with the grader's weights in the book's GPTModel, is {best}"
        if best is not None else "which the book's GPTModel with the grader's weights cannot give")
        + ". Your generation follows what your GPTModel answered it, and that is not what the book's answers "
        "(see gpt_model): new tokens are credited only where the grader computes them.")


@points(5)
def test_generate_greedy(student, ref, seeds):
    """each new token is the argmax of the model's logits at the last position, appended to the sequence"""
    for i, (cfg, b, n, new) in enumerate([(CFGS[0], 2, 3, 4), (CFGS[1], 1, 1, 3), (CFGS[2], 3, 2, 2)]):
        run_case(student, ref, cfg, token_ids(b, n, cfg["vocab_size"], seeds(f"idx{i}")), new, cfg["context_length"],
                 seeds(f"model{i}"))


@points(4)
def test_generate_crops_to_the_last_context_size_tokens(student, ref, seeds):
    """the model sees only the last context_size tokens, from the first step (a long prompt) and as the text grows"""
    cfg = CFGS[1]  # context_length 10, larger than context_size: the model itself would take more
    run_case(student, ref, cfg, token_ids(2, 6, cfg["vocab_size"], seeds("idx0")), 3, 4, seeds("model0"))
    run_case(student, ref, cfg, token_ids(1, 2, cfg["vocab_size"], seeds("idx1")), 5, 3, seeds("model1"))


@points(3)
def test_generate_leaves_idx_and_returns_a_new_tensor(student, ref, seeds):
    """idx itself is left unchanged; max_new_tokens=0 gives the prompt back"""
    cfg = CFGS[0]
    idx = token_ids(2, 3, cfg["vocab_size"], seeds("idx"))
    plan = run_case(student, ref, cfg, idx, 2, 8, seeds("model"))
    if not torch.equal(plan.values["idx_after"], idx):
        raise AssertionError("generate_text_simple changed the caller's idx in place: build a new tensor "
                             "(idx = torch.cat((idx, idx_next), dim=1))")
    plan = run_case(student, ref, cfg, idx, 0, 8, seeds("model"))
    if not torch.equal(plan.values["out"], idx):
        raise AssertionError("generate_text_simple(model, idx, max_new_tokens=0, ...) must return idx's tokens")

