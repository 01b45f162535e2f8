"""A bank of buggy variants of the reference solution: the mistakes students really make.

Each mutant is one edit of one module of ``solutions/ch03_attention``: the exact text
``old`` (which must occur exactly once in the reference, so that a mutant can never
silently turn into a no-op when the solutions change) is replaced by ``new``.

``parts`` is the EXACT set of parts in which the mistake lives: each of them must lose
points, and every other part must keep full marks (one mistake is charged once, where it
is). A bug in ``CausalAttention`` is charged to causal_attention only, although the wrapper
and exercise 3.2 build on it. A module that fails to import costs the checks that use what
it defines: its own part, and the parts whose classes use it. ``keeps`` names checks (a
fragment of the check's name) inside those parts that use nothing the mistake touches and
so must keep their points (exercise 3.1 does not need ``CausalAttention``).

``named`` is, where the suites model the mistake (or should), a fragment of the name the
check must record as its mistake (``Check.mistake``; the feedback then ends "This is exactly
what you get with: ..."); a mutant without ``named`` should not be given any mistake's name.

``also`` holds further (module, old, new) edits of the same submission, each held to the
same exactly-once rule: for a mistake whose collateral cost shows only together with the
student's own code elsewhere (a v1 with other names and the transfer that writes to them) or
beside another correct style (a wrapper whose heads get size 0, next to a CausalAttention that
scales by ``** -0.5``).

``tests/test_mutants.py`` grades every mutant and checks that it loses points.
"""
from banks import Mutant


SIMPLE, SELF, CAUSAL, MHA, EX = ("simple_attention", "self_attention", "causal_attention",
                                 "multihead_attention", "exercises")

# Eight spaces: the indentation inside methods, for multi-line snippets.
I8 = "\n        "
I4 = "\n    "

# Snippets several mutants edit: SelfAttention_v1's weights and forward, the q/k/v layers of the
# nn.Linear classes (the same three lines in self_attention, causal_attention and multihead_attention),
# and exercise 3.1's copies.
V1_INIT = ("self.W_query = nn.Parameter(torch.rand(d_in, d_out))" + I8 + "self.W_key = nn.Parameter(torch.rand(d_in, d_out))"
           + I8 + "self.W_value = nn.Parameter(torch.rand(d_in, d_out))")
V1_FORWARD = "keys = x @ self.W_key" + I8 + "queries = x @ self.W_query" + I8 + "values = x @ self.W_value"
V2_INIT = ("self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8 + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)"
           + I8 + "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)")
TRANSFER = ("sa_v1.W_query.copy_(sa_v2.W_query.weight.T)" + I8 + "sa_v1.W_key.copy_(sa_v2.W_key.weight.T)" + I8
            + "sa_v1.W_value.copy_(sa_v2.W_value.weight.T)")

MUTANTS = [
    # ---------------------------------------------------------------- 3.3 simplified attention
    Mutant("dot_product_loop skips the last element (range(n - 1))", SIMPLE,
           "for idx in range(x.shape[0]):", "for idx in range(x.shape[0] - 1):", (SIMPLE,), named='a loop that stops one step short'),
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
           "return attn_scores / attn_scores.sum()", "return attn_scores / attn_scores.norm()", (SIMPLE,), named='instead of its sum'),
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
           "for i, x_i in enumerate(inputs[:-1]):" + I4 + "    context_vec +=", (SIMPLE,), named='a loop that stops one step short'),
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

    Mutant("attn_scores_for_query always uses the book's query inputs[1] ('journey')", SIMPLE,
           "attn_scores[i] = torch.dot(x_i, query)", "attn_scores[i] = torch.dot(x_i, inputs[1])", (SIMPLE,), named='a fixed token (inputs[1]'),
    Mutant("normalize_by_sum divides the caller's scores in place (div_)", SIMPLE,
           "return attn_scores / attn_scores.sum()", "return attn_scores.div_(attn_scores.sum())", (SIMPLE,), named="an in-place operation on the caller's tensor"),
    Mutant("dot_product_loop returns a Python float (.item()), not a 0-d tensor", SIMPLE,
           "        res = res + x[idx] * y[idx]" + I4 + "return res",
           "        res = res + x[idx] * y[idx]" + I4 + "return res.item()", (SIMPLE,), named='a Python number'),

    # Does not compile: only simple_attention's own functions are gone. The book's `inputs` it holds
    # is data the other parts' tests keep a copy of, so no other part loses anything.
    Mutant("syntax error in simple_attention.py (missing colon)", SIMPLE,
           "def softmax_naive(x):", "def softmax_naive(x)", (SIMPLE,), named='a syntax error'),

    # ---------------------------------------------------------------- 3.4 trainable weights
    Mutant("compute_query_key_value: keys projected with W_query (copy-paste)", SELF,
           "queries = inputs @ W_query" + I4 + "keys = inputs @ W_key",
           "queries = inputs @ W_query" + I4 + "keys = inputs @ W_query", (SELF,), named='projected with W_query'),
    Mutant("missing 1/sqrt(d_k) in scaled_attn_weights", SELF,
           "return torch.softmax(attn_scores / d_k**0.5, dim=-1)",
           "return torch.softmax(attn_scores, dim=-1)", (SELF,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("scaled_attn_weights divides by d_k instead of sqrt(d_k)", SELF,
           "return torch.softmax(attn_scores / d_k**0.5, dim=-1)",
           "return torch.softmax(attn_scores / d_k, dim=-1)", (SELF,),
           named="divided by d_k instead of sqrt(d_k)"),
    Mutant("context_vector_for_query uses the query of the wrong token (always inputs[1], 'journey')", SELF,
           "query = x_query @ W_query", "query = inputs[1] @ W_query", (SELF,), named='a fixed token (inputs[1]'),
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
           + "self.W_query = nn.Parameter(torch.rand(d_in, d_out))", (SELF,), named="order"),
    Mutant("missing 1/sqrt(d_k) in SelfAttention_v2", SELF,
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores, dim=-1)", (SELF,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("keys @ queries swapped (K Q^T) in SelfAttention_v2", SELF,
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T",
           "values = self.W_value(x)" + I8 + "attn_scores = keys @ queries.T", (SELF,), named='keys @ queries.T'),
    Mutant("qkv_bias ignored in SelfAttention_v2 (bias=False hard-coded)", SELF,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)",
           "self.W_query = nn.Linear(d_in, d_out, bias=False)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=False)" + I8
           + "self.W_value = nn.Linear(d_in, d_out, bias=False)", (SELF,), named='without bias=qkv_bias'),
    Mutant("W_key created before W_query in SelfAttention_v2 (seeded init order)", SELF,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)",
           "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)", (SELF,), named="order"),

    Mutant("scaled_attn_weights scales by the number of tokens (keys.shape[0]) instead of d_k", SELF,
           "d_k = keys.shape[-1]", "d_k = keys.shape[0]", (SELF,), named="number of tokens"),
    Mutant("context_vector_for_query sums the inputs instead of the values", SELF,
           "attn_weights = scaled_attn_weights(query, keys)" + I4 + "return attn_weights @ values",
           "attn_weights = scaled_attn_weights(query, keys)" + I4 + "return attn_weights @ inputs", (SELF,),
           named="weighted sum of the inputs instead of the values"),
    Mutant("torch.randn instead of torch.rand in SelfAttention_v1", SELF,
           "self.W_query = nn.Parameter(torch.rand(d_in, d_out))" + I8 + "self.W_key = nn.Parameter(torch.rand(d_in, d_out))" + I8
           + "self.W_value = nn.Parameter(torch.rand(d_in, d_out))",
           "self.W_query = nn.Parameter(torch.randn(d_in, d_out))" + I8 + "self.W_key = nn.Parameter(torch.randn(d_in, d_out))"
           + I8 + "self.W_value = nn.Parameter(torch.randn(d_in, d_out))", (SELF,), named="randn"),
    Mutant("SelfAttention_v1's weights created with requires_grad=False (as in the book's walk-through)", SELF,
           "self.W_query = nn.Parameter(torch.rand(d_in, d_out))" + I8 + "self.W_key = nn.Parameter(torch.rand(d_in, d_out))" + I8
           + "self.W_value = nn.Parameter(torch.rand(d_in, d_out))",
           "self.W_query = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)" + I8
           + "self.W_key = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)" + I8
           + "self.W_value = nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)", (SELF,), named='requires_grad=False'),
    Mutant("SelfAttention_v1's forward under torch.no_grad() (trainable weights, no gradient reaches them)", SELF,
           "keys = x @ self.W_key" + I8 + "queries = x @ self.W_query" + I8 + "values = x @ self.W_value",
           "with torch.no_grad():" + I8 + "    keys = x @ self.W_key" + I8 + "    queries = x @ self.W_query" + I8
           + "    values = x @ self.W_value", (SELF,), named='does not depend on any trainable weight'),
    Mutant("SelfAttention_v1 scales by sqrt(d_in) instead of sqrt(d_k)", SELF,
           "values = x @ self.W_value" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "values = x @ self.W_value" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / x.shape[-1]**0.5, dim=-1)", (SELF,), named='sqrt(d_in)'),
    Mutant("softmax over the wrong dim (dim=0) in SelfAttention_v2", SELF,
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=0)", (SELF,),
           named="softmax over the wrong dimension"),
    Mutant("SelfAttention_v2 divides the scores by d_k instead of sqrt(d_k)", SELF,
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "values = self.W_value(x)" + I8 + "attn_scores = queries @ keys.T" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1], dim=-1)", (SELF,),
           named="divided by d_k instead of sqrt(d_k)"),
    # Exercise 3.1 is judged on the student's own v1 and v2 where self_attention has lost points of its
    # own: the names, the plain tensors and the biases are charged there only.
    Mutant("SelfAttention_v1 with its own parameter names (Wq, Wk, Wv), the transfer writing to them", SELF,
           V1_INIT, V1_INIT.replace("self.W_", "self.W").replace("Wquery", "Wq").replace("Wkey", "Wk").replace("Wvalue", "Wv"),
           (SELF,), also=((SELF, V1_FORWARD, V1_FORWARD.replace("self.W_query", "self.Wq").replace("self.W_key", "self.Wk")
                           .replace("self.W_value", "self.Wv")),
                          (EX, TRANSFER, TRANSFER.replace("sa_v1.W_query", "sa_v1.Wq").replace("sa_v1.W_key", "sa_v1.Wk")
                           .replace("sa_v1.W_value", "sa_v1.Wv"))), named='attributes named differently'),
    Mutant("SelfAttention_v2 with its own layer names (query, key, value), the transfer reading them", SELF,
           V2_INIT, V2_INIT.replace("self.W_", "self."), (SELF,),
           also=((SELF, "keys = self.W_key(x)" + I8 + "queries = self.W_query(x)" + I8 + "values = self.W_value(x)",
                  "keys = self.key(x)" + I8 + "queries = self.query(x)" + I8 + "values = self.value(x)"),
                 (EX, TRANSFER, TRANSFER.replace("sa_v2.W_", "sa_v2."))), named='attributes named differently'),
    Mutant("SelfAttention_v1's weights are plain tensors (torch.rand(..., requires_grad=True)), not nn.Parameter", SELF,
           V1_INIT, V1_INIT.replace("nn.Parameter(torch.rand(d_in, d_out))", "torch.rand(d_in, d_out, requires_grad=True)"),
           (SELF,), named="plain tensors"),
    Mutant("nn.Linear's default bias=True in SelfAttention_v2, CausalAttention and MultiHeadAttention", SELF,
           V2_INIT, V2_INIT.replace(", bias=qkv_bias)", ")"), (SELF, CAUSAL, MHA),
           also=((CAUSAL, V2_INIT, V2_INIT.replace(", bias=qkv_bias)", ")")),
                 (MHA, V2_INIT, V2_INIT.replace(", bias=qkv_bias)", ")"))), named='where qkv_bias=False asks for none'),
    # The module fails to import: its own checks fail, and exercise 3.1, which uses its classes.
    Mutant("self_attention.py without `import torch.nn as nn` (NameError on import)", SELF,
           "import torch\nimport torch.nn as nn\n", "import torch\n", (SELF, EX), keeps=("exercises: 3.2", "exercises: 3.3"), named='a missing import'),

    # ---------------------------------------------------------------- 3.5 causal attention
    Mutant("simple_causal_mask uses triu instead of tril", CAUSAL,
           "return torch.tril(torch.ones(context_length, context_length))",
           "return torch.triu(torch.ones(context_length, context_length))", (CAUSAL,), named="triu instead of tril"),
    Mutant("masked_renormalized_weights zeroes the future but does not renormalise", CAUSAL,
           "return masked_simple / row_sums", "return masked_simple", (CAUSAL,), named="not renormalised"),
    Mutant("masked_renormalized_weights renormalises by column sums (dim=0)", CAUSAL,
           "row_sums = masked_simple.sum(dim=-1, keepdim=True)",
           "row_sums = masked_simple.sum(dim=0, keepdim=True)", (CAUSAL,), named="renormalised over columns"),
    Mutant("masked_renormalized_weights: row sums without keepdim=True (broadcasts over columns)", CAUSAL,
           "row_sums = masked_simple.sum(dim=-1, keepdim=True)",
           "row_sums = masked_simple.sum(dim=-1)", (CAUSAL,), named='without keepdim=True'),
    Mutant("mask_future_scores: mask including the diagonal (triu diagonal=0)", CAUSAL,
           "mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)" + I4
           + "return attn_scores.masked_fill",
           "mask = torch.triu(torch.ones(context_length, context_length), diagonal=0)" + I4
           + "return attn_scores.masked_fill", (CAUSAL,), named="hides the diagonal"),
    Mutant("mask_future_scores masks with 0 instead of -inf", CAUSAL,
           "return attn_scores.masked_fill(mask.bool(), -torch.inf)",
           "return attn_scores.masked_fill(mask.bool(), 0)", (CAUSAL,), named="filled with 0 instead of -inf"),
    Mutant("missing 1/sqrt(d_k) in causal_attn_weights", CAUSAL,
           "return torch.softmax(masked / d_k**0.5, dim=-1)",
           "return torch.softmax(masked, dim=-1)", (CAUSAL,),
           named="no 1/sqrt(d_k) scaling"),
    Mutant("dropout_attn_weights does not seed the generator", CAUSAL,
           "torch.manual_seed(seed)" + I4 + "dropout = nn.Dropout(p)",
           "dropout = nn.Dropout(p)", (CAUSAL,), named='not the mask nn.Dropout(p) draws'),
    Mutant("dropout_attn_weights undoes the 1/(1-p) scaling of kept entries", CAUSAL,
           "return dropout(attn_weights)", "return dropout(attn_weights) * (1 - p)", (CAUSAL,), named="not scaled by 1/(1-p)"),
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
           "self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)", (CAUSAL,), named='plain attribute, not a buffer'),
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
           + "return attn_weights @ values", (CAUSAL,), named="eval mode"),
    Mutant("keys @ queries swapped (K Q^T) in CausalAttention", CAUSAL,
           "attn_scores = queries @ keys.transpose(1, 2)", "attn_scores = keys @ queries.transpose(1, 2)",
           (CAUSAL,), named='keys @ queries.T'),
    Mutant("keys.T on a batch (transposes the batch dim too) in CausalAttention", CAUSAL,
           "attn_scores = queries @ keys.transpose(1, 2)", "attn_scores = queries @ keys.T", (CAUSAL,),
           named=".T on a batch of matrices"),
    Mutant("W_key created before W_query in CausalAttention (seeded init order)", CAUSAL,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)",
           "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)", (CAUSAL,), named="order"),
    Mutant("qkv_bias ignored in CausalAttention (nn.Linear's default bias=True)", CAUSAL,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)",
           "self.W_query = nn.Linear(d_in, d_out)" + I8 + "self.W_key = nn.Linear(d_in, d_out)" + I8
           + "self.W_value = nn.Linear(d_in, d_out)", (CAUSAL,), named='where qkv_bias=False asks for none'),

    Mutant("mask_future_scores returns the scores unmasked", CAUSAL,
           "return attn_scores.masked_fill(mask.bool(), -torch.inf)", "return attn_scores", (CAUSAL,),
           named="no causal mask"),
    Mutant("mask_future_scores masks the caller's scores in place (masked_fill_)", CAUSAL,
           "return attn_scores.masked_fill(mask.bool(), -torch.inf)",
           "return attn_scores.masked_fill_(mask.bool(), -torch.inf)", (CAUSAL,), named="an in-place operation on the caller's tensor"),
    Mutant("mask_future_scores builds the mask from shape[0] (fails on batched scores)", CAUSAL,
           "context_length = attn_scores.shape[-1]", "context_length = attn_scores.shape[0]", (CAUSAL,),
           named="works on one matrix but not on a batch"),
    Mutant("masked_renormalized_weights zeroes the caller's weights in place (mul_)", CAUSAL,
           "masked_simple = attn_weights * mask_simple", "masked_simple = attn_weights.mul_(mask_simple)", (CAUSAL,), named="an in-place operation on the caller's tensor"),
    Mutant("simple_causal_mask hides the diagonal too (tril diagonal=-1)", CAUSAL,
           "return torch.tril(torch.ones(context_length, context_length))",
           "return torch.tril(torch.ones(context_length, context_length), diagonal=-1)", (CAUSAL,),
           named="diagonal is masked too"),
    Mutant("causal_attn_weights: softmax over the wrong dim (dim=-2)", CAUSAL,
           "return torch.softmax(masked / d_k**0.5, dim=-1)", "return torch.softmax(masked / d_k**0.5, dim=-2)",
           (CAUSAL,), named="softmax over the wrong dimension"),
    Mutant("causal_attn_weights divides by d_k instead of sqrt(d_k)", CAUSAL,
           "return torch.softmax(masked / d_k**0.5, dim=-1)", "return torch.softmax(masked / d_k, dim=-1)",
           (CAUSAL,), named="divided by d_k instead of sqrt(d_k)"),
    Mutant("causal_attn_weights zeroes the future after the softmax, without renormalising", CAUSAL,
           "masked = mask_future_scores(attn_scores)" + I4 + "return torch.softmax(masked / d_k**0.5, dim=-1)",
           "weights = torch.softmax(attn_scores / d_k**0.5, dim=-1)" + I4
           + "return weights * torch.tril(torch.ones_like(weights))", (CAUSAL,),
           named="zeroed after the softmax without renormalising"),
    Mutant("dropout_attn_weights drops the caller's weights in place (nn.Dropout(p, inplace=True))", CAUSAL,
           "dropout = nn.Dropout(p)", "dropout = nn.Dropout(p, inplace=True)", (CAUSAL,), named="an in-place operation on the caller's tensor"),
    Mutant("dropout_attn_weights always seeds 123, the book's seed", CAUSAL,
           "torch.manual_seed(seed)" + I4 + "dropout =", "torch.manual_seed(123)" + I4 + "dropout =", (CAUSAL,), named='not the mask nn.Dropout(p) draws'),
    # The seed is right: the mask differs because it is not nn.Dropout's draw (the name says what
    # the numbers show, a dropout with another mask, never "seed it", which this code does).
    Mutant("dropout_attn_weights written by hand: torch.rand_like(weights) > p after the right seed", CAUSAL,
           "dropout = nn.Dropout(p)" + I4 + "return dropout(attn_weights)",
           "keep = torch.rand_like(attn_weights) > p" + I4 + "return attn_weights * keep / (1 - p)", (CAUSAL,),
           named='not the mask nn.Dropout(p) draws'),
    # Section 3.5.1's first recipe, as the book prints it: right wherever a row's kept weights do
    # not underflow, NaN (0/0) on the graded large scores: named, not only "contains NaN".
    Mutant("CausalAttention with the book's first causal recipe (softmax, zero the future, renormalise)", CAUSAL,
           "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)" + I8
           + "attn_weights = attn_weights.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], 0.0)" + I8
           + "attn_weights = attn_weights / attn_weights.sum(dim=-1, keepdim=True)", (CAUSAL,),
           named="then the rows renormalised"),
    Mutant("causal_attn_weights with the book's first causal recipe (softmax, zero the future, renormalise)", CAUSAL,
           "masked = mask_future_scores(attn_scores)" + I4 + "return torch.softmax(masked / d_k**0.5, dim=-1)",
           "weights = torch.softmax(attn_scores / d_k**0.5, dim=-1)" + I4
           + "weights = weights * torch.tril(torch.ones_like(weights))" + I4
           + "return weights / weights.sum(dim=-1, keepdim=True)", (CAUSAL,), named="then the rows renormalised"),
    Mutant("CausalAttention ignores its mask buffer and builds a CPU mask on every call", CAUSAL,
           "attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)",
           "attn_scores.masked_fill_(torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool(), -torch.inf)",
           (CAUSAL,), named='a causal mask other than the registered buffer'),
    # the wrapper's heads then carry an extra parameter: charged once, here, by the mask check alone
    Mutant("CausalAttention's mask is an nn.Parameter(requires_grad=False), not a buffer", CAUSAL,
           "self.register_buffer(" + I8 + '    "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)'
           + I8 + ")",
           "self.mask = nn.Parameter(torch.triu(torch.ones(context_length, context_length), diagonal=1),"
           + I8 + "                         requires_grad=False)", (CAUSAL,), named="nn.Parameter instead of a buffer"),
    Mutant("CausalAttention's mask is a trainable nn.Parameter, not a buffer", CAUSAL,
           "self.register_buffer(" + I8 + '    "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)'
           + I8 + ")",
           "self.mask = nn.Parameter(torch.triu(torch.ones(context_length, context_length), diagonal=1))", (CAUSAL,),
           named="nn.Parameter instead of a buffer"),
    # the wrapper inherits this bug; it must cost points in causal_attention only
    Mutant("CausalAttention projects the keys with W_query (copy-paste)", CAUSAL,
           "keys = self.W_key(x)", "keys = self.W_query(x)", (CAUSAL,), named='projected with W_query'),
    Mutant("softmax over the batch dim (dim=0) in CausalAttention", CAUSAL,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=0)", (CAUSAL,),
           named="softmax over the wrong dimension"),
    Mutant("CausalAttention divides the scores by d_k instead of sqrt(d_k)", CAUSAL,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1], dim=-1)", (CAUSAL,),
           named="divided by d_k instead of sqrt(d_k)"),
    Mutant("CausalAttention scales by sqrt(d_in) instead of sqrt(d_k)", CAUSAL,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / x.shape[-1]**0.5, dim=-1)", (CAUSAL,), named='sqrt(d_in)'),
    Mutant("dropout on the scores before the mask in CausalAttention", CAUSAL,
           "attn_scores = queries @ keys.transpose(1, 2)", "attn_scores = self.dropout(queries @ keys.transpose(1, 2))",
           (CAUSAL,), named="dropout applied to the attention scores"),
    Mutant("CausalAttention hard-codes the book's dropout 0.5", CAUSAL,
           "self.dropout = nn.Dropout(dropout)", "self.dropout = nn.Dropout(0.5)", (CAUSAL,), named='not the rate the dropout argument gives'),
    # Does not compile: CausalAttention is gone, and only it: the wrapper (multihead_attention) is
    # judged on stand-in heads, MultiHeadAttention uses none of it, and the exercises build the
    # grader's stand-ins.
    Mutant("syntax error in causal_attention.py (missing colon)", CAUSAL,
           "def forward(self, x):", "def forward(self, x)", (CAUSAL,), named='a syntax error'),

    # ---------------------------------------------------------------- 3.6 multi-head attention
    Mutant("MultiHeadAttentionWrapper concatenates the heads along the tokens (dim=1)", MHA,
           "return torch.cat([head(x) for head in self.heads], dim=-1)",
           "return torch.cat([head(x) for head in self.heads], dim=1)", (MHA,), named='concatenated along the tokens'),
    Mutant("MultiHeadAttentionWrapper repeats one head ([head] * num_heads)", MHA,
           "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)" + I8 + "     for _ in range(num_heads)]",
           "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)] * num_heads", (MHA,),
           named="only one head registered (heads.0)"),
    Mutant("qkv_bias not passed on to the heads in MultiHeadAttentionWrapper", MHA,
           "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)",
           "[CausalAttention(d_in, d_out, context_length, dropout)", (MHA,), named='without bias=qkv_bias'),
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
           "context_vec = context_vec.view(b, num_tokens, self.d_out)", (MHA,), named='not contiguous'),
    Mutant("missing out_proj in MultiHeadAttention", MHA,
           "return self.out_proj(context_vec)", "return context_vec", (MHA,),
           named="out_proj is not applied", says=("out_proj.weight received no gradient from backward, and the output "
                                                  "stays the same", "forward does not use it")),
    Mutant("W_value built but never used in MultiHeadAttention (values from W_key)", MHA,
           "values = self.W_value(x)", "values = self.W_key(x)", (MHA,),
           says=("the output stays the same when W_value.weight is given other values: forward does not use it",)),
    Mutant("out_proj built with bias=qkv_bias in MultiHeadAttention", MHA,
           "self.out_proj = nn.Linear(d_out, d_out)", "self.out_proj = nn.Linear(d_out, d_out, bias=qkv_bias)",
           (MHA,), named='keeps its bias'),
    Mutant("W_value without bias=qkv_bias in MultiHeadAttention (copy-paste)", MHA,
           "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)", "self.W_value = nn.Linear(d_in, d_out)",
           (MHA,), named='where qkv_bias=False asks for none'),
    Mutant("head_dim from d_in instead of d_out in MultiHeadAttention", MHA,
           "self.head_dim = d_out // num_heads", "self.head_dim = d_in // num_heads", (MHA,),
           says=("In your `MultiHeadAttention.forward` (multihead_attention.py line",
                 "`keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)`), your tensors had these shapes:")),
    Mutant("heads viewed but never transposed in MultiHeadAttention", MHA,
           "keys = keys.transpose(1, 2)" + I8 + "queries = queries.transpose(1, 2)" + I8
           + "values = values.transpose(1, 2)", "", (MHA,),
           says=("`attn_scores.masked_fill_(mask_bool, -torch.inf)`): your `keys` has shape (2, 6, 2, 3) where "
                 "the book's code has shape (2, 2, 6, 3)",)),
    Mutant("heads joined with torch.cat along the tokens in MultiHeadAttention", MHA,
           "context_vec = (attn_weights @ values).transpose(1, 2)" + I8
           + "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
           "context_vec = torch.cat((attn_weights @ values).unbind(1), dim=1)", (MHA,),
           says=("your `context_vec` has shape (2, 12, 3) where the book's code has shape (2, 6, 6). The book's "
                 "`MultiHeadAttention.forward` returns a tensor of shape (2, 6, 6) there.",)),
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
           "self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)", (MHA,), named='plain attribute, not a buffer'),
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
           "attn_weights = torch.nn.functional.dropout(attn_weights, self.dropout.p)", (MHA,), named="eval mode"),

    Mutant("MultiHeadAttention with the book's first causal recipe (softmax, zero the future, renormalise)", MHA,
           "attn_scores.masked_fill_(mask_bool, -torch.inf)" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)" + I8
           + "attn_weights = attn_weights.masked_fill(mask_bool, 0.0)" + I8
           + "attn_weights = attn_weights / attn_weights.sum(dim=-1, keepdim=True)", (MHA,),
           named="then the rows renormalised", keeps=("multihead_attention: MultiHeadAttentionWrapper",)),
    # Not device-safe: the mask stays on the CPU when the module moves. (is_causal=True, where PyTorch
    # builds the mask on the input's device, is correct: see the "sdpa_causal" alternative.)
    Mutant("MultiHeadAttention ignores its mask buffer and builds a CPU mask on every call", MHA,
           "mask_bool = self.mask.bool()[:num_tokens, :num_tokens]",
           "mask_bool = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)", (MHA,), named='a causal mask other than the registered buffer'),
    Mutant("MultiHeadAttention passes the float mask to masked_fill_ (no .bool())", MHA,
           "mask_bool = self.mask.bool()[:num_tokens, :num_tokens]", "mask_bool = self.mask[:num_tokens, :num_tokens]",
           (MHA,), named='not bool passed to masked_fill'),
    Mutant("MultiHeadAttention merges the heads with a view over context_length, not num_tokens", MHA,
           "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
           "context_vec = context_vec.contiguous().view(b, self.mask.shape[0], self.d_out)", (MHA,)),
    Mutant("MultiHeadAttention's mask is an nn.Parameter(requires_grad=False), not a buffer", MHA,
           "self.register_buffer(" + I8 + '    "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)'
           + I8 + ")",
           "self.mask = nn.Parameter(torch.triu(torch.ones(context_length, context_length), diagonal=1),"
           + I8 + "                         requires_grad=False)", (MHA,), named="nn.Parameter instead of a buffer"),
    Mutant("softmax over the heads (dim=1) in MultiHeadAttention", MHA,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=1)", (MHA,),
           named="softmax over the wrong dimension"),
    Mutant("MultiHeadAttention divides the scores by head_dim instead of sqrt(head_dim)", MHA,
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
           "attn_weights = torch.softmax(attn_scores / keys.shape[-1], dim=-1)", (MHA,),
           named="divided by d_k instead of sqrt(d_k)"),
    Mutant("dropout on the scores before the mask in MultiHeadAttention", MHA,
           "attn_scores = queries @ keys.transpose(2, 3)", "attn_scores = self.dropout(queries @ keys.transpose(2, 3))",
           (MHA,), named="dropout applied to the attention scores"),
    Mutant("MultiHeadAttention projects the keys with W_query (copy-paste)", MHA,
           "keys = self.W_key(x)", "keys = self.W_query(x)", (MHA,), named='projected with W_query'),
    Mutant("out_proj created before W_query in MultiHeadAttention (seeded init order)", MHA,
           "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8 + "self.out_proj = nn.Linear(d_out, d_out)",
           "self.out_proj = nn.Linear(d_out, d_out)" + I8
           + "self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)" + I8
           + "self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)", (MHA,), named="order"),
    Mutant("head_dim with true division (d_out / num_heads, a float)", MHA,
           "self.head_dim = d_out // num_heads", "self.head_dim = d_out / num_heads", (MHA,), named='a float size passed to view()'),
    Mutant("heads split as (num_tokens, head_dim, num_heads) in MultiHeadAttention", MHA,
           "keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)" + I8
           + "values = values.view(b, num_tokens, self.num_heads, self.head_dim)" + I8
           + "queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)",
           "keys = keys.view(b, num_tokens, self.head_dim, self.num_heads)" + I8
           + "values = values.view(b, num_tokens, self.head_dim, self.num_heads)" + I8
           + "queries = queries.view(b, num_tokens, self.head_dim, self.num_heads)", (MHA,)),
    # exercise 3.2 checks the heads too; the mistake is the wrapper's, charged there only
    Mutant("MultiHeadAttentionWrapper keeps its heads in a plain list, not an nn.ModuleList", MHA,
           "self.heads = nn.ModuleList(" + I8 + "    [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)"
           + I8 + "     for _ in range(num_heads)]" + I8 + ")",
           "self.heads = [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)"
           + I8 + "              for _ in range(num_heads)]", (MHA,), named='not registered as submodules'),
    Mutant("MultiHeadAttentionWrapper concatenates the heads along the batch (dim=0)", MHA,
           "return torch.cat([head(x) for head in self.heads], dim=-1)",
           "return torch.cat([head(x) for head in self.heads], dim=0)", (MHA,), named='concatenated along the batch'),
    Mutant("MultiHeadAttentionWrapper stacks the heads (torch.stack) instead of concatenating", MHA,
           "return torch.cat([head(x) for head in self.heads], dim=-1)",
           "return torch.stack([head(x) for head in self.heads], dim=-1)", (MHA,), named='the heads stacked'),
    # exercise 3.2 builds the grader's stand-in for the wrapper: what it asks for is judged, not the class
    Mutant("MultiHeadAttentionWrapper splits d_out over the heads (d_out // num_heads each)", MHA,
           "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)",
           "[CausalAttention(d_in, d_out // num_heads, context_length, dropout, qkv_bias)", (MHA,),
           named="sized with d_out // num_heads where the book uses d_out"),
    Mutant("MultiHeadAttentionWrapper splits d_out over the heads, beside a CausalAttention scaling by ** -0.5", MHA,
           "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)",
           "[CausalAttention(d_in, d_out // num_heads, context_length, dropout, qkv_bias)", (MHA,),
           named="sized with d_out // num_heads where the book uses d_out", also=((CAUSAL, "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
                  "attn_weights = torch.softmax(attn_scores * keys.shape[-1]**-0.5, dim=-1)"),)),
    Mutant("MultiHeadAttentionWrapper adds an out_proj of its own (listing 3.5 mixed in)", MHA,
           "     for _ in range(num_heads)]" + I8 + ")" + I8 + "### END SOLUTION\n\n    def forward(self, x):" + I8
           + "### BEGIN SOLUTION" + I8 + "return torch.cat([head(x) for head in self.heads], dim=-1)",
           "     for _ in range(num_heads)]" + I8 + ")" + I8 + "self.out_proj = nn.Linear(num_heads * d_out, num_heads * d_out)"
           + I8 + "### END SOLUTION\n\n    def forward(self, x):" + I8
           + "### BEGIN SOLUTION" + I8 + "return self.out_proj(torch.cat([head(x) for head in self.heads], dim=-1))",
           (MHA,), named='an out_proj added to the wrapper'),
    # Does not import: both classes are gone; exercises 3.2 and 3.3 build the grader's stand-ins.
    Mutant("multihead_attention.py imports CasualAttention (typo: ImportError on import)", MHA,
           "from causal_attention import CausalAttention", "from causal_attention import CasualAttention", (MHA,),
           named='a name the other module does not define'),

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
           "sa_v1.W_query.copy_(sa_v2.W_key.weight.T)" + I8 + "sa_v1.W_key.copy_(sa_v2.W_query.weight.T)", (EX,), named='swapped in the transfer'),
    Mutant("exercise 3.2: d_out=2 per head (4-D context vectors)", EX,
           "MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)",
           "MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=2)", (EX,)),
    Mutant("exercise 3.2: one head of d_out=2 (num_heads=1)", EX,
           "MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)",
           "MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=1)", (EX,),
           named="one head (num_heads=1) where the exercise asks for two"),
    Mutant("exercise 3.2: the dropout argument is ignored", EX,
           "MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)",
           "MultiHeadAttentionWrapper(d_in, 1, context_length, 0.0, num_heads=2)", (EX,),
           named='the dropout argument not passed on'),
    Mutant("exercise 3.3: 8 heads instead of 12", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=8)", (EX,), named='a num_heads other than'),
    Mutant("exercise 3.3: context length 768 instead of 1,024", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 768, dropout, num_heads=12)", (EX,), named='a context_length other than'),
    Mutant("exercise 3.3: d_out=64 (the head size) instead of 768", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 64, 1024, dropout, num_heads=12)", (EX,)),
    Mutant("exercise 3.3: qkv_bias=True (GPT-2's checkpoint has it, the exercise does not)", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12, qkv_bias=True)", (EX,),
           named="the class is right, the argument is not"),
    Mutant("exercise 3.3: the dropout argument is ignored", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12)", (EX,), named='no dropout in training mode'),
    Mutant("exercise 3.1: v1 left unchanged (the state_dict edited but never loaded)", EX,
           "with torch.no_grad():" + I8 + "sa_v1.W_query.copy_(sa_v2.W_query.weight.T)" + I8
           + "sa_v1.W_key.copy_(sa_v2.W_key.weight.T)" + I8 + "sa_v1.W_value.copy_(sa_v2.W_value.weight.T)",
           "state = sa_v1.state_dict()" + I4 + 'state["W_query"] = sa_v2.W_query.weight.T' + I4
           + 'state["W_key"] = sa_v2.W_key.weight.T' + I4 + 'state["W_value"] = sa_v2.W_value.weight.T', (EX,),
           named="unchanged"),
    Mutant("exercise 3.1: W_value not transferred", EX,
           "sa_v1.W_key.copy_(sa_v2.W_key.weight.T)" + I8 + "sa_v1.W_value.copy_(sa_v2.W_value.weight.T)",
           "sa_v1.W_key.copy_(sa_v2.W_key.weight.T)", (EX,), named="unchanged"),
    Mutant("exercise 3.1: plain tensors assigned to v1's parameters (TypeError)", EX,
           "sa_v1.W_query.copy_(sa_v2.W_query.weight.T)" + I8 + "sa_v1.W_key.copy_(sa_v2.W_key.weight.T)" + I8
           + "sa_v1.W_value.copy_(sa_v2.W_value.weight.T)",
           "sa_v1.W_query = sa_v2.W_query.weight.T" + I8 + "sa_v1.W_key = sa_v2.W_key.weight.T" + I8
           + "sa_v1.W_value = sa_v2.W_value.weight.T", (EX,), named='a plain tensor assigned to a parameter'),
    Mutant("exercise 3.2: a MultiHeadAttention instead of the wrapper", EX,
           "MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)",
           "MultiHeadAttention(d_in, 2, context_length, dropout, num_heads=2)", (EX,), named='a MultiHeadAttention where a MultiHeadAttentionWrapper'),
    Mutant("exercise 3.3: a wrapper of 12 heads of 64 instead of a MultiHeadAttention", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttentionWrapper(768, 64, 1024, dropout, num_heads=12)", (EX,), named='a MultiHeadAttentionWrapper where a MultiHeadAttention'),
    Mutant("exercise 3.3: 64 heads (the head size passed as num_heads)", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=64)", (EX,), named='a num_heads other than'),
    Mutant("exercise 3.3: dropout hard-coded to GPT-2's 0.1", EX,
           "MultiHeadAttention(768, 768, 1024, dropout, num_heads=12)",
           "MultiHeadAttention(768, 768, 1024, 0.1, num_heads=12)", (EX,), named='not the rate the dropout argument gives'),
]
