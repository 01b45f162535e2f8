'''A bank of correct chapter-5 submissions written in other students' styles.

Each module's "plain" variant is the reference itself; every alternative swaps in the styles it is
about: the loss by ``view``/``reshape`` and ``F.cross_entropy``, a loader mean over a sliced
``itertools.islice``; a training loop that counts tokens by ``shape`` and evaluates by a counter
of its own; top-k by sorting and ``masked_fill``, the temperature by ``softmax_with_temperature``;
the GPT-2 split by slicing and ``torch.from_numpy``. Each takes the book's steps in the book's
order, so each must score full marks (``tests/test_alternatives.py`` grades them).
'''
import ast
from functools import partial
from pathlib import Path

import banks

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions" / "ch05_pretraining"


def plain(module):
    """The reference's code as a student who writes no docstrings has it."""
    tree = ast.parse((SOLUTIONS / f"{module}.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str) and len(body) > 1:
            del body[0]
    return ast.unparse(tree) + "\n"


LOSSES = {"plain": plain("losses"), "reshape": '''import itertools

import torch
import torch.nn.functional as F


def calc_loss_batch(input_batch, target_batch, model, device):
    logits = model(input_batch.to(device))
    vocab = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, vocab), target_batch.to(device).view(-1))


def calc_loss_loader(data_loader, model, device, num_batches=None):
    if len(data_loader) == 0:
        return float("nan")
    n = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    losses = [calc_loss_batch(x, y, model, device).item() for x, y in itertools.islice(data_loader, n)]
    return sum(losses) / n


def perplexity(loss):
    return loss.exp()
'''}

TRAINING = {"plain": plain("training"), "counter": '''import torch

from generate import generate_text_simple
from losses import calc_loss_batch, calc_loss_loader
from text_tokens import text_to_token_ids, token_ids_to_text


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    try:
        with torch.no_grad():
            return (calc_loss_loader(train_loader, model, device, eval_iter),
                    calc_loss_loader(val_loader, model, device, eval_iter))
    finally:
        model.train()


@torch.no_grad()
def _sample(model, tokenizer, device, start_context):
    ids = generate_text_simple(model, text_to_token_ids(start_context, tokenizer).to(device), 50,
                               model.pos_emb.weight.size(0))
    return token_ids_to_text(ids, tokenizer)


def generate_and_print_sample(model, tokenizer, device, start_context):
    model.eval()
    text = _sample(model, tokenizer, device, start_context)
    model.train()
    print(" ".join(text.split("\\n")))


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq, eval_iter, start_context, tokenizer):
    history = {"train": [], "val": [], "tokens": []}
    seen = steps = 0
    for epoch in range(1, num_epochs + 1):
        model.train()
        for inputs, targets in train_loader:
            optimizer.zero_grad(set_to_none=False)
            calc_loss_batch(inputs, targets, model, device).backward()
            optimizer.step()
            seen += inputs.shape[0] * inputs.shape[1]
            if steps % eval_freq == 0:
                tr, va = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                history["train"].append(tr)
                history["val"].append(va)
                history["tokens"].append(seen)
            steps += 1
        generate_and_print_sample(model, tokenizer, device, start_context)
    return history["train"], history["val"], history["tokens"]
'''}

DECODING = {"plain": plain("decoding"), "sorted": '''import torch


def softmax_with_temperature(logits, temperature):
    scaled = logits / temperature
    return torch.exp(scaled - scaled.max(dim=-1, keepdim=True).values) / \\
        torch.exp(scaled - scaled.max(dim=-1, keepdim=True).values).sum(dim=-1, keepdim=True)


def print_sampled_tokens(probas, inverse_vocab=None):
    torch.manual_seed(123)
    counts = torch.zeros(len(probas), dtype=torch.int64)
    for _ in range(1000):
        counts[torch.multinomial(probas, num_samples=1)] += 1
    for i in range(len(probas)):
        print(f"{int(counts[i])} x {i if inverse_vocab is None else inverse_vocab[i]}")
    return counts


@torch.no_grad()
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    out = idx.clone()
    for _ in range(max_new_tokens):
        logits = model(out[:, -context_size:])[:, -1, :]
        if top_k:
            kth = logits.sort(dim=-1, descending=True).values[:, top_k - 1].unsqueeze(-1)
            logits = logits.masked_fill(logits < kth, -torch.inf)
        if temperature > 0:
            nxt = torch.multinomial(softmax_with_temperature(logits, temperature), 1)
        else:
            nxt = logits.argmax(dim=-1, keepdim=True)
        if nxt.numel() == 1 and eos_id is not None and int(nxt) == eos_id:
            break
        out = torch.cat([out, nxt], dim=-1)
    return out
'''}

WEIGHTS = {"plain": plain("checkpoints"), "sliced": '''import numpy as np
import torch


def save_model_and_optimizer(model, optimizer, path):
    state = {"model_state_dict": model.state_dict()}
    state["optimizer_state_dict"] = optimizer.state_dict()
    torch.save(state, path)


def load_model_and_optimizer(model, optimizer, path, device="cpu"):
    state = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(state["model_state_dict"])
    optimizer.load_state_dict(state["optimizer_state_dict"])
    model.train()


def assign(left, right):
    if left.shape != right.shape:
        raise ValueError(f"Shape mismatch. Left: {left.shape}, Right: {right.shape}")
    return torch.nn.Parameter(torch.tensor(right))


def load_weights_into_gpt(gpt, params):
    gpt.pos_emb.weight = assign(gpt.pos_emb.weight, params["wpe"])
    gpt.tok_emb.weight = assign(gpt.tok_emb.weight, params["wte"])
    d = params["wte"].shape[1]
    for b in range(len(params["blocks"])):
        blk, p = gpt.trf_blocks[b], params["blocks"][b]
        w, bias = np.ascontiguousarray(p["attn"]["c_attn"]["w"]), p["attn"]["c_attn"]["b"]
        for i, name in enumerate(["W_query", "W_key", "W_value"]):
            layer = getattr(blk.att, name)
            layer.weight = assign(layer.weight, np.ascontiguousarray(w[:, i * d:(i + 1) * d].T))
            layer.bias = assign(layer.bias, bias[i * d:(i + 1) * d])
        blk.att.out_proj.weight = assign(blk.att.out_proj.weight, np.ascontiguousarray(p["attn"]["c_proj"]["w"].T))
        blk.att.out_proj.bias = assign(blk.att.out_proj.bias, p["attn"]["c_proj"]["b"])
        blk.ff.layers[0].weight = assign(blk.ff.layers[0].weight, np.ascontiguousarray(p["mlp"]["c_fc"]["w"].T))
        blk.ff.layers[0].bias = assign(blk.ff.layers[0].bias, p["mlp"]["c_fc"]["b"])
        blk.ff.layers[2].weight = assign(blk.ff.layers[2].weight, np.ascontiguousarray(p["mlp"]["c_proj"]["w"].T))
        blk.ff.layers[2].bias = assign(blk.ff.layers[2].bias, p["mlp"]["c_proj"]["b"])
        blk.norm1.scale = assign(blk.norm1.scale, p["ln_1"]["g"])
        blk.norm1.shift = assign(blk.norm1.shift, p["ln_1"]["b"])
        blk.norm2.scale = assign(blk.norm2.scale, p["ln_2"]["g"])
        blk.norm2.shift = assign(blk.norm2.shift, p["ln_2"]["b"])
    gpt.final_norm.scale = assign(gpt.final_norm.scale, params["g"])
    gpt.final_norm.shift = assign(gpt.final_norm.shift, params["b"])
    gpt.out_head.weight = assign(gpt.out_head.weight, params["wte"])
'''}

TEXT_TOKENS = {"plain": plain("text_tokens"), "torch_ids": '''import tiktoken
import torch


def text_to_token_ids(text, tokenizer):
    return torch.as_tensor([tokenizer.encode(text, allowed_special={"<|endoftext|>"})], dtype=torch.long)


def token_ids_to_text(token_ids, tokenizer):
    return tokenizer.decode(token_ids.reshape(-1).tolist())
'''}

VARIANTS = {"text_tokens": TEXT_TOKENS, "losses": LOSSES, "training": TRAINING,
            "decoding": DECODING, "checkpoints": WEIGHTS}

Alternative = partial(banks.Alternative, VARIANTS)

ALTERNATIVES = [
    Alternative("ids built as a batch of one directly, decoded by reshape(-1)", {"text_tokens": "torch_ids"}),
    Alternative("the loss by reshape/view, the loader's mean over islice, perplexity by .exp()", {"losses": "reshape"}),
    Alternative("training with its own step counter, tokens by shape, evaluation in try/finally",
                {"training": "counter"}),
    Alternative("top-k by sorting and masked_fill, a softmax by hand, counts by indexing, @torch.no_grad()",
                {"decoding": "sorted"}),
    Alternative("GPT-2's c_attn split by slicing, the book's assign with torch.tensor, weights_only load",
                {"checkpoints": "sliced"}),
    Alternative("all of them, saved on Windows (byte-order mark, CRLF)",
                {"text_tokens": "torch_ids", "losses": "reshape", "training": "counter", "decoding": "sorted",
                 "checkpoints": "sliced"},
                newline="\r\n", encoding="utf-8-sig"),
]
