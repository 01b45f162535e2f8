'''A bank of correct chapter-5 submissions written in other students' styles.

Each module's "plain" variant is the reference itself; every alternative swaps in the styles it is
about: the loss by ``view``/``reshape`` and ``F.cross_entropy``, a loader mean over a sliced
``itertools.islice``; a training loop that counts tokens by ``shape`` and evaluates by a counter
of its own; top-k by sorting and ``masked_fill``, the temperature by ``softmax_with_temperature``;
the GPT-2 split by slicing and ``torch.from_numpy``. Each takes the book's steps in the book's
order, so each must score full marks (``tests/test_alternatives.py`` grades them).
'''
from functools import partial

import banks

plain = partial(banks.plain, "ch05_pretraining")   # the reference without docstrings

LOSSES = {"plain": plain("losses"), "log_softmax": '''import math

import torch


def calc_loss_batch(input_batch, target_batch, model, device):
    log_probas = torch.log_softmax(model(input_batch.to(device)), dim=-1)
    picked = log_probas.gather(-1, target_batch.to(device).unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def calc_loss_loader(data_loader, model, device, num_batches=None):
    if not len(data_loader):
        return math.nan
    limit = len(data_loader) if num_batches is None else min(len(data_loader), num_batches)
    total, count = torch.tensor(0.0), 0
    for input_batch, target_batch in data_loader:
        if count == limit:
            break
        total = total + calc_loss_batch(input_batch, target_batch, model, device).detach()
        count += 1
    return (total / limit).item()


def perplexity(loss):
    return torch.e ** loss
''', "reshape": '''import itertools

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

TRAINING = {"plain": plain("training"), "iterator": '''import torch

import generate
import losses
import text_tokens


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        result = [losses.calc_loss_loader(loader, model, device, num_batches=eval_iter)
                  for loader in (train_loader, val_loader)]
    model.train(was_training or True)
    return tuple(result)


def generate_and_print_sample(model, tokenizer, device, start_context):
    model.eval()
    idx = text_tokens.text_to_token_ids(start_context, tokenizer).to(device)
    with torch.no_grad():
        idx = generate.generate_text_simple(model, idx, 50, model.pos_emb.num_embeddings)
    print(text_tokens.token_ids_to_text(idx, tokenizer).replace("\\n", " "))
    model.train()


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq, eval_iter, start_context, tokenizer):
    train_losses, val_losses, track_tokens_seen = [], [], []
    tokens_seen, global_step = 0, 0
    for epoch in range(num_epochs):
        model.train()
        batches = iter(train_loader)
        while True:
            try:
                input_batch, target_batch = next(batches)
            except StopIteration:
                break
            loss = losses.calc_loss_batch(input_batch, target_batch, model, device)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            tokens_seen += input_batch.size(0) * input_batch.size(1)
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                train_losses += [train_loss]
                val_losses += [val_loss]
                track_tokens_seen += [tokens_seen]
            global_step += 1
        generate_and_print_sample(model, tokenizer, device, start_context)
    return train_losses, val_losses, track_tokens_seen
''', "counter": '''import torch

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
''', "inline_loss": '''import torch
import torch.nn.functional as F

from generate import generate_text_simple
from losses import calc_loss_loader
from text_tokens import text_to_token_ids, token_ids_to_text


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    with torch.no_grad():
        pair = [calc_loss_loader(loader, model, device, eval_iter) for loader in (train_loader, val_loader)]
    model.train()
    return pair[0], pair[1]


def generate_and_print_sample(model, tokenizer, device, start_context):
    model.eval()
    context_size = model.pos_emb.weight.shape[0]
    ids = text_to_token_ids(start_context, tokenizer).to(device)
    with torch.no_grad():
        ids = generate_text_simple(model=model, idx=ids, max_new_tokens=50, context_size=context_size)
    decoded = token_ids_to_text(ids, tokenizer)
    print(decoded.replace("\\n", " "))
    model.train()


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq, eval_iter, start_context, tokenizer):
    # the batch's loss written out here rather than through calc_loss_batch
    history, seen, step = ([], [], []), 0, 0
    for _ in range(num_epochs):
        model.train()
        for inputs, targets in train_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            logits = model(inputs)
            F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1)).backward()
            optimizer.step()
            seen += inputs.numel()
            if step % eval_freq == 0:
                noted = (*evaluate_model(model, train_loader, val_loader, device, eval_iter), seen)
                for record, value in zip(history, noted):
                    record.append(value)
            step += 1
        generate_and_print_sample(model, tokenizer, device, start_context)
    return history
'''}

DECODING = {"plain": plain("decoding"), "where": '''import torch
import torch.nn.functional as F


def softmax_with_temperature(logits, temperature):
    return F.softmax(logits.div(temperature), dim=-1)


def print_sampled_tokens(probas, inverse_vocab=None):
    torch.manual_seed(123)
    drawn = torch.cat([torch.multinomial(probas, 1) for _ in range(1_000)])
    counts = drawn.bincount(minlength=probas.numel())
    names = inverse_vocab or [str(i) for i in range(probas.numel())]
    for name, count in zip(names, counts.tolist()):
        print(count, "x", name)
    return counts


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for step in range(max_new_tokens):
        with torch.no_grad():
            last = model(idx[:, -context_size:])[:, -1]
        if top_k is not None:
            values, _ = last.topk(top_k, dim=-1)
            last = torch.where(last < values[:, [-1]], float("-inf"), last)
        if temperature > 0.0:
            choice = torch.multinomial(F.softmax(last / temperature, dim=-1), num_samples=1)
        else:
            choice = last.argmax(-1, keepdim=True)
        if eos_id is not None and choice.numel() == 1 and choice.item() == eos_id:
            return idx
        idx = torch.cat([idx, choice], 1)
    return idx
''', "sorted": '''import torch


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

WEIGHTS = {"plain": plain("checkpoints"), "from_numpy": '''import numpy as np
import torch


def save_model_and_optimizer(model, optimizer, path):
    torch.save(dict(model_state_dict=model.state_dict(), optimizer_state_dict=optimizer.state_dict()), path)


def load_model_and_optimizer(model, optimizer, path, device="cpu"):
    checkpoint = torch.load(path, map_location=torch.device(device))
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    model.train()


def assign(left, right):
    right = np.ascontiguousarray(right)
    if left.shape != right.shape:
        raise ValueError(f"Shape mismatch. Left: {left.shape}, Right: {right.shape}")
    return torch.nn.Parameter(torch.from_numpy(right.copy()))


def _linear(layer, weights):
    layer.weight = assign(layer.weight, weights["w"].T)
    layer.bias = assign(layer.bias, weights["b"])


def _norm(norm, weights):
    norm.scale = assign(norm.scale, weights["g"])
    norm.shift = assign(norm.shift, weights["b"])


def load_weights_into_gpt(gpt, params):
    gpt.pos_emb.weight = assign(gpt.pos_emb.weight, params["wpe"])
    gpt.tok_emb.weight = assign(gpt.tok_emb.weight, params["wte"])
    for block, p in zip(gpt.trf_blocks, params["blocks"]):
        ws = np.split(p["attn"]["c_attn"]["w"], 3, axis=-1)
        bs = np.split(p["attn"]["c_attn"]["b"], 3, axis=-1)
        for layer, w, b in zip((block.att.W_query, block.att.W_key, block.att.W_value), ws, bs):
            _linear(layer, {"w": w, "b": b})
        _linear(block.att.out_proj, p["attn"]["c_proj"])
        _linear(block.ff.layers[0], p["mlp"]["c_fc"])
        _linear(block.ff.layers[2], p["mlp"]["c_proj"])
        _norm(block.norm1, p["ln_1"])
        _norm(block.norm2, p["ln_2"])
    _norm(gpt.final_norm, {"g": params["g"], "b": params["b"]})
    gpt.out_head.weight = assign(gpt.out_head.weight, params["wte"])
''', "sliced": '''import numpy as np
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
    Alternative("plain student: the book's code without docstrings"),
    Alternative("ids built as a batch of one directly, decoded by reshape(-1)", {"text_tokens": "torch_ids"}),
    Alternative("the loss by reshape/view, the loader's mean over islice, perplexity by .exp()", {"losses": "reshape"}),
    Alternative("the loss by log_softmax and gather, a tensor total, perplexity as e ** loss",
                {"losses": "log_softmax"}),
    Alternative("training with its own step counter, tokens by shape, evaluation in try/finally",
                {"training": "counter"}),
    Alternative("training by an iterator and next(), the loss before zero_grad, modules imported whole",
                {"training": "iterator"}),
    Alternative("training that writes each batch's cross-entropy out instead of calling calc_loss_batch",
                {"training": "inline_loss"}),
    Alternative("top-k by sorting and masked_fill, a softmax by hand, counts by indexing, @torch.no_grad()",
                {"decoding": "sorted"}),
    Alternative("top-k by torch.where with a float, F.softmax, draws concatenated", {"decoding": "where"}),
    Alternative("GPT-2's c_attn split by slicing, the book's assign with torch.tensor, weights_only load",
                {"checkpoints": "sliced"}),
    Alternative("helpers per layer, torch.from_numpy, zip over the blocks", {"checkpoints": "from_numpy"}),
    Alternative("mixed: log_softmax loss, iterator training, torch.where top-k, from_numpy weights",
                {"losses": "log_softmax", "training": "iterator", "decoding": "where", "checkpoints": "from_numpy"}),
    Alternative("mixed: reshape loss, counter training, sorted top-k, sliced weights",
                {"text_tokens": "torch_ids", "losses": "reshape", "training": "counter", "decoding": "sorted",
                 "checkpoints": "sliced"}),
    Alternative("all of them, saved on Windows (byte-order mark, CRLF)",
                {"text_tokens": "torch_ids", "losses": "reshape", "training": "counter", "decoding": "sorted",
                 "checkpoints": "sliced"}, newline="\r\n", encoding="utf-8-sig"),
    Alternative("indented with tabs, old Mac CR line endings", {"losses": "log_softmax", "decoding": "where"},
                newline="\r", tabs=True),
    Alternative("a latin-1 coding line and accents in the comments", {"training": "iterator",
                                                                     "checkpoints": "from_numpy"},
                coding_line="# -*- coding: latin-1 -*-", encoding="latin-1"),
]
