"""Small models with the book's attribute names, for chapter 5's public tests and grader alike.

Chapter 5 trains, evaluates, samples from and loads weights into a GPT. What it grades is that
code, not your chapter-4 GPTModel: the checks hand your functions these models instead, so a
mistake in chapter 4 costs nothing here (your own GPTModel is what the notebook trains).

``TinyGPT``: token and position embeddings, dropout, a running mean over the tokens so far (so
the answer at a position depends on the context before it, as a GPT's does) and an output head.
``GPTParameters``: the parameters of the book's ``GPTModel`` under the book's names and shapes
(``trf_blocks[b].att.W_query``, ``ff.layers[0]``, ``norm1.scale``, ...), without a forward:
what ``load_weights_into_gpt`` fills in.
"""
import torch
import torch.nn as nn


class TinyGPT(nn.Module):
    """``cfg``: ``vocab_size``, ``context_length``, ``emb_dim``, ``drop_rate`` (as GPT_CONFIG_124M)."""

    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        num_tokens = in_idx.shape[1]
        positions = torch.arange(num_tokens, device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(positions))
        counts = torch.arange(1, num_tokens + 1, device=in_idx.device, dtype=x.dtype)
        x = x + x.cumsum(dim=1) / counts[:, None]   # what came before, averaged
        return self.out_head(x)


class _Norm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))


class _Attention(nn.Module):
    def __init__(self, emb_dim, qkv_bias):
        super().__init__()
        self.W_query = nn.Linear(emb_dim, emb_dim, bias=qkv_bias)
        self.W_key = nn.Linear(emb_dim, emb_dim, bias=qkv_bias)
        self.W_value = nn.Linear(emb_dim, emb_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(emb_dim, emb_dim)


class _FeedForward(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(emb_dim, 4 * emb_dim), nn.GELU(approximate="tanh"),
                                    nn.Linear(4 * emb_dim, emb_dim))


class _Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = _Attention(cfg["emb_dim"], cfg["qkv_bias"])
        self.ff = _FeedForward(cfg["emb_dim"])
        self.norm1 = _Norm(cfg["emb_dim"])
        self.norm2 = _Norm(cfg["emb_dim"])


class GPTParameters(nn.Module):
    """``cfg``: as GPT_CONFIG_124M (``vocab_size``, ``context_length``, ``emb_dim``, ``n_layers``,
    ``drop_rate``, ``qkv_bias``; ``n_heads`` is not needed)."""

    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[_Block(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = _Norm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
