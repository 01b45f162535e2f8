"""A bank of buggy variants of the reference solution: the mistakes students really make.

Each mutant is one edit of one module of ``solutions/ch03_attention``: the exact text
``old`` (which must occur exactly once in the reference, so that a mutant can never
silently turn into a no-op when the solutions change) is replaced by ``new``. ``parts``
names the part(s) of the hidden suites that must lose points for it. ``named`` is, where
the suites are expected to recognise the mistake, a fragment of the name they print
("This is exactly what you get with: ..."); it is reported, never enforced.

``tests/test_mutants.py`` grades every mutant and checks that it loses points.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str             # the mistake, as a student would be told about it
    module: str           # the module file of solutions/ch03_attention it edits (without .py)
    old: str              # exact text in the reference, occurring exactly once
    new: str              # what the student wrote instead
    parts: tuple          # parts that must lose points
    named: str = None     # fragment of the suites' mistake name expected in the feedback (reported only)


SIMPLE, SELF, CAUSAL, MHA, EX = ("simple_attention", "self_attention", "causal_attention",
                                 "multihead_attention", "exercises")

# Eight spaces: the indentation inside methods, for multi-line snippets.
I8 = "\n        "
I4 = "\n    "

MUTANTS = [
    # ---------------------------------------------------------------- 3.3 simplified attention
    Mutant("dot_product_loop skips the last element (range(n - 1))", SIMPLE,
           "for idx in range(x.shape[0]):", "for idx in range(x.shape[0] - 1):", (SIMPLE,)),
    Mutant("attn_scores_for_query dots each token with itself instead of the query", SIMPLE,
           "attn_scores[i] = torch.dot(x_i, query)", "attn_scores[i] = torch.dot(x_i, x_i)", (SIMPLE,),
           named="scores of the inputs with themselves"),
    Mutant("attn_scores_loop's outer loop skips the last token", SIMPLE,
           "for i, x_i in enumerate(inputs):" + I8 + "for j, x_j in enumerate(inputs):",
           "for i, x_i in enumerate(inputs[:-1]):" + I8 + "for j, x_j in enumerate(inputs):", (SIMPLE,)),
    Mutant("attn_scores_matmul computes inputs.T @ inputs", SIMPLE,
           "return inputs @ inputs.T", "return inputs.T @ inputs", (SIMPLE,),
           named="inputs.T @ inputs"),
    Mutant("normalize_by_sum divides by the L2 norm instead of the sum (wrong reduction)", SIMPLE,
           "return attn_scores / attn_scores.sum()", "return attn_scores / attn_scores.norm()", (SIMPLE,)),
    Mutant("normalize_by_sum uses softmax instead of dividing by the sum", SIMPLE,
           "return attn_scores / attn_scores.sum()", "return torch.softmax(attn_scores, dim=0)", (SIMPLE,),
           named="softmax instead of dividing by the sum"),
    Mutant("softmax_naive without dividing by the sum", SIMPLE,
           "return torch.exp(x) / torch.exp(x).sum(dim=0)", "return torch.exp(x)", (SIMPLE,),
           named="exp(x) without dividing by the sum"),
    Mutant("softmax_naive divides by the plain sum, no exp", SIMPLE,
           "return torch.exp(x) / torch.exp(x).sum(dim=0)", "return x / x.sum(dim=0)", (SIMPLE,),
           named="dividing by the plain sum (no exp)"),
    Mutant("attn_weights_from_scores: softmax over dim=0 instead of the last dim", SIMPLE,
           "return torch.softmax(attn_scores, dim=-1)", "return torch.softmax(attn_scores, dim=0)", (SIMPLE,),
           named="softmax over dim=0"),
    Mutant("attn_weights_from_scores uses the naive (overflowing) exp / sum softmax", SIMPLE,
           "return torch.softmax(attn_scores, dim=-1)",
           "return torch.exp(attn_scores) / torch.exp(attn_scores).sum(dim=-1, keepdim=True)", (SIMPLE,),
           named="without subtracting the maximum"),
    Mutant("context_vector_for_query's loop skips the last token", SIMPLE,
           "for i, x_i in enumerate(inputs):" + I4 + "    context_vec +=",
           "for i, x_i in enumerate(inputs[:-1]):" + I4 + "    context_vec +=", (SIMPLE,)),
    Mutant("all_context_vectors: softmax over dim=0", SIMPLE,
           "attn_weights = torch.softmax(attn_scores, dim=-1)" + I4 + "return attn_weights @ inputs",
           "attn_weights = torch.softmax(attn_scores, dim=0)" + I4 + "return attn_weights @ inputs", (SIMPLE,),
           named="softmax over dim=0"),
    Mutant("all_context_vectors: unnormalised scores times the inputs", SIMPLE,
           "attn_weights = torch.softmax(attn_scores, dim=-1)" + I4 + "return attn_weights @ inputs",
           "return attn_scores @ inputs", (SIMPLE,),
           named="unnormalised scores times the inputs"),
    Mutant("all_context_vectors uses the naive exp / sum softmax (overflows on large inputs)", SIMPLE,
           "attn_weights = torch.softmax(attn_scores, dim=-1)" + I4 + "return attn_weights @ inputs",
           "attn_weights = torch.exp(attn_scores) / torch.exp(attn_scores).sum(dim=-1, keepdim=True)"
           + I4 + "return attn_weights @ inputs", (SIMPLE,),
           named="without subtracting the maximum"),

    # ---------------------------------------------------------------- 3.4 trainable weights
    Mutant("compute_query_key_value: keys projected with W_query (copy-paste)", SELF,
           "queries = inputs @ W_query" + I4 + "keys = inputs @ W_key",
           "queries = inputs @ W_query" + I4 + "keys = inputs @ W_query", (SELF,)),
    Mutant("missing 1/sqrt(d_k) in scaled_attn_weights", SELF,
           "return torch.softmax(attn_scores / d_k**0.5, dim=-1)",
           "return torch.softmax(attn_scores, dim=-1)", (SELF,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("scaled_attn_weights divides by d_k instead of sqrt(d_k)", SELF,
           "return torch.softmax(attn_scores / d_k**0.5, dim=-1)",
           "return torch.softmax(attn_scores / d_k, dim=-1)", (SELF,),
           named="divided by d_k instead of sqrt(d_k)"),
    Mutant("context_vector_for_query uses the query of the wrong token (always inputs[1], 'journey')", SELF,
           "query = x_query @ W_query", "query = inputs[1] @ W_query", (SELF,)),
    Mutant("context_vector_for_query from unscaled weights", SELF,
           "attn_weights = scaled_attn_weights(query, keys)",
           "attn_weights = torch.softmax(query @ keys.T, dim=-1)", (SELF,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("missing 1/sqrt(d_k) in SelfAttention_v1", SELF,
           "values = x @ self.W_value" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "values = x @ self.W_value" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores, dim=-1)", (SELF,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("softmax over the wrong dim (dim=0) in SelfAttention_v1", SELF,
           "values = x @ self.W_value" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "values = x @ self.W_value" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=0)", (SELF,),
           named="softmax over the wrong dimension"),
    Mutant("W_key created before W_query in SelfAttention_v1 (seeded init order)", SELF,
           "self.W_query = nn.Parameter(torch.rand(d_in, d_out))" + I8
           + "self.W_key = nn.Parameter(torch.rand(d_in, d_out))",
           "self.W_key = nn.Parameter(torch.rand(d_in, d_out))" + I8
           + "self.W_query = nn.Parameter(torch.rand(d_in, d_out))", (SELF,)),
    Mutant("missing 1/sqrt(d_k) in SelfAttention_v2", SELF,
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores, dim=-1)", (SELF,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("keys @ queries swapped (K Q^T) in SelfAttention_v2", SELF,
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T",
           "values = self.W_value(x)" + I8 + "attn_scores = keys @ queries.T", (SELF,)),
    Mutant("qkv_bias ignored in SelfAttention_v2 (bias=False hard-coded)", SELF,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)",
           "self.W_query = nn.Linear(d_in, d_out, bias=False)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=False)" + I8
           + "self.W_value = nn.Linear(d_in, d_out, bias=False)", (SELF,)),
    Mutant("W_key created before W_query in SelfAttention_v2 (seeded init order)", SELF,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)",
           "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)", (SELF,)),

    # ---------------------------------------------------------------- 3.5 causal attention
    Mutant("simple_causal_mask uses triu instead of tril", CAUSAL,
           "return torch.tril(torch.ones(context_length, context_length))",
           "return torch.triu(torch.ones(context_length, context_length))", (CAUSAL,),
           named="triu instead of tril"),
    Mutant("masked_renormalized_weights zeroes the future but does not renormalise", CAUSAL,
           "return masked_simple / row_sums", "return masked_simple", (CAUSAL,),
           named="masked but not renormalised"),
    Mutant("masked_renormalized_weights renormalises by column sums (dim=0)", CAUSAL,
           "row_sums = masked_simple.sum(dim=-1, keepdim=True)",
           "row_sums = masked_simple.sum(dim=0, keepdim=True)", (CAUSAL,),
           named="renormalised over columns"),
    Mutant("masked_renormalized_weights: row sums without keepdim=True (broadcasts over columns)", CAUSAL,
           "row_sums = masked_simple.sum(dim=-1, keepdim=True)",
           "row_sums = masked_simple.sum(dim=-1)", (CAUSAL,)),
    Mutant("mask_future_scores: mask including the diagonal (triu diagonal=0)", CAUSAL,
           "mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)" + I4
           + "return attn_scores.masked_fill",
           "mask = torch.triu(torch.ones(context_length, context_length), diagonal=0)" + I4
           + "return attn_scores.masked_fill", (CAUSAL,), named="mask also hides the diagonal"),
    Mutant("mask_future_scores masks with 0 instead of -inf", CAUSAL,
           "return attn_scores.masked_fill(mask.bool(), -torch.inf)",
           "return attn_scores.masked_fill(mask.bool(), 0)", (CAUSAL,), named="filled with 0 instead of -inf"),
    Mutant("missing 1/sqrt(d_k) in causal_attn_weights", CAUSAL,
           "return torch.softmax(masked / d_k**0.5, dim=-1)",
           "return torch.softmax(masked, dim=-1)", (CAUSAL,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("dropout_attn_weights does not seed the generator", CAUSAL,
           "torch.manual_seed(seed)" + I4 + "dropout = nn.Dropout(p)",
           "dropout = nn.Dropout(p)", (CAUSAL,)),
    Mutant("dropout_attn_weights undoes the 1/(1-p) scaling of kept entries", CAUSAL,
           "return dropout(attn_weights)", "return dropout(attn_weights) * (1 - p)", (CAUSAL,),
           named="kept values not scaled by 1/(1-p)"),
    Mutant("missing 1/sqrt(d_k) in CausalAttention", CAUSAL,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores, dim=-1)", (CAUSAL,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("softmax over the wrong dim (dim=1 of a batch) in CausalAttention", CAUSAL,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=1)", (CAUSAL,),
           named="softmax over the wrong dimension"),
    Mutant("mask including the diagonal (triu diagonal=0) in CausalAttention", CAUSAL,
           '"mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)',
           '"mask", torch.triu(torch.ones(context_length, context_length), diagonal=0)', (CAUSAL,),
           named="mask also hides the diagonal"),
    Mutant("masking with 0 instead of -inf in CausalAttention", CAUSAL,
           "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)",
           "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], 0)", (CAUSAL,),
           named="filled with 0 instead of -inf"),
    Mutant("no causal mask in CausalAttention", CAUSAL,
           "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)" + I8, "",
           (CAUSAL,), named="no causal mask"),
    Mutant("mask applied after softmax without renormalising in CausalAttention", CAUSAL,
           "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)" + I8
           + "attn_weights = attn_weights.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], 0.0)",
           (CAUSAL,), named="zeroed after the softmax without renormalising"),
    Mutant("mask not a buffer (plain attribute) in CausalAttention", CAUSAL,
           "self.register_buffer(" + I8 + '    "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)'
           + I8 + ")",
           "self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)", (CAUSAL,)),
    Mutant("mask not cut to num_tokens in CausalAttention", CAUSAL,
           "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)",
           "attn_scores.masked_fill_(self.mask.bool(), -torch.inf)", (CAUSAL,), named="mask not cut"),
    Mutant("dropout on the attention scores instead of the weights in CausalAttention", CAUSAL,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)" + I8
           + "attn_weights = self.dropout(attn_weights)",
           "attn_scores = self.dropout(attn_scores)" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", (CAUSAL,),
           named="dropout applied to the attention scores"),
    Mutant("dropout on the context vectors instead of the weights in CausalAttention", CAUSAL,
           "attn_weights = self.dropout(attn_weights)" + I8 + "return attn_weights @ values",
           "return self.dropout(attn_weights @ values)", (CAUSAL,),
           named="dropout applied to the context vectors"),
    Mutant("dropout missing in CausalAttention", CAUSAL,
           "attn_weights = self.dropout(attn_weights)" + I8 + "return attn_weights @ values",
           "return attn_weights @ values", (CAUSAL,),
           named="no dropout in training mode"),
    Mutant("dropout applied in eval mode too (F.dropout(training=True) by hand) in CausalAttention", CAUSAL,
           "attn_weights = self.dropout(attn_weights)" + I8 + "return attn_weights @ values",
           "attn_weights = torch.nn.functional.dropout(attn_weights, self.dropout.p, training=True)" + I8
           + "return attn_weights @ values", (CAUSAL,)),
    Mutant("keys @ queries swapped (K Q^T) in CausalAttention", CAUSAL,
           "attn_scores = queries @ keys.transpose(1, 2)", "attn_scores = keys @ queries.transpose(1, 2)",
           (CAUSAL,)),
    Mutant("keys.T on a batch (transposes the batch dim too) in CausalAttention", CAUSAL,
           "attn_scores = queries @ keys.transpose(1, 2)", "attn_scores = queries @ keys.T", (CAUSAL,)),
    Mutant("W_key created before W_query in CausalAttention (seeded init order)", CAUSAL,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)",
           "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)", (CAUSAL,)),
    Mutant("qkv_bias ignored in CausalAttention (nn.Linear's default bias=True)", CAUSAL,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)",
           "self.W_query = nn.Linear(d_in, d_out)" + I8 + "self.W_key = nn.Linear(d_in, d_out)" + I8
           + "self.W_value = nn.Linear(d_in, d_out)", (CAUSAL,)),

    # ---------------------------------------------------------------- 3.6 multi-head attention
    Mutant("MultiHeadAttentionWrapper concatenates the heads along the tokens (dim=1)", MHA,
           "return torch.cat([head(x) for head in self.heads], dim=-1)",
           "return torch.cat([head(x) for head in self.heads], dim=1)", (MHA,)),
    Mutant("MultiHeadAttentionWrapper repeats one head ([head] * num_heads)", MHA,
           "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)" + I8 + "     for _ in range(num_heads)]",
           "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)] * num_heads", (MHA,)),
    Mutant("qkv_bias not passed on to the heads in MultiHeadAttentionWrapper", MHA,
           "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)",
           "[CausalAttention(d_in, d_out, context_length, dropout)", (MHA,)),
    Mutant("missing 1/sqrt(d_k) in MultiHeadAttention", MHA,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores, dim=-1)", (MHA,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("sqrt(d_out) instead of sqrt(head_dim) in MultiHeadAttention", MHA,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / self.d_out**0.5, dim=-1)", (MHA,),
           named="sqrt(d_out) instead of sqrt(head_dim)"),
    Mutant("softmax over the wrong dim (dim=2) in MultiHeadAttention", MHA,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=2)", (MHA,),
           named="softmax over the wrong dimension"),
    Mutant("heads split without transpose in MultiHeadAttention", MHA,
           "keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)" + I8
           + "values = values.view(b, num_tokens, self.num_heads, self.head_dim)" + I8
           + "queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)\n" + I8
           + "# -> (b, num_heads, num_tokens, head_dim): one attention matrix per head" + I8
           + "keys = keys.transpose(1, 2)" + I8 + "queries = queries.transpose(1, 2)" + I8
           + "values = values.transpose(1, 2)",
           "keys = keys.view(b, self.num_heads, num_tokens, self.head_dim)" + I8
           + "values = values.view(b, self.num_heads, num_tokens, self.head_dim)" + I8
           + "queries = queries.view(b, self.num_heads, num_tokens, self.head_dim)", (MHA,),
           named="heads split without the transpose"),
    Mutant("heads merged without transposing back in MultiHeadAttention", MHA,
           "context_vec = (attn_weights @ values).transpose(1, 2)",
           "context_vec = attn_weights @ values", (MHA,),
           named="heads merged without transposing back"),
    Mutant("view without contiguous() after the transpose in MultiHeadAttention", MHA,
           "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
           "context_vec = context_vec.view(b, num_tokens, self.d_out)", (MHA,)),
    Mutant("missing out_proj in MultiHeadAttention", MHA,
           "return self.out_proj(context_vec)", "return context_vec", (MHA,),
           named="out_proj is not applied"),
    Mutant("out_proj built with bias=qkv_bias in MultiHeadAttention", MHA,
           "self.out_proj = nn.Linear(d_out, d_out)", "self.out_proj = nn.Linear(d_out, d_out, bias=qkv_bias)",
           (MHA,)),
    Mutant("W_value without bias=qkv_bias in MultiHeadAttention (copy-paste)", MHA,
           "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)", "self.W_value = nn.Linear(d_in, d_out)",
           (MHA,)),
    Mutant("head_dim from d_in instead of d_out in MultiHeadAttention", MHA,
           "self.head_dim = d_out // num_heads", "self.head_dim = d_in // num_heads", (MHA,)),
    Mutant("mask including the diagonal (triu diagonal=0) in MultiHeadAttention", MHA,
           '"mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)',
           '"mask", torch.triu(torch.ones(context_length, context_length), diagonal=0)', (MHA,),
           named="mask also hides the diagonal"),
    Mutant("masking with 0 instead of -inf in MultiHeadAttention", MHA,
           "attn_scores.masked_fill_(mask_bool, -torch.inf)", "attn_scores.masked_fill_(mask_bool, 0)", (MHA,),
           named="filled with 0 instead of -inf"),
    Mutant("no causal mask in MultiHeadAttention", MHA,
           "attn_scores.masked_fill_(mask_bool, -torch.inf)" + I8, "", (MHA,),
           named="no causal mask"),
    Mutant("mask applied after softmax without renormalising in MultiHeadAttention", MHA,
           "attn_scores.masked_fill_(mask_bool, -torch.inf)" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)" + I8
           + "attn_weights = attn_weights.masked_fill(mask_bool, 0.0)", (MHA,),
           named="zeroed after the softmax without renormalising"),
    Mutant("mask not a buffer (plain attribute) in MultiHeadAttention", MHA,
           "self.register_buffer(" + I8 + '    "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)'
           + I8 + ")",
           "self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)", (MHA,)),
    Mutant("mask not cut to num_tokens in MultiHeadAttention", MHA,
           "mask_bool = self.mask.bool()[:num_tokens, :num_tokens]", "mask_bool = self.mask.bool()", (MHA,),
           named="mask not cut"),
    Mutant("dropout on the attention scores instead of the weights in MultiHeadAttention", MHA,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)" + I8
           + "attn_weights = self.dropout(attn_weights)",
           "attn_scores = self.dropout(attn_scores)" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", (MHA,),
           named="dropout applied to the attention scores"),
    Mutant("dropout on the context vectors instead of the weights in MultiHeadAttention", MHA,
           "attn_weights = self.dropout(attn_weights)\n" + I8
           + "# back to (b, num_tokens, num_heads, head_dim), then merge the heads" + I8
           + "context_vec = (attn_weights @ values).transpose(1, 2)",
           "context_vec = self.dropout(attn_weights @ values).transpose(1, 2)", (MHA,),
           named="dropout applied to the context vectors"),
    Mutant("dropout missing in MultiHeadAttention", MHA,
           "attn_weights = self.dropout(attn_weights)\n", "\n", (MHA,),
           named="no dropout in training mode"),
    Mutant("dropout applied in eval mode too (F.dropout's default training=True) in MultiHeadAttention", MHA,
           "attn_weights = self.dropout(attn_weights)",
           "attn_weights = torch.nn.functional.dropout(attn_weights, self.dropout.p)", (MHA,)),

    # ---------------------------------------------------------------- exercises 3.1 to 3.3
    Mutant("exercise 3.1: weights transferred untransposed", EX,
           "sa_v1.W_query.copy_(sa_v2.W_query.weight.T)" + I8 + "sa_v1.W_key.copy_(sa_v2.W_key.weight.T)" + I8
           + "sa_v1.W_value.copy_(sa_v2.W_value.weight.T)",
           "sa_v1.W_query.copy_(sa_v2.W_query.weight)" + I8 + "sa_v1.W_key.copy_(sa_v2.W_key.weight)" + I8
           + "sa_v1.W_value.copy_(sa_v2.W_value.weight)", (EX,),
           named="without transposing"),
    Mutant("exercise 3.1: v1's parameters replaced by v2's untransposed weights (nn.Parameter(weight))", EX,
           "sa_v1.W_query.copy_(sa_v2.W_query.weight.T)" + I8 + "sa_v1.W_key.copy_(sa_v2.W_key.weight.T)" + I8
           + "sa_v1.W_value.copy_(sa_v2.W_value.weight.T)",
           "sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight)" + I8
           + "sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight)" + I8
           + "sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight)", (EX,),
           named="without transposing"),
    Mutant("exercise 3.1: query and key weights swapped in the transfer", EX,
           "sa_v1.W_query.copy_(sa_v2.W_query.weight.T)" + I8 + "sa_v1.W_key.copy_(sa_v2.W_key.weight.T)",
           "sa_v1.W_query.copy_(sa_v2.W_key.weight.T)" + I8 + "sa_v1.W_key.copy_(sa_v2.W_query.weight.T)", (EX,)),
    Mutant("exercise 3.2: d_out=2 per head (4-D context vectors)", EX,
           "MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)",
           "MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=2)", (EX,)),
    Mutant("exercise 3.2: one head of d_out=2 (num_heads=1)", EX,
           "MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)",
           "MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=1)", (EX,)),
    Mutant("exercise 3.2: the dropout argument is ignored", EX,
           "MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)",
           "MultiHeadAttentionWrapper(d_in, 1, context_length, 0.0, num_heads=2)", (EX,)),
    Mutant("exercise 3.3: 8 heads instead of 12", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=8)", (EX,)),
    Mutant("exercise 3.3: context length 768 instead of 1,024", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 768, dropout, num_heads=12)", (EX,)),
    Mutant("exercise 3.3: d_out=64 (the head size) instead of 768", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 64, 1024, dropout, num_heads=12)", (EX,)),
    Mutant("exercise 3.3: qkv_bias=True (GPT-2's checkpoint has it, the exercise does not)", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12, qkv_bias=True)", (EX,)),
    Mutant("exercise 3.3: the dropout argument is ignored", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12)", (EX,)),
]
