"""A second bank of chapter-3 mistakes, written from the book alone (issue 36).

Each is a slip a student typing the book's listings (sections 3.3 to 3.6, exercises 3.1 to
3.3) could make, written without reading the grader's diagnoses or the other banks: so no
mutant declares a name (``named=None``). It is evidence for ``benchmarks/feedback_naming.py``
(how many of these the feedback names), not a gate: tests/test_mutants.py does not collect it.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from banks import Mutant  # noqa: E402

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions" / "ch03_attention"

MUTANTS = [
    # ---- 3.3 simplified self-attention (simple_attention.py)
    Mutant("scores as X^T X (the product the wrong way round, a (d, d) matrix)", "simple_attention",
           "    return inputs @ inputs.T\n",
           "    return inputs.T @ inputs\n",
           ("simple_attention",)),
    Mutant("attn_scores_loop dots x_i with itself (x_i, x_i: a copy-paste slip)", "simple_attention",
           "attn_scores[i, j] = torch.dot(x_i, x_j)",
           "attn_scores[i, j] = torch.dot(x_i, x_i)",
           ("simple_attention",)),
    Mutant("softmax_naive divides by the sum of the scores, not of their exponentials", "simple_attention",
           "torch.exp(x) / torch.exp(x).sum(dim=0)",
           "torch.exp(x) / x.sum(dim=0)",
           ("simple_attention",)),
    Mutant("softmax over dim=0 (copied from the one-query example): columns sum to 1", "simple_attention",
           "    return torch.softmax(attn_scores, dim=-1)\n",
           "    return torch.softmax(attn_scores, dim=0)\n",
           ("simple_attention",)),
    Mutant("context vector loop assigns instead of accumulating (= for +=)", "simple_attention",
           "        context_vec += attn_weights[i] * x_i\n",
           "        context_vec = attn_weights[i] * x_i\n",
           ("simple_attention",)),

    # ---- 3.4 self-attention with trainable weights (self_attention.py)
    Mutant("scaled_attn_weights forgets the 1/sqrt(d_k) scaling", "self_attention",
           "    return torch.softmax(attn_scores / d_k**0.5, dim=-1)\n",
           "    return torch.softmax(attn_scores, dim=-1)\n",
           ("self_attention",)),
    Mutant("d_k taken from the number of tokens (keys.shape[0])", "self_attention",
           "    d_k = keys.shape[-1]\n",
           "    d_k = keys.shape[0]\n",
           ("self_attention",)),
    Mutant("the query projected with W_key (copy-paste of the keys line)", "self_attention",
           "    query = x_query @ W_query\n",
           "    query = x_query @ W_key\n",
           ("self_attention",)),
    Mutant("SelfAttention_v1 weights frozen with requires_grad=False (as in 3.4.1's walk-through)",
           "self_attention",
           "        self.W_query = nn.Parameter(torch.rand(d_in, d_out))\n"
           "        self.W_key = nn.Parameter(torch.rand(d_in, d_out))\n"
           "        self.W_value = nn.Parameter(torch.rand(d_in, d_out))\n",
           "        self.W_query = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)\n"
           "        self.W_key = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)\n"
           "        self.W_value = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)\n",
           ("self_attention",)),
    Mutant("SelfAttention_v2 scores as keys @ queries.T (the transposed score matrix)", "self_attention",
           "        values = self.W_value(x)\n        attn_scores = queries @ keys.T\n",
           "        values = self.W_value(x)\n        attn_scores = keys @ queries.T\n",
           ("self_attention",)),

    # ---- 3.5 causal attention (causal_attention.py)
    Mutant("simple_causal_mask with triu instead of tril (the future kept, the past hidden)",
           "causal_attention",
           "    return torch.tril(torch.ones(context_length, context_length))\n",
           "    return torch.triu(torch.ones(context_length, context_length))\n",
           ("causal_attention",)),
    Mutant("renormalising without keepdim=True (the row sums broadcast along columns)", "causal_attention",
           "    row_sums = masked_simple.sum(dim=-1, keepdim=True)\n",
           "    row_sums = masked_simple.sum(dim=-1)\n",
           ("causal_attention",)),
    Mutant("mask_future_scores without diagonal=1: the diagonal masked too (off by one)",
           "causal_attention",
           "    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)\n",
           "    mask = torch.triu(torch.ones(context_length, context_length))\n",
           ("causal_attention",)),
    Mutant("CausalAttention calls masked_fill (not in place) and drops its result", "causal_attention",
           "        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)\n",
           "        attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)\n",
           ("causal_attention",)),
    Mutant("CausalAttention uses the whole mask, not cut to num_tokens", "causal_attention",
           "self.mask.bool()[:num_tokens, :num_tokens]",
           "self.mask.bool()",
           ("causal_attention",)),
    Mutant("CausalAttention applies dropout to the context vectors, not the attention weights",
           "causal_attention",
           "        attn_weights = self.dropout(attn_weights)\n        return attn_weights @ values\n",
           "        return self.dropout(attn_weights @ values)\n",
           ("causal_attention",)),

    # ---- 3.6 multi-head attention (multihead_attention.py)
    Mutant("the wrapper concatenates the heads along the tokens (dim=1)", "multihead_attention",
           "torch.cat([head(x) for head in self.heads], dim=-1)",
           "torch.cat([head(x) for head in self.heads], dim=1)",
           ("multihead_attention",)),
    Mutant("the wrapper repeats one head ([head] * num_heads: shared weights)", "multihead_attention",
           "            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)\n"
           "             for _ in range(num_heads)]\n",
           "            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)] * num_heads\n",
           ("multihead_attention",)),
    Mutant("MultiHeadAttention views straight to (b, num_heads, num_tokens, head_dim)", "multihead_attention",
           "        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)\n"
           "        values = values.view(b, num_tokens, self.num_heads, self.head_dim)\n"
           "        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)\n"
           "\n"
           "        # -> (b, num_heads, num_tokens, head_dim): one attention matrix per head\n"
           "        keys = keys.transpose(1, 2)\n"
           "        queries = queries.transpose(1, 2)\n"
           "        values = values.transpose(1, 2)\n",
           "        keys = keys.view(b, self.num_heads, num_tokens, self.head_dim)\n"
           "        values = values.view(b, self.num_heads, num_tokens, self.head_dim)\n"
           "        queries = queries.view(b, self.num_heads, num_tokens, self.head_dim)\n",
           ("multihead_attention",)),
    Mutant("MultiHeadAttention scales by sqrt(d_out), not sqrt(head_dim)", "multihead_attention",
           "attn_scores / keys.shape[-1]**0.5",
           "attn_scores / self.d_out**0.5",
           ("multihead_attention",)),
    Mutant("MultiHeadAttention merges the heads without transposing back", "multihead_attention",
           "        context_vec = (attn_weights @ values).transpose(1, 2)\n",
           "        context_vec = attn_weights @ values\n",
           ("multihead_attention",)),
    Mutant("MultiHeadAttention returns before out_proj (the layer built, never applied)",
           "multihead_attention",
           "        return self.out_proj(context_vec)\n",
           "        return context_vec\n",
           ("multihead_attention",)),

    # ---- exercises 3.1 to 3.3 (exercises.py)
    Mutant("exercise 3.1 copies nn.Linear's weight without transposing it", "exercises",
           "        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)\n"
           "        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)\n"
           "        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)\n",
           "        sa_v1.W_query.copy_(sa_v2.W_query.weight)\n"
           "        sa_v1.W_key.copy_(sa_v2.W_key.weight)\n"
           "        sa_v1.W_value.copy_(sa_v2.W_value.weight)\n",
           ("exercises",)),
    Mutant("exercise 3.2 with d_out=2 per head (4-D context vectors)", "exercises",
           "MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)",
           "MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=2)",
           ("exercises",)),
    Mutant("exercise 3.3 with qkv_bias=True (GPT-2's checkpoint has them; the brief says no)",
           "exercises",
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12, qkv_bias=True)",
           ("exercises",)),
]

for _m in MUTANTS:
    _text = (SOLUTIONS / f"{_m.module}.py").read_text(encoding="utf-8")
    assert _text.count(_m.old) == 1, (_m.name, _text.count(_m.old))
    assert _m.named is None and _m.old != _m.new
assert len(MUTANTS) == 25 and len({m.name for m in MUTANTS}) == len(MUTANTS)
