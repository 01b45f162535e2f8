"""Hidden checks for section 4.7, generating text (12 points).

generate_text_simple runs on the student's own GPTModel with the grader's weights and stand-ins
for its blocks, final norm and output head; every new token is judged against the logits the
grader computes itself with the same weights (the book's GPTModel, or the book's with the
mistake gpt_model was charged with, by name: that mistake costs nothing here). What the child's
hooks record of the model's calls serves the feedback only (which tokens it was given, which
mistake that is); a mistake of the GPTModel the grader cannot model costs points here too."""
import pytest
import torch

from _gpt import (GPT_MISTAKES, KEEP, TIED, block_names, built, gpt_forward, live_ids, params, run, stand_ins,
                  swapped, token_ids)
from autograder.grading.compare import seeded, yours_vs_expected
from autograder.grading.diagnose import LOOP_SHORT
from autograder.grading.kit import charged
from autograder.grading.result import failure

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
    return [{"let": "m", "call": GPT, "args": [cfg], "stand_in": spec, "params_keep": KEEP, "params": params(module),
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
    found = {None: lambda ids: run(module, ids)}
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
    module, spec = model_case(ref, cfg, seed)
    plan = student.plan(generation(cfg, idx, max_new_tokens, context_size, module, spec), needs=GEN)
    out = plan.values["out"]
    # what the child's hooks recorded says what went wrong: it can make the check fail, never pass
    judge_steps(idx, out, plan.records["out"]["m"], max_new_tokens, context_size)  # feedback only
    what = f"generate_text_simple(model, idx of shape {tuple(idx.shape)}, max_new_tokens={max_new_tokens}, " \
           f"context_size={context_size})"
    first = None
    for name, model in models(student, module, spec).items():
        off = departure(model, out, idx, max_new_tokens, context_size)
        if off is None:
            if name is not None:
                student.notes.append(f"generate_text_simple itself is right: its tokens are those of the book's "
                                     f"GPTModel with the mistake charged in gpt_model ({name}).")
            return plan
        first = first or off
    step, given, best = first
    if not step:
        raise AssertionError(f"{what}: " + yours_vs_expected(
            yours=list(getattr(out, "shape", ())) or type(out).__name__, yours_are="returned",
            expected=f"the prompt followed by the {max_new_tokens} new tokens, token ids of shape "
                     f"{[idx.shape[0], idx.shape[1] + max_new_tokens]}"))
    raise AssertionError(f"{what}: new token {step} is {given}, " + (
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
    module, spec = model_case(ref, cfg, seeds("model"))
    plan = student.plan(generation(cfg, idx, 0, 8, module, spec), needs=GEN)
    if not torch.equal(plan.values["out"], idx):
        raise AssertionError("generate_text_simple(model, idx, max_new_tokens=0, ...) must return idx's tokens")

