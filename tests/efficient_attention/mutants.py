"""A bank of buggy variants of the efficient-attention reference (see tests/banks.py).

Two lists, kept apart so that the parts can be written side by side; MUTANTS is their sum."""
from banks import Mutant  # noqa: F401


# efficient_mha, grouped_query, sliding_window, rope
MUTANTS_ATTENTION = [
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
           named="the cache not used", keeps=(SD,)),
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
           keeps=(WITHOUT, PIECES, BLOCK, MODEL, EQUAL, TWICE, SD)),
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
           keeps=(WITHOUT, PIECES, BLOCK, MODEL, SD)),
    Mutant("scaled_dot_product_attention(is_causal=True) with the cache", KV,
           MASK + I8 + "attn_scores.masked_fill_(mask_bool, -torch.inf)" + I8
           + "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)" + I8
           + "attn_weights = self.dropout(attn_weights)" + "\n" + I8
           + "context_vec = (attn_weights @ values).transpose(1, 2)",
           "context_vec = torch.nn.functional.scaled_dot_product_attention(" + I8
           + "    queries, keys, values, is_causal=True).transpose(1, 2)  # its mask is aligned top-left", (KV,),
           named="the mask not offset", keeps=(SD,)),
    Mutant("the attention's uncached mask kept at the cache's offset", KV,
           "start = 0", "start = self.ptr_current_pos", (KV,),
           keeps=(PIECES, BLOCK, EQUAL, TWICE, ONE, SD)),
]


MUTANTS = MUTANTS_ATTENTION + MUTANTS_KV_CACHE
