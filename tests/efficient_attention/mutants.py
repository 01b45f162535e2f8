"""A bank of buggy variants of the efficient-attention reference (see tests/banks.py).

Two lists, kept apart so that the parts can be written side by side; MUTANTS is their sum."""
from banks import Mutant


# efficient_mha, grouped_query, sliding_window, rope
MHA, GQA, SWA, ROPE = "efficient_mha", "grouped_query", "sliding_window", "rope"
COMBINED_SPLIT = ("qkv = self.qkv(x).view(b, num_tokens, 3, self.num_heads, self.head_dim)\n"
                  "        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)\n\n        attn_scores")
SDPA_CALL = "queries, keys, values, attn_mask=None, dropout_p=self.dropout if self.training else 0.0, is_causal=True)"
SWA_TRIM = "self.cache_k, self.cache_v = keys[:, :, -self.window:], values[:, :, -self.window:]"
# the sliding-window checks that run without the cache
SWA_UNCACHED = ("sliding_window_mask(", "each query seeing the last window tokens", "window >= num_tokens")
STACK = "combined.qkv.weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))"

MUTANTS_ATTENTION = [
    # ------------------------------------------------------------- efficient multi-head attention
    Mutant("combined qkv unpacked as keys, queries, values", MHA, COMBINED_SPLIT,
           COMBINED_SPLIT.replace("queries, keys, values =", "keys, queries, values ="), (MHA,),
           named="queries and keys swapped"),
    Mutant("combined qkv unpacked as queries, values, keys", MHA, COMBINED_SPLIT,
           COMBINED_SPLIT.replace("queries, keys, values =", "queries, values, keys ="), (MHA,),
           named="keys and values swapped"),
    Mutant("combined qkv viewed with the heads before the 3", MHA, COMBINED_SPLIT,
           "qkv = self.qkv(x).view(b, num_tokens, self.num_heads, 3, self.head_dim)\n"
           "        queries, keys, values = qkv.permute(3, 0, 2, 1, 4)\n\n        attn_scores", (MHA,),
           named="the heads split before queries, keys and values"),
    Mutant("combined attention without the causal mask", MHA,
           "attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], -torch.inf)\n"
           "        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)\n"
           "        attn_weights = self.dropout(attn_weights)",
           "attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)\n"
           "        attn_weights = self.dropout(attn_weights)", (MHA,), named="no causal mask"),
    Mutant("combined attention merges the heads without the transpose", MHA,
           "context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)",
           "context_vec = (attn_weights @ values).reshape(b, num_tokens, self.d_out)", (MHA,),
           named="merged without moving them back"),
    Mutant("combined attention scaled by sqrt(d_out)", MHA,
           "attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)\n        attn_weights = self.dropout",
           "attn_weights = torch.softmax(attn_scores / self.d_out**0.5, dim=-1)\n        attn_weights = self.dropout",
           (MHA,), named="sqrt(d_out)"),
    Mutant("combined attention with F.dropout always on", MHA,
           "attn_weights = self.dropout(attn_weights)\n\n        context_vec = (attn_weights @ values).transpose",
           "attn_weights = F.dropout(attn_weights, self.dropout.p)\n\n        context_vec = (attn_weights @ values)"
           ".transpose", (MHA,), named="dropout applied in eval mode"),
    Mutant("einsum attention without the scaling", MHA,
           "attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))",
           "attn_weights = self.dropout(torch.softmax(attn_scores, dim=-1))", (MHA,), named="not scaled"),
    Mutant("einsum projections over the wrong index of W", MHA,
           'queries = torch.einsum("bnd,de->bne", x, self.W_query)\n'
           '        keys = torch.einsum("bnd,de->bne", x, self.W_key)\n'
           '        values = torch.einsum("bnd,de->bne", x, self.W_value)',
           'queries = torch.einsum("bnd,ed->bne", x, self.W_query)\n'
           '        keys = torch.einsum("bnd,ed->bne", x, self.W_key)\n'
           '        values = torch.einsum("bnd,ed->bne", x, self.W_value)', (MHA,), named="used as nn.Linear weights"),
    Mutant("einsum attention with the mask inverted", MHA,
           "attn_scores = attn_scores.masked_fill(self.mask[:n, :n], -torch.inf)",
           "attn_scores = attn_scores.masked_fill(~self.mask[:n, :n], -torch.inf)", (MHA,), named="mask inverted"),
    Mutant("SDPA given chapter 3's mask as attn_mask", MHA,
           SDPA_CALL, "queries, keys, values, attn_mask=torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool),"
           " diagonal=1),\n            dropout_p=self.dropout if self.training else 0.0)", (MHA,),
           named="SDPA's boolean attn_mask is True where a query MAY attend"),
    Mutant("SDPA without is_causal", MHA, SDPA_CALL,
           "queries, keys, values, attn_mask=None, dropout_p=self.dropout if self.training else 0.0)", (MHA,),
           named="is_causal=True forgotten"),
    Mutant("SDPA with dropout in eval mode", MHA, SDPA_CALL,
           "queries, keys, values, attn_mask=None, dropout_p=self.dropout, is_causal=True)", (MHA,),
           named="dropout_p used in eval mode"),
    Mutant("SDPA without dropout in training", MHA, SDPA_CALL,
           "queries, keys, values, attn_mask=None, dropout_p=0.0, is_causal=True)", (MHA,),
           named="no dropout in training mode"),
    Mutant("nn.MultiheadAttention given the mask of allowed positions", MHA,
           "attn_mask = self.mask[:num_tokens, :num_tokens]", "attn_mask = ~self.mask[:num_tokens, :num_tokens]",
           (MHA,), named="nn.MultiheadAttention's boolean attn_mask is True where a query may NOT attend"),
    Mutant("nn.MultiheadAttention called without the mask", MHA,
           "self.multihead_attn(x, x, x, attn_mask=attn_mask, need_weights=False)",
           "self.multihead_attn(x, x, x, need_weights=False)", (MHA,), named="no attn_mask given"),
    Mutant("transfer stacks keys before queries", MHA, STACK,
           "combined.qkv.weight.copy_(torch.cat([mha.W_key.weight, mha.W_query.weight, mha.W_value.weight]))",
           (MHA,), named="W_query and W_key stacked in the wrong order"),
    Mutant("einsum transfer forgets the transpose", MHA,
           'getattr(einsum, f"W_{mine}").copy_(linear.weight.T)',
           'getattr(einsum, f"W_{mine}").copy_(linear.weight.view_as(getattr(einsum, f"W_{mine}")))', (MHA,),
           named="copied without the transpose"),
    Mutant("nn.MultiheadAttention transfer copies out_proj twice", MHA,
           "attn.out_proj.weight.copy_(torch.eye(attn.embed_dim))\n        if attn.out_proj.bias is not None:\n"
           "            attn.out_proj.bias.zero_()",
           "attn.out_proj.load_state_dict(mha.out_proj.state_dict(), strict=False)", (MHA,),
           named="copied into both multihead_attn.out_proj and proj"),
    # issue 36: stated, now graded; the bonus notebook's own merge (view(b, num_tokens, embed_dim), x's width)
    Mutant("transfer copies into the parameters without torch.no_grad()", MHA,
           "    with torch.no_grad():\n        " + STACK + "\n        if combined.qkv.bias is not None:\n"
           "            combined.qkv.bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))\n"
           "        combined.proj.load_state_dict",
           "    " + STACK + "\n    if combined.qkv.bias is not None:\n"
           "        combined.qkv.bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))\n"
           "    combined.proj.load_state_dict", (MHA,), named="changed in place with autograd on",
           keeps=("so that the class computes the same",)),
    Mutant("transfer hands the chapter-3 out_proj itself to the combined class", MHA,
           "combined.proj.load_state_dict(mha.out_proj.state_dict())", "combined.proj = mha.out_proj", (MHA,),
           named="sharing memory", keeps=("so that the class computes the same",)),
    Mutant("einsum transfer sets .data to the transposed weights without a copy", MHA,
           'getattr(einsum, f"W_{mine}").copy_(linear.weight.T)', 'getattr(einsum, f"W_{mine}").data = linear.weight.T',
           (MHA,), named="sharing memory", keeps=("so that the class computes the same",)),
    Mutant("transfer returns the module it filled", MHA,
           "        combined.proj.load_state_dict(mha.out_proj.state_dict())\n",
           "        combined.proj.load_state_dict(mha.out_proj.state_dict())\n    return combined\n", (MHA,),
           named="returns something", keeps=("so that the class computes the same",)),
    Mutant("combined attention merges the heads into x's width (the bonus notebook's view(b, num_tokens, embed_dim))",
           MHA, COMBINED_SPLIT + " = queries @ keys.transpose(-2, -1)",
           "qkv = self.qkv(x).view(b, num_tokens, 3, self.num_heads, self.head_dim)\n"
           "        qkv = qkv.permute(2, 0, 3, 1, 4)\n        queries, keys, values = qkv\n        embed_dim = x.shape[-1]"
           "\n\n        attn_scores = queries @ keys.transpose(-2, -1)", (MHA,),
           also=((MHA, "context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)\n"
                       "        return self.proj(context_vec)\n        ### END SOLUTION\n\n\ndef transfer_to_combined_qkv",
                  "context_vec = (attn_weights @ values).transpose(1, 2)\n"
                  "        context_vec = context_vec.contiguous().view(b, num_tokens, embed_dim)\n"
                  "        return self.proj(context_vec)\n        ### END SOLUTION\n\n\ndef transfer_to_combined_qkv"),),
           says=("In the book's code, `context_vec` (what this line makes) has shape (2, 7, 8)",
                 "your line asks for (2, 7, 6): size 6 in dimension 2, where the book's is 8")),
    # ------------------------------------------------------------- grouped-query attention
    Mutant("GQA with repeat instead of repeat_interleave", GQA,
           "keys = keys.repeat_interleave(self.group_size, dim=1)\n"
           "        values = values.repeat_interleave(self.group_size, dim=1)",
           "keys = keys.repeat(1, self.group_size, 1, 1)\n        values = values.repeat(1, self.group_size, 1, 1)",
           (GQA,), named="repeated with repeat", keeps=("num_kv_groups == num_heads", "must divide", "kv_cache_bytes(")),
    Mutant("GQA accepts groups that do not divide the heads", GQA,
           'if num_heads % num_kv_groups != 0:\n            raise ValueError("num_kv_groups must divide num_heads")',
           "pass", (GQA,), keeps=("shared by", "num_kv_groups == num_heads", "kv_cache_bytes("),
           named="no check that num_kv_groups divides num_heads"),
    Mutant("GQA without the causal mask", GQA,
           "attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], -torch.inf)\n"
           "        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))\n\n"
           "        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)\n"
           "        return self.out_proj(context_vec)\n        ### END SOLUTION\n\n\ndef kv_cache_bytes",
           "attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))\n\n"
           "        context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)\n"
           "        return self.out_proj(context_vec)\n        ### END SOLUTION\n\n\ndef kv_cache_bytes",
           (GQA,), named="no causal mask"),
    Mutant("GQA scales by sqrt(d_out)", GQA,
           "torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))\n\n        context_vec = (attn_weights @ values)"
           ".transpose(1, 2).reshape(b, num_tokens, self.d_out)\n        return self.out_proj(context_vec)\n"
           "        ### END SOLUTION\n\n\ndef kv_cache_bytes",
           "torch.softmax(attn_scores / self.d_out**0.5, dim=-1))\n\n        context_vec = (attn_weights @ values)"
           ".transpose(1, 2).reshape(b, num_tokens, self.d_out)\n        return self.out_proj(context_vec)\n"
           "        ### END SOLUTION\n\n\ndef kv_cache_bytes", (GQA,), named="sqrt(d_out)",
           keeps=("must divide", "kv_cache_bytes(")),
    Mutant("KV-cache size without the values", GQA, "per_token = 2 * kv_heads * head_dim",
           "per_token = kv_heads * head_dim", (GQA,), named="only the keys counted",
           keeps=("shared by", "num_kv_groups == num_heads", "must divide")),
    Mutant("KV-cache size counts every head", GQA, 'kv_heads = cfg.get("n_kv_groups", cfg["n_heads"])',
           'kv_heads = cfg["n_heads"]', (GQA,), named="n_heads key/value heads counted"),
    Mutant("KV-cache size takes the group size for the heads", GQA,
           'kv_heads = cfg.get("n_kv_groups", cfg["n_heads"])',
           'kv_heads = cfg["n_heads"] // cfg.get("n_kv_groups", 1) if "n_kv_groups" in cfg else cfg["n_heads"]',
           (GQA,), named="the group size"),
    Mutant("KV-cache size of one layer", GQA,
           'return batch_size * cfg["context_length"] * cfg["n_layers"] * per_token * bytes_per_elem',
           'return batch_size * cfg["context_length"] * per_token * bytes_per_elem', (GQA,), named="one layer counted"),
    Mutant("KV-cache size as a float in GB", GQA,
           'return batch_size * cfg["context_length"] * cfg["n_layers"] * per_token * bytes_per_elem',
           'return batch_size * cfg["context_length"] * cfg["n_layers"] * per_token * bytes_per_elem / 1e9', (GQA,),
           named="the size in gigabytes", says=("gave 17.179869184, expected the int 17,179,869,184",)),
    Mutant("KV-cache size defaults to 4 bytes per element", GQA, "def kv_cache_bytes(cfg, batch_size=1, bytes_per_elem=2):",
           "def kv_cache_bytes(cfg, batch_size=1, bytes_per_elem=4):", (GQA,), named="bytes_per_elem defaulting to 4",
           keeps=("shared by", "num_kv_groups == num_heads", "must divide", "2 * batch * context")),
    # ------------------------------------------------------------- sliding-window attention
    Mutant("sliding window one token too long", SWA, "torch.tril(ones, diagonal=-window)",
           "torch.tril(ones, diagonal=-window - 1)", (SWA,), named="one token too long"),
    Mutant("sliding window one token too short", SWA, "torch.tril(ones, diagonal=-window)",
           "torch.tril(ones, diagonal=-window + 1)", (SWA,), named="one token too short"),
    Mutant("sliding window open both ways", SWA, "return future | too_far",
           "return too_far | torch.triu(ones, diagonal=window)", (SWA,), named="later tokens seen too"),
    Mutant("sliding window without the causal part", SWA, "return future | too_far", "return too_far", (SWA,),
           named="later tokens seen too"),
    Mutant("sliding window mask not used by the class", SWA,
           'self.register_buffer("mask", sliding_window_mask(context_length, window))',
           'self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())',
           (SWA,), named="no window", keeps=("sliding_window_mask(", "window >= num_tokens")),
    Mutant("sliding window mask inverted in the class", SWA,
           "masked_fill(mask, -torch.inf)", "masked_fill(~mask, -torch.inf)", (SWA,),
           keeps=("sliding_window_mask(",)),
    Mutant("sliding-window cache not trimmed", SWA, SWA_TRIM, "self.cache_k, self.cache_v = keys, values", (SWA,),
           named="the cache not trimmed", keeps=SWA_UNCACHED),
    Mutant("sliding-window cache keeps window + 1 positions", SWA, SWA_TRIM,
           SWA_TRIM.replace("-self.window:", "-self.window - 1:"), (SWA,), named="one position too long",
           keeps=SWA_UNCACHED),
    Mutant("sliding-window cache keeps window - 2 positions", SWA, SWA_TRIM,
           SWA_TRIM.replace("-self.window:", "-self.window + 2:"), (SWA,), named="one position too short",
           keeps=SWA_UNCACHED),
    Mutant("sliding-window cache trimmed before attending", SWA, SWA_TRIM,
           "keys, values = keys[:, :, -self.window:], values[:, :, -self.window:]\n"
           "            self.cache_k, self.cache_v = keys, values", (SWA,), named="before attending",
           keeps=SWA_UNCACHED),
    Mutant("sliding-window mask columns not offset by the cache", SWA,
           "mask = self.mask[start:start + n, first:start + n]", "mask = self.mask[start:start + n, :keys.shape[2]]",
           (SWA,), named="the mask not offset by the cache", keeps=SWA_UNCACHED),
    Mutant("sliding-window mask rows from 0 with the cache", SWA,
           "mask = self.mask[start:start + n, first:start + n]", "mask = self.mask[:n, :keys.shape[2]]",
           (SWA,), named="rows not the new tokens' positions", keeps=SWA_UNCACHED),
    Mutant("sliding-window reset_cache keeps the position", SWA,
           "self.cache_k, self.cache_v = None, None\n        self.ptr_current_pos = 0",
           "self.cache_k, self.cache_v = None, None", (SWA,), keeps=SWA_UNCACHED),
    # the cheats of issue 35: cache_k and cache_v (what a grader could read) cut to the window, every key and
    # value kept elsewhere; the kernel's memory limit on a long sequence catches them, not the buffers' size
    Mutant("sliding-window cache kept whole in lists, only cache_k and cache_v cut to the window", SWA,
           "if self.cache_k is not None:\n"
           "                keys = torch.cat([self.cache_k, keys], dim=2)\n"
           "                values = torch.cat([self.cache_v, values], dim=2)",
           "self.kept_k = getattr(self, 'kept_k', []) + [keys]  # every key and value of the sequence\n"
           "            self.kept_v = getattr(self, 'kept_v', []) + [values]\n"
           "            keys, values = torch.cat(self.kept_k, dim=2), torch.cat(self.kept_v, dim=2)", (SWA,),
           named="the cache not trimmed", keeps=SWA_UNCACHED,
           also=((SWA, "self.cache_k, self.cache_v = None, None\n        self.ptr_current_pos = 0",
                  "self.cache_k, self.cache_v = None, None\n        self.ptr_current_pos = 0\n"
                  "        self.kept_k, self.kept_v = [], []"),)),
    Mutant("sliding-window cache trimmed, every key and value also kept in a list never read", SWA, SWA_TRIM,
           SWA_TRIM + "\n            self.history.append((keys[:, :, -n:].clone(), values[:, :, -n:].clone()))",
           (SWA,), named="the cache not trimmed", keeps=SWA_UNCACHED,
           also=((SWA, "self.ptr_current_pos = 0  # the position in the sequence of the next token fed",
                  "self.ptr_current_pos = 0  # the position in the sequence of the next token fed\n"
                  "        self.history = []"),)),
    Mutant("sliding-window cache in persistent buffers", SWA,
           'self.register_buffer("cache_k", None, persistent=False)\n'
           '        self.register_buffer("cache_v", None, persistent=False)',
           'self.register_buffer("cache_k", None)\n        self.register_buffer("cache_v", None)', (SWA,),
           named="the cache in persistent buffers", keeps=SWA_UNCACHED),
    # ------------------------------------------------------------- RoPE
    Mutant("RoPE angles interleaved", ROPE, "angles = torch.cat([angles, angles], dim=1)",
           "angles = angles.repeat_interleave(2, dim=1)", (ROPE,), named="the angles interleaved",
           keeps=("apply_rope", "keeps every vector")),
    Mutant("RoPE exponent in steps of one", ROPE,
           "torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)",
           "torch.arange(head_dim // 2, dtype=torch.float32) / head_dim)", (ROPE,),
           named="the exponent over head_dim // 2 steps", keeps=("apply_rope", "keeps every vector")),
    Mutant("RoPE positions from 1", ROPE, "positions = torch.arange(context_length, dtype=torch.float32)",
           "positions = torch.arange(1, context_length + 1, dtype=torch.float32)", (ROPE,),
           named="positions counted from 1", keeps=("apply_rope", "keeps every vector", "MultiHeadAttentionRoPE")),
    Mutant("RoPE cos and sin swapped", ROPE, "return torch.cos(angles), torch.sin(angles)",
           "return torch.sin(angles), torch.cos(angles)", (ROPE,), named="cos and sin swapped",
           keeps=("apply_rope", "keeps every vector")),
    Mutant("RoPE halves rotated the wrong way", ROPE, "rotated = torch.cat((-x2, x1), dim=-1)",
           "rotated = torch.cat((x2, -x1), dim=-1)", (ROPE,), named="rotated the wrong way",
           keeps=("compute_rope_params(",)),
    Mutant("RoPE on interleaved pairs", ROPE,
           "x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2:]\n    rotated = torch.cat((-x2, x1), dim=-1)",
           "x1, x2 = x[..., 0::2], x[..., 1::2]\n    rotated = torch.stack((-x2, x1), dim=-1).flatten(-2)", (ROPE,),
           named="interleaved pairs rotated", keeps=("compute_rope_params(",)),
    Mutant("RoPE positions not offset", ROPE,
           "cos, sin = cos[offset:offset + num_tokens], sin[offset:offset + num_tokens]",
           "cos, sin = cos[:num_tokens], sin[:num_tokens]", (ROPE,), named="positions not offset",
           keeps=("compute_rope_params(", "MultiHeadAttentionRoPE")),
    Mutant("RoPE adds instead of rotating", ROPE, "return (x * cos + rotated * sin).to(x.dtype)",
           "return (x + rotated * sin).to(x.dtype)", (ROPE,), keeps=("compute_rope_params(",),
           named="x added instead of x * cos"),
    Mutant("RoPE attention rotates the queries only", ROPE,
           "        keys = apply_rope(keys, self.cos, self.sin)\n", "", (ROPE,), named="RoPE on the queries only",
           keeps=("compute_rope_params(", "apply_rope", "keeps every vector")),
    Mutant("RoPE attention rotates the values too", ROPE,
           "        keys = apply_rope(keys, self.cos, self.sin)\n",
           "        keys = apply_rope(keys, self.cos, self.sin)\n        values = apply_rope(values, self.cos, self.sin)\n",
           (ROPE,), named="RoPE on the values too", keeps=("compute_rope_params(", "apply_rope", "keeps every vector")),
    Mutant("RoPE attention without dropout", ROPE,
           "attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))",
           "attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)", (ROPE,),
           named="no dropout on the attention weights in training mode",
           keeps=("compute_rope_params(", "apply_rope", "keeps every vector", "are buffers")),
    Mutant("RoPE tables of the default 4096 rows in the attention", ROPE,
           "cos, sin = compute_rope_params(self.head_dim, theta_base, context_length)",
           "cos, sin = compute_rope_params(self.head_dim, theta_base)", (ROPE,), named="the default 4096 rows",
           keeps=("compute_rope_params(", "apply_rope", "keeps every vector", "MultiHeadAttentionRoPE:")),
    Mutant("apply_rope returns float32 for a bfloat16 x", ROPE, "return (x * cos + rotated * sin).to(x.dtype)",
           "return x * cos + rotated * sin", (ROPE,), named="left in float32",
           keeps=("compute_rope_params(", "with rows offset", "keeps every vector", "MultiHeadAttentionRoPE:",
                  "are buffers", "the whole's last rows")),
]


# ----------------------------------------------------------------------------------------------
# (space between the two lists, so that each grows without touching the other)
#
#
#
#
#
#
#
#
# ----------------------------------------------------------------------------------------------


# kv_cache
KV = "kv_cache"
I8, I12 = "\n        ", "\n            "
CAT_K = "self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)"
MASK = "mask_bool = self.mask.bool()[start:start + num_tokens, :num_tokens_k]"
PTR = "self.ptr_current_pos += num_tokens"
POS_IDS = "pos_ids = torch.arange(self.current_pos, self.current_pos + seq_len, device=in_idx.device)"
POS_STEP = "self.current_pos += seq_len"
RESET_ATT = "self.cache_k, self.cache_v = None, None" + I8 + "self.ptr_current_pos = 0"
RESET_GPT = "for block in self.trf_blocks:" + I12 + "block.att.reset_cache()" + I8 + "self.current_pos = 0"
GEN_RESET = "model.reset_kv_cache()" + I8 + "logits = model(idx, use_cache=True)"
GEN_FEED = "logits = model(next_idx, use_cache=True)"
# fragments of the kv_cache checks' names (for ``keeps``)
WITHOUT, PIECES, BLOCK, MODEL = "chapter 3's MultiHeadAttention", "reset_cache() starts", "TransformerBlock(", "GPTModel("
EQUAL, TWICE, ONE, SD = "token for token", "a second call", "one new token", "state_dict"
MUTANTS_KV_CACHE = [
    # told what happened, not "the cache not used": the same four tokens without the uncached call work
    Mutant("an uncached call empties the cache", KV, "            keys, values = keys_new, values_new\n",
           "            keys, values = keys_new, values_new\n            self.cache_k, self.cache_v = None, None\n",
           (KV,), named="the cache emptied by the uncached call"),
    Mutant("the mask not offset by the cache length", KV, MASK,
           "mask_bool = self.mask.bool()[:num_tokens, :num_tokens_k]", (KV,), named="the mask not offset"),
    Mutant("the mask's position advanced by one per call", KV, PTR, "self.ptr_current_pos += 1", (KV,),
           named="the mask's position advanced by one"),
    Mutant("the mask's position never advanced", KV, PTR, "pass", (KV,), named="the mask not offset"),
    Mutant("the cache concatenated on the heads' dimension", KV, CAT_K,
           "self.cache_k = torch.cat([self.cache_k, keys_new], dim=2)", (KV,), named="the wrong dimension"),
    Mutant("the cache concatenated on the batch dimension", KV,
           "self.cache_v = torch.cat([self.cache_v, values_new], dim=1)",
           "self.cache_v = torch.cat([self.cache_v, values_new], dim=0)", (KV,), named="the wrong dimension"),
    Mutant("the new keys appended to the values' cache", KV,
           "self.cache_v = torch.cat([self.cache_v, values_new], dim=1)",
           "self.cache_v = torch.cat([self.cache_v, keys_new], dim=1)", (KV,), named="the new keys appended",
           keeps=(SD,)),
    Mutant("the cached keys split into heads the wrong way", KV,
           "keys_new = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim)",
           "keys_new = self.W_key(x)",
           (KV,), named="split into heads the wrong way",
           also=((KV, "keys, values = self.cache_k, self.cache_v" + I8 + "else:" + I12
                  + "keys, values = keys_new, values_new",
                  "keys = self.cache_k.view(b, self.num_heads, -1, self.head_dim).transpose(1, 2)" + I12
                  + "values = self.cache_v" + I8 + "else:" + I12
                  + "keys = keys_new.view(b, num_tokens, self.num_heads, self.head_dim)" + I12
                  + "values = values_new"),)),
    Mutant("the cache never used (use_cache ignored by the attention)", KV,
           "keys, values = self.cache_k, self.cache_v", "keys, values = keys_new, values_new", (KV,),
           named="the cache not used"),  # no cache: none to keep out of the state_dict either
    Mutant("use_cache not passed on to the attention by the block", KV,
           "x = self.att(x, use_cache=use_cache)", "x = self.att(x)", (KV,), named="the cache not used",
           keeps=(WITHOUT, PIECES,)),
    Mutant("use_cache not passed on to the blocks by the model", KV,
           "x = block(x, use_cache=use_cache)", "x = block(x)", (KV,), named="the cache not used",
           keeps=(WITHOUT, PIECES, BLOCK)),
    Mutant("the positions restarting at 0 at every call", KV, POS_IDS,
           "pos_ids = torch.arange(seq_len, device=in_idx.device)", (KV,), named="the positions restarting at 0",
           keeps=(WITHOUT, PIECES, BLOCK, SD)),
    Mutant("current_pos advanced by one per call", KV, POS_STEP, "self.current_pos += 1", (KV,),
           named="current_pos advanced by one", keeps=(WITHOUT, PIECES, BLOCK, SD)),
    Mutant("the cache not reset between generations", KV, GEN_RESET, "logits = model(idx, use_cache=True)", (KV,),
           named="the cache not reset between calls", keeps=(WITHOUT, PIECES, BLOCK, MODEL, SD)),
    Mutant("reset_kv_cache not resetting current_pos", KV, RESET_GPT,
           "for block in self.trf_blocks:" + I12 + "block.att.reset_cache()", (KV,),
           named="not resetting current_pos", keeps=(WITHOUT, PIECES, BLOCK, SD)),
    Mutant("reset_cache not resetting the mask's position", KV, RESET_ATT,
           "self.cache_k, self.cache_v = None, None", (KV,), named="the mask's position (ptr_current_pos)",
           keeps=(WITHOUT, SD)),
    Mutant("reset_cache keeping the keys and values", KV, RESET_ATT, "self.ptr_current_pos = 0", (KV,),
           named="keeping the cached keys and values", keeps=(WITHOUT, SD)),
    Mutant("reset_kv_cache resetting only the first block", KV, RESET_GPT,
           "self.trf_blocks[0].att.reset_cache()" + I8 + "self.current_pos = 0", (KV,),
           named="only the first block", keeps=(WITHOUT, PIECES, BLOCK, SD)),
    Mutant("the whole sequence fed at every step (no cache used)", KV, GEN_FEED,
           "logits = model(idx, use_cache=False)", (KV,), named="the whole sequence fed at every step",
           keeps=(WITHOUT, PIECES, BLOCK, MODEL, SD)),  # no cache in generation: every generation check's witness
    Mutant("the whole sequence fed with use_cache=True at every step", KV, GEN_FEED,
           "logits = model(idx, use_cache=True)", (KV,),  # the positions run past context_length: an IndexError
           keeps=(WITHOUT, PIECES, BLOCK, MODEL, SD)),
    Mutant("the cache in persistent buffers", KV,
           'self.register_buffer("cache_k", None, persistent=False)',
           'self.register_buffer("cache_k", None, persistent=True)', (KV,), named="the cache in persistent buffers",
           keeps=(WITHOUT, PIECES, BLOCK, MODEL, EQUAL, TWICE, ONE)),
    Mutant("the prompt's last position ignored: argmax of the first position", KV,
           "next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)",
           "next_idx = logits[:, 0].argmax(dim=-1, keepdim=True)", (KV,),
           keeps=(WITHOUT, PIECES, BLOCK, MODEL, SD), named="the first position's logits",
           says=("token 3: is [6, 26], chapter 4's generate_text_simple gives [6, 6] there",)),
    Mutant("scaled_dot_product_attention(is_causal=True) with the cache", KV,
           MASK + I8 + "attn_scores.masked_fill_(mask_bool, -torch.inf)" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)" + I8
           + "attn_weights = self.dropout(attn_weights)" + "\n" + I8
           + "context_vec = (attn_weights @ values).transpose(1, 2)",
           "context_vec = torch.nn.functional.scaled_dot_product_attention(" + I8
           + "    queries, keys, values, is_causal=True, dropout_p=self.dropout.p if self.training else 0.0"
           ").transpose(1, 2)  # its mask is aligned top-left", (KV,),
           named="the mask not offset", keeps=(SD,)),
    Mutant("the attention's uncached mask kept at the cache's offset", KV,
           "start = 0", "start = self.ptr_current_pos", (KV,),
           keeps=(PIECES, BLOCK, EQUAL, TWICE, ONE, SD)),
    Mutant("the cached attention without dropout", KV, "attn_weights = self.dropout(attn_weights)",
           "attn_weights = attn_weights", (KV,), named="no dropout on the attention weights in training mode",
           keeps=(WITHOUT, PIECES, BLOCK, MODEL, EQUAL, TWICE, ONE, SD)),
]


MUTANTS = MUTANTS_ATTENTION + MUTANTS_KV_CACHE
