"""Chapter 5's helpers: the stand-in models the checks hand the student's functions, the grader's
own runs of the same functions, and the mistakes students make, written once with switches.

Every check runs the student's function on models of ``stand_ins.py`` (the engine's copy, in the
child as in the grader) with the grader's weights and data, never on the student's chapter-4 GPT:
a chapter-4 mistake costs nothing here. Each expected answer (a loss, the weights after training,
the tokens a seeded sampler draws, the parameters loaded) is computed here, with the reference's
functions or the switched models below; the child's answers are compared, never believed.
"""
import contextlib
import copy
import io
import math

import torch
import torch.nn.functional as F

from autograder.grading.compare import seeded, set_seed, value
from autograder.grading.kit import once
from autograder.sandbox.session import GraderError
from autograder.support.gpt2_offline import gpt2_offline
from autograder.support.stand_ins import (GPTParameters, TinyGPT, adamw, stand_in_loss_batch,
                                          stand_in_loss_loader)

TINY = "stand_ins.TinyGPT"
LAYOUT = "stand_ins.GPTParameters"


def gpt2():
    """tiktoken's GPT-2 encoding in the grader; a grader error where this machine lacks it."""
    try:
        return once(("ch05 gpt2",), gpt2_offline)
    except Exception as exc:
        raise GraderError(f"tiktoken's GPT-2 encoding is not installed on the grading machine ({type(exc).__name__}):"
                          " run the README's set-up command there (the grader never downloads it)") from None


def tokenizer_step(module, let="tk"):
    """The child's GPT-2 tokenizer, reached through the student's module's ``import tiktoken``."""
    return {"let": let, "call": f"{module}.tiktoken.get_encoding", "args": ["gpt2"],
            "what": f"tiktoken.get_encoding('gpt2') (through {module}.py's `import tiktoken`)"}


def ran(plan, step, what, mistakes_on_error=()):
    """Fail where the plan's ``step`` (one that sends nothing back) failed, naming a known mistake
    from its error as ``compare.value`` does."""
    if plan.failed(step) is not None:
        value(plan, step, what, mistakes_on_error)


def tiny_weights(cfg, seed):
    """The grader's weights for a TinyGPT of ``cfg``: values of order one, logits of a few units."""
    v, c, d = cfg["vocab_size"], cfg["context_length"], cfg["emb_dim"]
    return {"tok_emb.weight": seeded(v, d, seed=seed), "pos_emb.weight": seeded(c, d, seed=seed + 1) * 0.5,
            "out_head.weight": seeded(v, d, seed=seed + 2) / d**0.5 * 2}


def tiny(cfg, weights, train=False):
    """The grader's own TinyGPT with ``weights``."""
    model = TinyGPT(cfg)
    model.load_state_dict(weights)
    return model.train(train)


def tiny_step(let, cfg, weights, train=False):
    """A plan step building the same TinyGPT in the child."""
    return {"let": let, "call": TINY, "args": [cfg], "params": weights, "train": train,
            "what": f"the grader's stand-in GPT ({let})"}


def token_batches(n, batch_size, num_tokens, vocab_size, seed):
    """``n`` (input, target) pairs, each target the input shifted by one token, as chapter 2's loader makes them."""
    g = torch.Generator().manual_seed(seed)
    rows = torch.randint(0, vocab_size, (n, batch_size, num_tokens + 1), generator=g)
    return [(row[:, :-1].clone(), row[:, 1:].clone()) for row in rows]


def verdict_batches(n, batch_size, max_length):
    """The first ``n`` batches of The Verdict's training loader, unshuffled (chapter 2's windows,
    ``stride = max_length``)."""
    def make():
        from autograder.grading import course
        text = (course.get("ch05_pretraining").solutions / "the-verdict.txt").read_text(encoding="utf-8")
        ids = torch.tensor(gpt2().encode(text))
        windows = [(ids[i:i + max_length], ids[i + 1:i + max_length + 1])
                   for i in range(0, len(ids) - max_length, max_length)][:n * batch_size]
        return tuple((torch.stack([x for x, _ in windows[k:k + batch_size]]),
                      torch.stack([y for _, y in windows[k:k + batch_size]]))
                     for k in range(0, len(windows), batch_size))
    return [(x.clone(), y.clone()) for x, y in once(("ch05 verdict", n, batch_size, max_length), make)]


def as_loader(pairs):
    """The pairs as plan data: a list of [input, target] lists (what the child iterates)."""
    return [[x, y] for x, y in pairs]


def quietly(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with what it prints swallowed (the reference's training prints)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


# -- the loss of a batch, and its mistakes (charged in losses) ------------------------------------
def batch_loss(logits, targets, variant=None):
    flat, t = logits.flatten(0, 1), targets.flatten()
    if variant == "sum":
        return F.cross_entropy(flat, t, reduction="sum")
    if variant == "softmax":
        return F.cross_entropy(torch.softmax(flat, dim=-1), t)
    if variant == "nll":
        return F.nll_loss(flat, t)
    return F.cross_entropy(flat, t)


LOSS_MISTAKES = {
    "the sum over the tokens instead of the mean (cross_entropy's default reduction is the mean)": "sum",
    "softmax applied before cross_entropy (it takes the logits: it applies log-softmax itself)": "softmax",
    "nll_loss on the logits (no log-softmax: cross_entropy takes the logits)": "nll",
}


def loader_loss(per_batch, num_batches, variant=None):
    """calc_loss_loader's answer from the losses of the loader's batches, with a switched mistake."""
    n = len(per_batch)
    if n == 0:
        return math.nan
    k = n if num_batches is None else min(num_batches, n)
    if variant == "all":
        return sum(per_batch) / n
    if variant == "sum":
        return sum(per_batch[:k])
    if variant == "len":
        return sum(per_batch[:k]) / n
    if variant == "one short":
        return sum(per_batch[:k - 1]) / k
    if variant == "no break":
        return sum(per_batch) / k
    return sum(per_batch[:k]) / k


LOADER_MISTAKES = {
    "num_batches ignored: the mean over the whole loader": "all",
    "the sum of the batches' losses, not their mean": "sum",
    "divided by len(data_loader) instead of the number of batches used": "len",
    "one batch short (i < num_batches - 1)": "one short",
    "the loop does not stop after num_batches batches (break once i reaches num_batches)": "no break",
}


def per_batch_losses(model, pairs):
    """The book's loss of each batch, in order."""
    with torch.no_grad():
        return [batch_loss(model(x), y).item() for x, y in pairs]


# -- training, the book's way and with switched mistakes (charged in training) --------------------
# Training is judged with the grader's stand-ins for the pieces it calls (stand_ins.STAND_INS: the child's
# calc_loss_batch, calc_loss_loader, generate_text_simple, text_to_token_ids and token_ids_to_text
# replaced for the call), and its expected answer computed here with the same: a mistake in losses.py,
# generate.py or text_tokens.py, named or not, costs nothing here.
def train(model, train_pairs, val_pairs, *, lr, weight_decay, num_epochs, eval_freq, eval_iter, seed,
          zero_grad="before", restore_train=True, tokens="numel", first_step=0, eval_mode=True, inline=False):
    """Listing 5.3 in the grader on a private copy of ``model``, with the stand-in loss: (the three
    lists, the weights). Sampling prints nothing the grader reads and draws nothing at random
    (greedy, in eval mode). ``inline``: each step's loss is the book's cross-entropy, computed in
    train_model_simple itself instead of through calc_loss_batch (a correct style: the evaluations
    still go through evaluate_model's stand-in loss)."""
    model = copy.deepcopy(model)
    optimizer = adamw(model, lr=lr, weight_decay=weight_decay)
    set_seed(seed)
    lists, seen, step = ([], [], []), 0, first_step - 1
    for _ in range(num_epochs):
        model.train()
        for x, y in train_pairs:
            if zero_grad == "before":
                optimizer.zero_grad()
            with torch.enable_grad():
                (batch_loss(model(x), y) if inline else stand_in_loss_batch(x, y, model, "cpu")).backward()
            if zero_grad == "after backward":
                optimizer.zero_grad()
            optimizer.step()
            seen += {"numel": x.numel(), "batch": x.shape[0], "tokens": x.shape[1]}[tokens]
            step += 1
            if step % eval_freq == 0:
                model.eval() if eval_mode else None
                with torch.no_grad():
                    losses = [stand_in_loss_loader(pairs, model, "cpu", eval_iter) for pairs in (train_pairs, val_pairs)]
                if restore_train:
                    model.train()
                lists[0].append(losses[0])
                lists[1].append(losses[1])
                lists[2].append(seen)
    return lists, {k: v.detach() for k, v in model.named_parameters()}


TRAINING_MISTAKES = {
    "no optimizer.zero_grad(): gradients add up over the steps": dict(zero_grad="never"),
    "optimizer.zero_grad() between backward() and step(): no gradient reaches the step": dict(zero_grad="after backward"),
    "the model left in eval mode after evaluating (dropout off from then on: model.train() after evaluate_model)":
        dict(restore_train=False),
    "the losses evaluated in training mode (model.eval() before evaluating: no dropout)": dict(eval_mode=False),
}
TOKENS_MISTAKES = {
    "tokens seen counted as the batch size (input_batch.numel() counts every token)": dict(tokens="batch"),
    "tokens seen counted as the tokens of one row (input_batch.numel() counts every row's)": dict(tokens="tokens"),
    "steps numbered from 1 (the book's global_step starts at -1, so the first step is 0 and evaluated)":
        dict(first_step=1),
}


# -- sampling, the book's way and with switched mistakes (charged in decoding) ---------------------
def sample(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None, seed=None, *,
           crop=True, temperature_after=False, temperature_times=False, keep_equal=True, eos_kept=False):
    """Listing 5.4 in the grader on ``model`` (in the mode it is in), after ``set_seed(seed)``."""
    if seed is not None:
        set_seed(seed)
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:] if crop else idx)[:, -1, :]
        if top_k is not None:
            kth = torch.topk(logits, top_k).values[:, -1:]
            logits = logits.masked_fill(logits < kth if keep_equal else logits <= kth, float("-inf"))
        if temperature > 0.0:
            if temperature_after:
                probs = torch.softmax(logits, dim=-1) / temperature
            elif temperature_times:
                probs = torch.softmax(logits * temperature, dim=-1)
            else:
                probs = torch.softmax(logits / temperature, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1)
        else:
            nxt = torch.argmax(logits, dim=-1, keepdim=True)
        if eos_id is not None and nxt.numel() == 1 and nxt.item() == eos_id:
            return torch.cat((idx, nxt), dim=1) if eos_kept else idx
        idx = torch.cat((idx, nxt), dim=1)
    return idx


def sampling_mistakes(top_k, temperature, eos_id=None):
    found = {"no cropping to the last context_size tokens (idx[:, -context_size:])": dict(crop=False)}
    if eos_id is not None:
        found["eos_id appended before stopping (the book stops before appending it)"] = dict(eos_kept=True)
    if top_k is not None and top_k > 1:
        found["top-k keeps k - 1 tokens (masking logits <= the k-th largest drops it too: mask logits < top_logits[:, -1])"] = \
            dict(keep_equal=False)
    if temperature > 0:
        found["the temperature applied after the softmax (divide the logits by it, then softmax)"] = \
            dict(temperature_after=True)
        found["the logits multiplied by the temperature (divide them by it)"] = dict(temperature_times=True)
    return found


# -- OpenAI's GPT-2 layout (weights) ---------------------------------------------------------------
def gpt2_layout(cfg, seed):
    """Made-up GPT-2 parameters in OpenAI's layout for ``cfg`` (float32 tensors; the child turns each
    into a NumPy array), as a nested dict."""
    d, v, c = cfg["emb_dim"], cfg["vocab_size"], cfg["context_length"]
    count = iter(range(10_000))

    def w(*shape):
        return seeded(*shape, seed=seed + next(count))

    def block():
        return {"attn": {"c_attn": {"w": w(d, 3 * d), "b": w(3 * d)}, "c_proj": {"w": w(d, d), "b": w(d)}},
                "mlp": {"c_fc": {"w": w(d, 4 * d), "b": w(4 * d)}, "c_proj": {"w": w(4 * d, d), "b": w(d)}},
                "ln_1": {"g": w(d), "b": w(d)}, "ln_2": {"g": w(d), "b": w(d)}}
    return {"wte": w(v, d), "wpe": w(c, d), "g": w(d), "b": w(d), "blocks": [block() for _ in range(cfg["n_layers"])]}


def numpy_steps(module, params, prefix="np"):
    """Plan steps turning each tensor of ``params`` into a NumPy array in the child (through the
    student's module's ``import numpy as np``), and the nested dict of ``$ref``s to them."""
    steps = []

    def walk(value, path):
        if isinstance(value, dict):
            return {k: walk(v, f"{path}_{k}") for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, f"{path}_{i}") for i, v in enumerate(value)]
        steps.append({"let": path, "call": f"{module}.np.array", "args": [value],
                      "what": f"np.array (through {module}.py's `import numpy as np`)"})
        return {"$ref": path}
    return steps, walk(params, prefix)


def loaded(ref, cfg, params, seed):
    """{name: tensor} of the GPTParameters of ``cfg`` (built after ``seed``) once the reference's
    load_weights_into_gpt has loaded ``params`` (as NumPy arrays) into it; and the same module
    as built, before loading."""
    def compute():
        set_seed(seed)
        gpt = GPTParameters(cfg)
        before = {k: v.detach().clone() for k, v in gpt.named_parameters()}
        ref.checkpoints.load_weights_into_gpt(gpt, _as_numpy(params))
        return {k: v.detach().clone() for k, v in gpt.named_parameters()}, before
    return once(("ch05 loaded", ref.checkpoints.load_weights_into_gpt, repr(sorted(cfg.items())), seed,
                 params["wte"].numpy().tobytes()), compute)


def _qkv(found, fn):
    """``found`` with each block's W_query, W_key and W_value weights and biases remapped by ``fn``."""
    out = dict(found)
    for name in found:
        if ".att.W_query." in name:
            head, kind = name.split(".att.W_query.")
            q, k, v = (found[f"{head}.att.{layer}.{kind}"] for layer in ("W_query", "W_key", "W_value"))
            for layer, value in zip(("W_query", "W_key", "W_value"), fn(q, k, v, kind)):
                out[f"{head}.att.{layer}.{kind}"] = value
    return out


def _each(found, pick, fn):
    return {k: fn(k, v) if pick(k) else v for k, v in found.items()}


def load_mistakes(found, before):
    """{name: the parameters that mistake loads}, from the right ones ``found`` and the module as
    built, ``before`` (what a weight never assigned keeps)."""
    def norm_swapped(k, v):
        other = k[:-len("scale")] + "shift" if k.endswith(".scale") else k[:-len("shift")] + "scale"
        return found[other]
    return {
        "c_attn split in the wrong order (np.split gives query, key, value in that order)":
            lambda: _qkv(found, lambda q, k, v, kind: (k, q, v)),
        "c_attn's weight split in the wrong order (np.split gives query, key, value in that order)":
            lambda: _qkv(found, lambda q, k, v, kind: (k, q, v) if kind == "weight" else (q, k, v)),
        "c_attn split as value, key, query (np.split gives query, key, value in that order)":
            lambda: _qkv(found, lambda q, k, v, kind: (v, k, q)),
        "the query, key and value weights not transposed (OpenAI stores (in, out): assign w.T)":
            lambda: _qkv(found, lambda q, k, v, kind: (q.T, k.T, v.T) if kind == "weight" else (q, k, v)),
        "out_head not assigned (GPT-2 ties it to the token embeddings: out_head.weight takes wte)":
            lambda: {**found, "out_head.weight": before["out_head.weight"]},
        "the norms' scale and shift swapped (g is the scale, b the shift)":
            lambda: _each(found, lambda k: k.endswith((".scale", ".shift")), norm_swapped),
    }


def _as_numpy(value):
    if isinstance(value, dict):
        return {k: _as_numpy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_numpy(v) for v in value]
    return value.numpy().copy()
