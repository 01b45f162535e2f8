"""Hidden checks for section 4.7, generating text (12 points).

generate_text_simple runs on the student's own GPTModel (stand-ins for its blocks and final
norm, its own seeded embeddings and head) and every call of the model is recorded: each step
is judged against what that model answered, so a mistake in the model costs nothing here."""
import pytest
import torch

from _gpt import CFGS, block_names, judged, live_ids, stand_ins, token_ids
from autograder.grading.compare import yours_vs_expected
from autograder.grading.diagnose import LOOP_SHORT
from autograder.grading.result import failure

points = pytest.mark.points
GEN = "generate.generate_text_simple"
LOWER = ("layer_norm", "feed_forward", "transformer_block", "gpt_model")


def generation(cfg, idx, max_new_tokens, context_size, seed):
    # the student's own GPTModel as it builds itself (each step is judged on what it answered, so its
    # weights need not be the reference's: a GPTModel of another shape still serves)
    spec = stand_ins(block_names(cfg), cfg["emb_dim"], seed + 1)
    return [{"let": "m", "call": "gpt_model.GPTModel", "args": [cfg], "stand_in": spec, "seed": seed,
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


def run_case(student, cfg, idx, max_new_tokens, context_size, seed):
    plan = student.plan(generation(cfg, idx, max_new_tokens, context_size, seed), needs=GEN)
    judge_steps(idx, plan.values["out"], plan.records["out"]["m"], max_new_tokens, context_size)
    return plan


@points(5)
def test_generate_greedy(student, seeds):
    """each new token is the argmax of the model's logits at the last position, appended to the sequence"""
    def check():
        for i, (cfg, b, n, new) in enumerate([(CFGS[0], 2, 3, 4), (CFGS[1], 1, 1, 3), (CFGS[2], 3, 2, 2)]):
            run_case(student, cfg, token_ids(b, n, cfg["vocab_size"], seeds(f"idx{i}")), new, cfg["context_length"],
                     seeds(f"model{i}"))
    judged(student, LOWER, "generate_text_simple", check)


@points(4)
def test_generate_crops_to_the_last_context_size_tokens(student, seeds):
    """the model sees only the last context_size tokens, from the first step (a long prompt) and as the text grows"""
    def check():
        cfg = CFGS[1]  # context_length 10, larger than context_size: the model itself would take more
        run_case(student, cfg, token_ids(2, 6, cfg["vocab_size"], seeds("idx0")), 3, 4, seeds("model0"))
        run_case(student, cfg, token_ids(1, 2, cfg["vocab_size"], seeds("idx1")), 5, 3, seeds("model1"))
    judged(student, LOWER, "generate_text_simple", check)


@points(3)
def test_generate_leaves_idx_and_returns_a_new_tensor(student, seeds):
    """idx itself is left unchanged; max_new_tokens=0 gives the prompt back"""
    def check():
        cfg = CFGS[0]
        idx = token_ids(2, 3, cfg["vocab_size"], seeds("idx"))
        plan = run_case(student, cfg, idx, 2, 8, seeds("model"))
        if not torch.equal(plan.values["idx_after"], idx):
            raise AssertionError("generate_text_simple changed the caller's idx in place: build a new tensor "
                                 "(idx = torch.cat((idx, idx_next), dim=1))")
        plan = student.plan(generation(cfg, idx, 0, 8, seeds("model")), needs=GEN)
        if not torch.equal(plan.values["out"], idx):
            raise AssertionError("generate_text_simple(model, idx, max_new_tokens=0, ...) must return idx's tokens")
    judged(student, LOWER, "generate_text_simple", check)
