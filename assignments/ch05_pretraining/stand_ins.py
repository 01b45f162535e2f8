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


# -- what the grader hands training in place of the pieces it calls --------------------------------
# train_model_simple and evaluate_model are judged with these in place of your calc_loss_batch,
# calc_loss_loader, chapter 4's generate_text_simple and your text_to_token_ids and token_ids_to_text
# (each name the function calls), so that a mistake in losses.py, generate.py or text_tokens.py
# costs nothing in training. The loss is not the book's cross entropy: any loss trains, and this
# one gives nothing of losses.py away.
STAND_INS = {**{f"{module}.calc_loss_batch": "stand_ins.stand_in_loss_batch" for module in ("training", "losses")},
             **{f"{module}.calc_loss_loader": "stand_ins.stand_in_loss_loader" for module in ("training", "losses")},
             **{f"{module}.generate_text_simple": "stand_ins.stand_in_generate" for module in ("training", "generate")},
             **{f"{module}.{name}": f"stand_ins.stand_in_{name}" for module in ("training", "text_tokens")
                for name in ("text_to_token_ids", "token_ids_to_text")}}


def adamw(model, lr, weight_decay) -> torch.optim.AdamW:
    """torch's AdamW over ``model``'s parameters: the optimizer the checks hand your functions."""
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


def stand_in_loss_batch(input_batch, target_batch, model, device) -> torch.Tensor:
    """The squared distance between the softmax of ``model``'s logits and the one-hot targets,
    summed over the vocabulary, averaged over the tokens (a scalar tensor, as calc_loss_batch's)."""
    probs = torch.softmax(model(input_batch.to(device)), dim=-1)
    one_hot = nn.functional.one_hot(target_batch.to(device), probs.shape[-1]).to(probs.dtype)
    return ((probs - one_hot) ** 2).sum(dim=-1).mean()


def stand_in_loss_loader(data_loader, model, device, num_batches=None):
    """The mean of ``stand_in_loss_batch`` over the first ``num_batches`` batches (all where None)."""
    losses = [stand_in_loss_batch(x, y, model, device).item()
              for _, (x, y) in zip(range(len(data_loader) if num_batches is None else num_batches), data_loader)]
    return sum(losses) / len(losses) if losses else float("nan")


def stand_in_text_to_token_ids(text, tokenizer) -> torch.Tensor:
    """``text``'s ids in a batch of one, (1, num_tokens) int64; ``<|endoftext|>`` as its one id."""
    return torch.tensor([tokenizer.encode(text, allowed_special={"<|endoftext|>"})], dtype=torch.long)


def stand_in_token_ids_to_text(token_ids, tokenizer) -> str:
    """The text of a batch of one's ids (or of a 1-D tensor of them)."""
    return tokenizer.decode(token_ids.reshape(-1).tolist())


def stand_in_generate(model, idx, max_new_tokens, context_size) -> torch.Tensor:
    """Greedy generation: ``max_new_tokens`` times the argmax at the last position of the last
    ``context_size`` tokens, appended."""
    tokens = idx
    with torch.no_grad():  # decoding needs no gradients
        for _step in range(max_new_tokens):
            logits = model(tokens[:, -context_size:])[:, -1, :]
            tokens = torch.cat((tokens, logits.argmax(dim=-1, keepdim=True)), dim=1)
    return tokens
