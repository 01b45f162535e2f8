"""What the project's tests expect of efficient_attention (the convention: DESIGN.md, "Several
assignments, one engine, one seam"; CONTRIBUTING.md, "Adding an assignment")."""
from stated import S

# tests/test_stated_requirements.py: each requirement its student docstrings state, with the
# hidden check and the public test of it
EQUALS_CH3 = ("test_hidden_efficient_mha.py::test_combined_qkv_forward", "test_hidden_efficient_mha.py::test_einsum_forward",
              "test_hidden_efficient_mha.py::test_sdpa_forward", "test_hidden_efficient_mha.py::test_pytorch_class_forward")
TRANSFERS = ("test_hidden_efficient_mha.py::test_transfers", "test_hidden_efficient_mha.py::test_transfers_as_you_call_them")
BOOK_COMPANION = "the book companion's own code"
STATED = [
    S("efficient_mha", "Every class here computes exactly what your chapter-3 ``MultiHeadAttention`` computes",
      (*EQUALS_CH3, "test_hidden_efficient_mha.py::test_dropout_in_training"),
      ("test_efficient_mha.py::test_equals_chapter_3_after_transfer", "test_efficient_mha.py::test_dropout_only_in_training")),
    S("efficient_mha", "MHAPyTorchClass's is nn.MultiheadAttention's own, not graded in training",
      free="says what is not graded: nn.MultiheadAttention draws its own dropout"),
    S("efficient_mha", "their names and shapes are", EQUALS_CH3, "test_efficient_mha.py::test_graded_structure"),
    S("efficient_mha", "copies values, as you would call it: with autograd on",
      "test_hidden_efficient_mha.py::test_transfers_as_you_call_them", "test_efficient_mha.py::test_transfer_copies_values"),
    S("efficient_mha", "Graded: ``other`` then computes what ``mha`` computes", TRANSFERS,
      ("test_efficient_mha.py::test_equals_chapter_3_after_transfer", "test_efficient_mha.py::test_transfer_copies_values")),
    S("efficient_mha.MultiHeadAttentionCombinedQKV", "Graded structure: ``qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)``",
      "test_hidden_efficient_mha.py::test_combined_qkv_forward", "test_efficient_mha.py::test_graded_structure"),
    S("efficient_mha.MultiHeadAttentionCombinedQKV", "the graded sizes include d_in != d_out",
      "test_hidden_efficient_mha.py::test_combined_qkv_forward", "test_efficient_mha.py::test_equals_chapter_3_after_transfer"),
    *[S(f"efficient_mha.{name}", "returns None", TRANSFERS, "test_efficient_mha.py::test_transfer_copies_values")
      for name in ("transfer_to_combined_qkv", "transfer_to_einsum", "transfer_to_sdpa", "transfer_to_pytorch_class")],
    *[S(f"efficient_mha.{name}", "leave ``mha`` unchanged", TRANSFERS, "test_efficient_mha.py::test_transfer_copies_values")
      for name in ("transfer_to_combined_qkv", "transfer_to_einsum", "transfer_to_pytorch_class")],
    S("efficient_mha.MHAEinsum", "Graded structure: ``W_query``, ``W_key``, ``W_value``: ``nn.Parameter``s of shape (d_in, d_out)",
      "test_hidden_efficient_mha.py::test_einsum_forward", "test_efficient_mha.py::test_graded_structure"),
    S("efficient_mha.MHAPyTorchScaledDotProduct", "``self.dropout`` holds the rate, a float; no other parameters",
      ("test_hidden_efficient_mha.py::test_sdpa_forward", "test_hidden_efficient_mha.py::test_dropout_in_training"),
      "test_efficient_mha.py::test_graded_structure"),
    S("efficient_mha.MHAPyTorchClass", "Graded structure: ``multihead_attn = nn.MultiheadAttention(",
      "test_hidden_efficient_mha.py::test_pytorch_class_forward", "test_efficient_mha.py::test_graded_structure"),
    S("grouped_query.GroupedQueryAttention", "``num_kv_groups`` must divide ``num_heads``",
      "test_hidden_grouped_query.py::test_gqa_refuses_groups_that_do_not_divide_the_heads",
      "test_grouped_query.py::test_groups_must_divide_the_heads"),
    S("grouped_query.GroupedQueryAttention", "either is accepted", accepted=BOOK_COMPANION),
    S("grouped_query.GroupedQueryAttention", "Graded structure, as chapter 3's MultiHeadAttention except for the key and value widths",
      "test_hidden_grouped_query.py::test_gqa_forward",
      ("test_grouped_query.py::test_keys_and_values_are_smaller",
       "test_grouped_query.py::test_as_many_groups_as_heads_is_multi_head_attention")),
    S("grouped_query.GroupedQueryAttention", "Their names are graded, not the order you create them in",
      "test_hidden_grouped_query.py::test_gqa_forward", "test_grouped_query.py::test_keys_and_values_are_smaller",
      accepted=BOOK_COMPANION),
    S("grouped_query.GroupedQueryAttention", "the dropout is graded in training mode",
      "test_hidden_grouped_query.py::test_gqa_forward", "test_grouped_query.py::test_dropout_only_in_training"),
    S("grouped_query.kv_cache_bytes", "The defaults are graded too",
      "test_hidden_grouped_query.py::test_kv_cache_bytes_defaults",
      "test_grouped_query.py::test_kv_cache_bytes_of_the_bonus_material"),
    S("kv_cache.MultiHeadAttention", "graded in training mode without the cache",
      "test_hidden_kv_cache.py::test_attention_dropout_in_training", "test_kv_cache.py::test_dropout_only_in_training"),
    S("kv_cache.MultiHeadAttention", "exactly chapter 3's attention over x's tokens; the cache is neither read nor changed",
      "test_hidden_kv_cache.py::test_attention_without_cache",
      "test_kv_cache.py::test_without_the_cache_it_is_chapter_3s_attention"),
    S("kv_cache.MultiHeadAttention", "gives, piece by piece, the rows of the uncached output of the whole sequence",
      "test_hidden_kv_cache.py::test_attention_cache_in_pieces",
      "test_kv_cache.py::test_attention_in_pieces_gives_the_rows_of_the_whole"),
    S("kv_cache.MultiHeadAttention", "graded: the state_dict after cached calls holds the same names as before",
      "test_hidden_kv_cache.py::test_cache_stays_out_of_the_state_dict",
      "test_kv_cache.py::test_the_cache_stays_out_of_the_state_dict"),
    S("kv_cache.TransformerBlock", "passing ``use_cache`` on to ``att``",
      "test_hidden_kv_cache.py::test_block_passes_use_cache", "test_kv_cache.py::test_the_block_passes_use_cache_on"),
    S("kv_cache.GPTModel", "Returns the logits of the tokens fed",
      "test_hidden_kv_cache.py::test_model_cache_in_pieces",
      "test_kv_cache.py::test_the_model_goes_on_from_the_positions_fed_and_resets"),
    S("kv_cache.generate_text_simple_cached", "token for token what ``generate_text_simple`` gives on the same model",
      ("test_hidden_kv_cache.py::test_generate_equals_uncached", "test_hidden_kv_cache.py::test_generate_twice"),
      "test_kv_cache.py::test_cached_generation_gives_the_same_tokens_again_and_again"),
    S("kv_cache.generate_text_simple_cached", "feed only that one token (batch, 1)",
      "test_hidden_kv_cache.py::test_generate_feeds_one_token_per_step",
      "test_kv_cache.py::test_after_the_prompt_each_step_feeds_one_token"),
    S("rope.compute_rope_params", "An odd head_dim raises an error",
      "test_hidden_rope.py::test_compute_rope_params", "test_rope.py::test_rope_params_defaults_and_odd_head_dim",
      accepted=BOOK_COMPANION),
    S("rope.apply_rope", "Returns a tensor of x's shape and dtype (graded on a bfloat16 x too",
      "test_hidden_rope.py::test_apply_rope_keeps_the_dtype", "test_rope.py::test_apply_rope_keeps_the_dtype"),
    S("rope.MultiHeadAttentionRoPE", "(context_length rows each, not the default 4096); no other parameters",
      "test_hidden_rope.py::test_rope_attention_buffers", "test_rope.py::test_rope_attention"),
    S("rope.MultiHeadAttentionRoPE", "with the dropout on the attention weights (graded in training mode",
      "test_hidden_rope.py::test_rope_attention", "test_rope.py::test_rope_attention_dropout_only_in_training"),
    S("sliding_window.sliding_window_mask", "A window below 1 raises ValueError",
      "test_hidden_sliding_window.py::test_sliding_window_mask", "test_sliding_window.py::test_a_window_below_one_is_refused"),
    S("sliding_window.SlidingWindowAttention", "``dropout = nn.Dropout(dropout)``, no other parameters",
      "test_hidden_sliding_window.py::test_sliding_window_forward",
      ("test_sliding_window.py::test_tokens_outside_the_window_change_nothing",
       "test_sliding_window.py::test_long_window_equals_chapter_3")),
    S("sliding_window.SlidingWindowAttention", "The bound is graded by memory",
      "test_hidden_sliding_window.py::test_sliding_window_cache",
      "test_sliding_window.py::test_the_cache_stops_growing_at_the_window"),
]

# tests/test_nbgrader_release.py: what the master notebook prints from the reference (the book's values)
BOOK_VALUES = [
    "MultiHeadAttentionCombinedQKV  largest difference",
    "MHAPyTorchClass                largest difference",
    "Same as chapter 3: True",
    "Cached equals uncached: True",                                   # GPT-2 small, 30 new tokens
    "MHA total KV cache: 17.18 GB",                                   # the bonus material's figures
    "GQA total KV cache: 4.29 GB",
    "One group per head is multi-head attention: True",
    "A window as long as the context is causal attention: True",
    "query at 40, key at 37 (distance 3): score 2.5151",              # RoPE: only m - n counts
    "query at  5, key at  2 (distance 3): score 2.5151",
    "Length before: 3.1241, after a rotation to position 37: 3.1241",
]

# tests/test_public_tests.py: one wrong line in the reference that a public test catches with a
# value: (module, the line, the wrong one, what the student must read)
WRONG = ("rope.py", "1.0 / theta_base **", "2.0 / theta_base **", "yours differ from the book's")
