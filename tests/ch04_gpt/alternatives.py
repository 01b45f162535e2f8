'''A bank of correct chapter-4 submissions written in other students' styles.

Every alternative is a whole submission (the seven chapter-4 modules; chapter 3's reference
attention comes beside them), written from the stubs' docstrings the way different students
would: the variance by hand, ``torch.var_mean`` or ``F.layer_norm``; GELU by ``math``
constants, as a subclass of ``nn.GELU(approximate="tanh")`` or by ``F.gelu``; blocks built by
a loop, a generator or the book's comprehension; the shortcut dropout named ``drop_resid``
(the companion package's name), two dropout modules or ``F.dropout``; position embeddings
sliced from the table; generation by ``torch.topk``, softmax then ``max``, or into a
preallocated tensor; parameter counts on the meta device; exercise 4.3 as subclasses; files
saved on Windows or indented with tabs. Each is correct per the book (the same outputs, the
same parameters drawn in the same order, dropout drawing what ``nn.Dropout`` draws), so each
must score full marks; ``tests/test_alternatives.py`` grades them.

Module variants are written once below (style -> source) and combined into ``ALTERNATIVES``:
the "plain" variant of each module is a straightforward student's own code, and every other
alternative swaps in the styles it is about, so a failure points at the style that caused it.
'''
from functools import partial

import banks


# ------------------------------------------------------------------ 4.2 layer normalization
LAYER_NORM = {
    "plain": '''import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))
        self.eps = 1e-5

    def forward(self, x):
        centered = x - x.mean(-1, keepdim=True)
        variance = (centered ** 2).mean(-1, keepdim=True)  # the mean of squares: divide by n
        return centered / (variance + self.eps).sqrt() * self.scale + self.shift
''',
    "var_mean": '''import torch
import torch.nn as nn

EPS = 1e-5


class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super(LayerNorm, self).__init__()
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        return self.scale * ((x - mean) * torch.rsqrt(var + EPS)) + self.shift
''',
    "functional": '''import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.emb_dim = emb_dim
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        return F.layer_norm(x, (self.emb_dim,), self.scale, self.shift, eps=1e-5)
''',
}

# ------------------------------------------------------------------ 4.3 GELU, feed forward
FEED_FORWARD = {
    "plain": '''import math

import torch
import torch.nn as nn


class GELU(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + torch.tanh(inner))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.layers = nn.Sequential(nn.Linear(d, 4 * d), GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        out = self.layers(x)
        return out
''',
    "torch_gelu": '''import torch.nn as nn


class GELU(nn.GELU):
    """The book's GELU is PyTorch's with the tanh approximation."""

    def __init__(self):
        super().__init__(approximate="tanh")


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        hidden = cfg["emb_dim"] * 4
        self.layers = nn.Sequential()
        self.layers.append(nn.Linear(cfg["emb_dim"], hidden))
        self.layers.append(GELU())
        self.layers.append(nn.Linear(hidden, cfg["emb_dim"]))

    def forward(self, x):
        return self.layers.forward(x)
''',
    "functional": '''import torch.nn as nn
import torch.nn.functional as F


class GELU(nn.Module):
    def forward(self, x):
        return F.gelu(x, approximate="tanh")


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        emb_dim = cfg["emb_dim"]
        expand = nn.Linear(emb_dim, 4 * emb_dim)
        project = nn.Linear(4 * emb_dim, emb_dim)
        self.layers = nn.Sequential(expand, GELU(), project)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
''',
}

# ------------------------------------------------------------------ 4.4 shortcut connections
SHORTCUTS = {
    "plain": '''import torch
import torch.nn as nn
import torch.nn.functional as F

from feed_forward import GELU


class ExampleDeepNeuralNetwork(nn.Module):
    def __init__(self, layer_sizes, use_shortcut):
        super().__init__()
        self.use_shortcut = use_shortcut
        layers = []
        for n_in, n_out in zip(layer_sizes[:-1], layer_sizes[1:]):
            layers.append(nn.Sequential(nn.Linear(n_in, n_out), GELU()))
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        for layer in self.layers:
            y = layer(x)
            x = x + y if self.use_shortcut and y.shape == x.shape else y
        return x


def print_gradients(model, x):
    output = model(x)
    loss = F.mse_loss(output, torch.zeros_like(output))
    loss.backward()
    result = {}
    for name, param in model.named_parameters():
        if name.endswith("weight"):
            result[name] = float(param.grad.abs().mean())
            print(f"{name} has gradient mean of {result[name]}")
    return result
''',
    "indexed": '''import torch
from torch import nn

import feed_forward


class ExampleDeepNeuralNetwork(nn.Module):
    def __init__(self, layer_sizes, use_shortcut):
        super().__init__()
        self.use_shortcut = use_shortcut
        self.layers = nn.ModuleList()
        for i in range(len(layer_sizes) - 1):
            self.layers.append(nn.Sequential(nn.Linear(layer_sizes[i], layer_sizes[i + 1]), feed_forward.GELU()))

    def forward(self, x):
        for i in range(len(self.layers)):
            out = self.layers[i](x)
            if self.use_shortcut and out.size() == x.size():
                out = out + x
            x = out
        return x


def print_gradients(model, x):
    out = model(x)
    loss = ((out - 0.0) ** 2).mean()
    loss.backward()
    means = dict()
    for name, param in model.named_parameters():
        if "weight" not in name:
            continue
        means[name] = torch.mean(torch.abs(param.grad)).item()
        print(name, "has gradient mean of", means[name])
    return means
''',
}

# ------------------------------------------------------------------ 4.5 the transformer block
TRANSFORMER_BLOCK = {
    "plain": '''import torch.nn as nn

from feed_forward import FeedForward
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                                      cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        x = x + self.drop_shortcut(self.ff(self.norm2(x)))
        return x
''',
    "drop_resid": '''from torch import nn

from feed_forward import FeedForward
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        emb = cfg["emb_dim"]
        self.att = MultiHeadAttention(d_in=emb, d_out=emb, context_length=cfg["context_length"],
                                      num_heads=cfg["n_heads"], dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1, self.norm2 = LayerNorm(emb), LayerNorm(emb)
        self.drop_resid = nn.Dropout(p=cfg["drop_rate"])

    def forward(self, x):
        h = self.norm1(x)
        h = self.att(h)
        h = self.drop_resid(h)
        x = h + x
        h = self.norm2(x)
        h = self.ff(h)
        h = self.drop_resid(h)
        return h + x
''',
    "two_dropouts": '''import torch.nn as nn

from feed_forward import FeedForward
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                                      cfg["n_heads"], cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        # one dropout per branch, at the same rate: the same draws in the same order
        self.drop_att = nn.Dropout(cfg["drop_rate"])
        self.drop_ff = nn.Dropout(cfg["drop_rate"])

    def attention_branch(self, x):
        return self.drop_att(self.att(self.norm1(x)))

    def forward(self, x):
        x = x + self.attention_branch(x)
        return x + self.drop_ff(self.ff(self.norm2(x)))
''',
    "functional_dropout": '''import torch.nn as nn
import torch.nn.functional as F

from feed_forward import FeedForward
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate"],
                                      cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.p = cfg["drop_rate"]

    def forward(self, x):
        x = x + F.dropout(self.att(self.norm1(x)), self.p, training=self.training)
        return x + F.dropout(self.ff(self.norm2(x)), self.p, self.training)
''',
}

# ------------------------------------------------------------------ 4.6 the GPT model
GPT_MODEL = {
    "plain": '''import torch
import torch.nn as nn

from layer_norm import LayerNorm
from transformer_block import TransformerBlock

GPT_CONFIG_124M = dict(vocab_size=50257, context_length=1024, emb_dim=768, n_heads=12, n_layers=12, drop_rate=0.1,
                       qkv_bias=False)


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        blocks = []
        for _ in range(cfg["n_layers"]):
            blocks.append(TransformerBlock(cfg))
        self.trf_blocks = nn.Sequential(*blocks)
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        n = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(n)).unsqueeze(0)
        x = self.trf_blocks(self.drop_emb(x))
        return self.out_head(self.final_norm(x))
''',
    "sliced": '''import torch.nn as nn
import torch.nn.functional as F

from layer_norm import LayerNorm
from transformer_block import TransformerBlock

GPT_CONFIG_124M = {"vocab_size": 50257, "context_length": 1024, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
                   "drop_rate": 0.1, "qkv_bias": False}


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*(TransformerBlock(cfg) for _ in range(cfg["n_layers"])))
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        x = self.tok_emb(in_idx) + self.pos_emb.weight[: in_idx.size(1)]
        x = self.drop_emb(x)
        for block in self.trf_blocks:
            x = block(x)
        return F.linear(self.final_norm(x), self.out_head.weight)
''',
}

# ------------------------------------------------------------------ 4.7 generating text
GENERATE = {
    "plain": '''import torch


def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        window = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(window)[:, -1, :]
        next_id = logits.argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, next_id], dim=1)
    return idx
''',
    "topk": '''import torch


@torch.no_grad()
def generate_text_simple(model, idx, max_new_tokens, context_size):
    out = idx
    for step in range(max_new_tokens):
        if out.shape[1] > context_size:
            context = out[:, out.shape[1] - context_size:]
        else:
            context = out
        last = model(context)[:, -1]
        _, best = torch.topk(last, k=1, dim=-1)
        out = torch.cat((out, best), dim=-1)
    return out
''',
    "softmax_max": '''import torch


def generate_text_simple(model, idx, max_new_tokens, context_size):
    tokens = idx.clone()
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(tokens[:, -context_size:])
        probas = torch.softmax(logits[:, -1, :], dim=-1)
        next_token = probas.max(dim=-1, keepdim=True).indices
        tokens = torch.cat((tokens, next_token), dim=1)
    return tokens
''',
    "prealloc": '''import torch


def generate_text_simple(model, idx, max_new_tokens, context_size):
    batch, n = idx.shape
    result = torch.empty(batch, n + max_new_tokens, dtype=idx.dtype)
    result[:, :n] = idx
    for t in range(n, n + max_new_tokens):
        with torch.no_grad():
            logits = model(result[:, max(0, t - context_size):t])
        result[:, t] = torch.argmax(logits[:, -1, :], dim=-1)
    return result
''',
}

# ------------------------------------------------------------------ exercises 4.1-4.3
_SEPARATE_PLAIN = '''

class TransformerBlockSeparateDropout(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        emb = cfg["emb_dim"]
        self.att = MultiHeadAttention(emb, emb, cfg["context_length"], cfg["drop_rate_attn"], cfg["n_heads"],
                                      qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(emb)
        self.norm2 = LayerNorm(emb)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])

    def forward(self, x):
        x = self.drop_shortcut(self.att(self.norm1(x))) + x
        x = self.drop_shortcut(self.ff(self.norm2(x))) + x
        return x


class GPTModelSeparateDropout(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(*[TransformerBlockSeparateDropout(cfg) for i in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        pos = torch.arange(in_idx.shape[-1], device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(pos))
        x = self.final_norm(self.trf_blocks(x))
        return self.out_head(x)
'''

EXERCISES = {
    "plain": '''import torch
import torch.nn as nn

from feed_forward import FeedForward
from gpt_model import GPT_CONFIG_124M
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention
from transformer_block import TransformerBlock


def count(module):
    return sum(p.numel() for p in module.parameters())


def feed_forward_and_attention_params(cfg):
    block = TransformerBlock(cfg)
    return count(block.ff), count(block.att)


def gpt2_config(size):
    cfg = dict(GPT_CONFIG_124M)
    if size == "medium":
        cfg.update(emb_dim=1024, n_layers=24, n_heads=16)
    elif size == "large":
        cfg.update(emb_dim=1280, n_layers=36, n_heads=20)
    elif size == "xl":
        cfg.update(emb_dim=1600, n_layers=48, n_heads=25)
    elif size != "small":
        raise ValueError(size)
    return cfg


def gpt_parameter_count(cfg):
    d, v, n = cfg["emb_dim"], cfg["vocab_size"], cfg["n_layers"]
    qkv = 3 * (d * d + (d if cfg["qkv_bias"] else 0))
    out_proj = d * d + d
    ff = (d * 4 * d + 4 * d) + (4 * d * d + d)
    norms = 2 * 2 * d
    embeddings = v * d + cfg["context_length"] * d
    return embeddings + n * (qkv + out_proj + ff + norms) + 2 * d + d * v


def gpt_size_mb(cfg):
    return gpt_parameter_count(cfg) * 4 / 1024 / 1024
''' + _SEPARATE_PLAIN,
    "meta": '''import torch
import torch.nn as nn

from feed_forward import FeedForward
from gpt_model import GPT_CONFIG_124M, GPTModel
from layer_norm import LayerNorm
from multihead_attention import MultiHeadAttention

SIZES = {"small": (768, 12, 12), "medium": (1024, 24, 16), "large": (1280, 36, 20), "xl": (1600, 48, 25)}


def feed_forward_and_attention_params(cfg):
    ff = sum(p.numel() for p in FeedForward(cfg).parameters())
    att = MultiHeadAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], context_length=cfg["context_length"],
                             dropout=cfg["drop_rate"], num_heads=cfg["n_heads"], qkv_bias=cfg["qkv_bias"])
    return int(ff), int(sum(p.numel() for p in att.parameters()))


def gpt2_config(size):
    try:
        emb_dim, n_layers, n_heads = SIZES[size]
    except KeyError:
        raise ValueError(f"no GPT-2 {size}") from None
    return {**GPT_CONFIG_124M, "emb_dim": emb_dim, "n_layers": n_layers, "n_heads": n_heads}


def gpt_parameter_count(cfg):
    with torch.device("meta"):  # shapes only: nothing is allocated
        model = GPTModel(cfg)
    return sum(p.numel() for p in model.parameters())


def gpt_size_mb(cfg):
    total_bytes = gpt_parameter_count(cfg) * torch.finfo(torch.float32).bits // 8
    return total_bytes / (1024 * 1024)
''' + _SEPARATE_PLAIN,
}

# 4.3 as subclasses of the student's own block (GPTModelSeparateDropout stays explicit: the
# book's creation order puts the blocks before final_norm and out_head)
EXERCISES["subclass"] = EXERCISES["plain"].replace(
    _SEPARATE_PLAIN[:_SEPARATE_PLAIN.index("class GPTModelSeparateDropout")],
    '''

class TransformerBlockSeparateDropout(TransformerBlock):
    def __init__(self, cfg):
        super().__init__({**cfg, "drop_rate": cfg["drop_rate_attn"]})
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])


''')

VARIANTS = {"layer_norm": LAYER_NORM, "feed_forward": FEED_FORWARD, "shortcuts": SHORTCUTS,
            "transformer_block": TRANSFORMER_BLOCK, "gpt_model": GPT_MODEL, "generate": GENERATE,
            "exercises": EXERCISES}


Alternative = partial(banks.Alternative, VARIANTS)


ALTERNATIVES = [
    Alternative("plain student: the variance by hand, math constants, zip of sizes, a loop of blocks, argmax "
                "without softmax, counts by formula"),
    Alternative("LayerNorm by torch.var_mean(correction=0) and rsqrt", {"layer_norm": "var_mean"}),
    Alternative("LayerNorm by F.layer_norm", {"layer_norm": "functional"}),
    Alternative("GELU as nn.GELU(approximate='tanh'); FeedForward by Sequential.append",
                {"feed_forward": "torch_gelu"}),
    Alternative("GELU by F.gelu(approximate='tanh'); FeedForward's layers applied in a loop",
                {"feed_forward": "functional"}),
    Alternative("shortcuts by index, gradients by torch.mean(torch.abs()), the MSE by hand", {"shortcuts": "indexed"}),
    Alternative("the companion's drop_resid, keyword arguments, statement by statement",
                {"transformer_block": "drop_resid"}),
    Alternative("one dropout module per branch", {"transformer_block": "two_dropouts"}),
    Alternative("F.dropout(training=self.training) on the shortcuts", {"transformer_block": "functional_dropout"}),
    Alternative("positions sliced from pos_emb.weight, blocks by a generator and a loop, F.linear head",
                {"gpt_model": "sliced"}),
    Alternative("generate by torch.topk under @torch.no_grad(), cropping only a longer text", {"generate": "topk"}),
    Alternative("generate by softmax then max (the book's probas)", {"generate": "softmax_max"}),
    Alternative("generate into a preallocated tensor", {"generate": "prealloc"}),
    Alternative("4.2 counted on the meta device; 4.1 on the classes", {"exercises": "meta"}),
    Alternative("4.3's block as a subclass of TransformerBlock", {"exercises": "subclass"}),
    Alternative("mixed: var_mean, nn.GELU, indexed shortcuts, drop_resid, sliced positions, topk, meta counts",
                {"layer_norm": "var_mean", "feed_forward": "torch_gelu", "shortcuts": "indexed",
                 "transformer_block": "drop_resid", "gpt_model": "sliced", "generate": "topk", "exercises": "meta"}),
    Alternative("saved on Windows: UTF-8 with a byte-order mark and CRLF line endings",
                {"layer_norm": "functional", "generate": "prealloc"}, newline="\r\n", encoding="utf-8-sig"),
    Alternative("indented with tabs, old Mac CR line endings", {"feed_forward": "functional",
                                                                "transformer_block": "two_dropouts"},
                newline="\r", tabs=True),
]
