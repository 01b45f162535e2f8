"""Hidden checks for section 5.3: temperature scaling, top-k sampling, generate (25 points).

generate runs the grader's stand-in GPT (stand_ins.TinyGPT: its answer at a position depends on the
tokens before it and on the position, so a missing crop shows) in eval mode; every token it should
give, greedy or drawn after the grader's seed, is computed here by the reference's way of sampling
(``_pretraining.sample``), and each known mistake's tokens likewise, to name it."""
import pytest
import torch

from _pretraining import sample, sampling_mistakes, tiny, tiny_step, tiny_weights
from autograder.grading.compare import expect_close, seeded, set_seed, value, yours_vs_expected
from autograder.grading.kit import known_mistake
from autograder.grading.result import failure

points = pytest.mark.points
# a context length beyond every prompt and its new tokens: a generation that does not crop still runs
CFG = {"vocab_size": 23, "context_length": 16, "emb_dim": 8, "drop_rate": 0.0}
BOOK_LOGITS = torch.tensor([4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79])


@points(4)
def test_softmax_with_temperature(student, seeds):
    """softmax_with_temperature: softmax(logits / temperature) over the last dimension"""
    cases = [(BOOK_LOGITS, 1.0), (BOOK_LOGITS, 0.1), (BOOK_LOGITS, 5.0), (seeded(3, 7, seed=seeds("x"), scale=3.0), 0.7)]
    plan = student.plan([{"let": f"s{i}", "call": "decoding.softmax_with_temperature", "args": [x, t], "return": True}
                         for i, (x, t) in enumerate(cases)], needs="decoding.softmax_with_temperature")
    for i, (x, t) in enumerate(cases):
        what = f"softmax_with_temperature(logits of shape {tuple(x.shape)}, {t})"
        expect_close(value(plan, f"s{i}", what), torch.softmax(x / t, dim=-1), what, {
            "the logits multiplied by the temperature (divide them by it)": torch.softmax(x * t, dim=-1),
            "the temperature applied after the softmax (divide the logits by it, then softmax)":
                torch.softmax(x, dim=-1) / t,
            "softmax over the first dimension (dim=0; use dim=-1 for a batch of logits)": torch.softmax(x / t, dim=0)})


def _drawn(probas, one_call=False):
    set_seed(123)
    if one_call:
        sample_ = torch.multinomial(probas, num_samples=1_000, replacement=True).tolist()
    else:
        sample_ = [torch.multinomial(probas, num_samples=1).item() for _ in range(1_000)]
    return torch.bincount(torch.tensor(sample_), minlength=len(probas))


@points(4)
def test_print_sampled_tokens(student, seeds):
    """print_sampled_tokens: the counts of 1,000 draws after torch.manual_seed(123), one token a draw, zeros included"""
    cases = [torch.softmax(BOOK_LOGITS / t, dim=0) for t in (1.0, 0.1, 5.0)]
    cases.append(torch.softmax(seeded(12, seed=seeds("x"), scale=2.0), dim=0))
    vocab = ["closer", "every", "effort", "forward", "inches", "moves", "pizza", "toward", "you"]
    plan = student.plan([{"let": f"c{i}", "call": "decoding.print_sampled_tokens",
                          "args": [p, vocab if len(p) == len(vocab) else None], "return": True}
                         for i, p in enumerate(cases)], needs="decoding.print_sampled_tokens")
    for i, p in enumerate(cases):
        what = f"print_sampled_tokens(probas of {len(p)} tokens)"
        got, want = value(plan, f"c{i}", what), _drawn(p)
        if isinstance(got, torch.Tensor) and got.dim() == 1 and len(got) < len(p) and \
                torch.equal(got, want[:len(got)]) and not want[len(got):].any():
            raise AssertionError(f"{what}: " + yours_vs_expected(yours=len(got), yours_are="counts for", expected=(
                f"{len(p)} (one per token, zeros included: torch.bincount(..., minlength=len(probas)))")))
        expect_close(got, want, what, {
            "the 1,000 tokens drawn in one call (multinomial(probas, 1_000, replacement=True)): the book draws them "
            "one at a time, each with num_samples=1": lambda: _drawn(p, one_call=True)})


def student_steps(cfg, weights, idx, max_new_tokens, context_size, seed, kwargs):
    return [tiny_step("m", cfg, weights, train=False),
            {"let": "idx", "data": idx},
            {"let": "out", "call": "decoding.generate",
             "args": [{"$ref": "m"}, {"$ref": "idx"}, max_new_tokens, context_size], "kwargs": kwargs, "seed": seed,
             "return": True},
            {"let": "idx_after", "attr": "idx", "return": True, "changed_from": "idx"}]


def check_generation(student, seeds, name, idx, max_new_tokens, context_size, **kwargs):
    weights = tiny_weights(CFG, seeds(f"{name}model"))
    seed = seeds(f"{name}seed")
    plan = student.plan(student_steps(CFG, weights, idx, max_new_tokens, context_size, seed, kwargs),
                        needs="decoding.generate")
    model = tiny(CFG, weights)
    shown = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    what = (f"generate(model, idx of shape {tuple(idx.shape)}, max_new_tokens={max_new_tokens}, "
            f"context_size={context_size}{', ' + shown if shown else ''}) after torch.manual_seed(...)")
    got = value(plan, "out", what)
    want = sample(model, idx, max_new_tokens, context_size, seed=seed, **kwargs)
    if not (isinstance(got, torch.Tensor) and got.shape == want.shape and torch.equal(got, want)):
        mistakes = {n: (lambda s=s: sample(model, idx, max_new_tokens, context_size, seed=seed, **kwargs, **s))
                    for n, s in sampling_mistakes(kwargs.get("top_k"), kwargs.get("temperature", 0.0),
                                                      kwargs.get("eos_id")).items()}
        if isinstance(got, torch.Tensor) and got.shape == want.shape[:1] + (want.shape[1] - idx.shape[1],) and \
                torch.equal(got, want[:, idx.shape[1]:]):
            raise AssertionError(f"{what}: returned only the new tokens; the book returns idx followed by them")
        name_ = known_mistake(got, mistakes, lambda a, v: 0 if isinstance(a, torch.Tensor) and a.shape == v.shape
                              and torch.equal(a, v) else None)
        shown_got = got.tolist() if isinstance(got, torch.Tensor) and got.numel() <= 40 else getattr(got, "shape", got)
        raise failure(f"{what}: " + yours_vs_expected(yours=shown_got, yours_are="returned",
                                                      expected=want.tolist()) + ".", name_)
    if not torch.equal(value(plan, "idx_after", "idx after generate"), idx):
        raise AssertionError(f"{what} changed the caller's idx in place: build a new tensor (torch.cat)")
    return plan


def ids(b, n, seed):
    return torch.randint(0, CFG["vocab_size"], (b, n), generator=torch.Generator().manual_seed(seed))


@points(4)
def test_generate_greedy(student, seeds):
    """temperature 0: the argmax at the last position each step, from the last context_size tokens"""
    check_generation(student, seeds, "a", ids(2, 3, seeds("a")), 4, 5)
    check_generation(student, seeds, "b", ids(1, 7, seeds("b")), 3, 4)   # a long prompt: cropped from the first step


@points(4)
def test_generate_with_temperature(student, seeds):
    """temperature > 0: one token drawn with torch.multinomial from softmax(logits / temperature) each step"""
    check_generation(student, seeds, "a", ids(1, 2, seeds("a")), 6, 5, temperature=1.5)
    check_generation(student, seeds, "b", ids(3, 4, seeds("b")), 3, 3, temperature=0.7)


@points(5)
def test_generate_with_top_k(student, seeds):
    """top_k (a batch of one, as the book uses it): logits below the k-th largest become -inf before sampling (or the argmax)"""
    check_generation(student, seeds, "a", ids(1, 2, seeds("a")), 8, 5, temperature=1.4, top_k=3)
    check_generation(student, seeds, "b", ids(1, 3, seeds("b")), 6, 4, temperature=2.0, top_k=4)
    check_generation(student, seeds, "c", ids(1, 2, seeds("c")), 3, 5, temperature=0.0, top_k=4)


@points(4)
def test_generate_stops_at_eos(student, seeds):
    """eos_id: generation stops, without appending it, when the next token is eos_id; it goes on where it never comes"""
    pick = torch.Generator().manual_seed(seeds("eos"))
    for name, prompt, temperature, eos in (("a", 2, 1.2, "drawn"), ("b", 3, 0.0, "drawn"), ("c", 2, 1.5, "never")):
        idx, new = ids(1, prompt, seeds(name)), 8
        model = tiny(CFG, tiny_weights(CFG, seeds(f"{name}model")))
        free = sample(model, idx, new, 5, temperature=temperature, seed=seeds(f"{name}seed"))[0, prompt:].tolist()
        # eos at a new position drawn from the check's seed, or a token of the vocabulary it never gives
        choices = free[1:] if eos == "drawn" else [t for t in range(CFG["vocab_size"]) if t not in free]
        eos_id = choices[int(torch.randint(len(choices), (1,), generator=pick))]
        check_generation(student, seeds, name, idx, new, 5, temperature=temperature, eos_id=eos_id)
