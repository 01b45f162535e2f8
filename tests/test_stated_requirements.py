"""Every requirement a student docstring states is graded and publicly tested (DESIGN.md, "fair
before strict": public green means no structural surprise).

``STATED`` lists, per assignment, what the student docstrings state: a phrase of the docstring
of one item (``module``, ``module.Name`` or ``module.Class.method``), with
- ``hidden``: the hidden checks that grade it (``test_hidden_<part>.py::test_name``), and
- ``public``: the public tests that exercise it (``test_<part>.py::test_name``, copied to students);
or, for a promise that a way of writing it is accepted, ``accepted``: names of the alternatives
(``tests/<assignment>/alternatives.py``) written that way, which tests/test_alternatives.py grades
at full marks and tests/test_public_tests.py runs the public tests on; or ``free``: why a
sentence that the rule picks states nothing to check (it says what is left free). A ``gap`` is a
stated requirement that one side does not check yet: it names the side and stays listed, in
plain sight, until that side checks it.

The test fails where
- a listed phrase is no longer in its item's docstring (the docstring changed: update the list),
- a named hidden check, public test or alternative does not exist,
- an entry names neither both sides, nor an acceptance, nor a reason (``free`` or ``gap``),
- a requirement sentence of a student docstring (tests/stated.py's rule: a sentence with
  ``must``, ``graded``, ``raise(s)``, ``return(s)``, ``accepted``, ``exactly``, ``unchanged`` or
  ``no other``) holds no listed phrase: a new requirement, written without saying what checks it,
- an assignment of the course has no list.
The list is what the project claims; which check really grades what is proved by the banks
(a mutant of each graded requirement loses points in its part: tests/test_mutants.py).
"""
import pytest

from autograder.grading import course
from banks import TESTS, load, load_path
from stated import (REQUIREMENT, S, assignment_docstrings, requirement_sentences, sentences, squash,
                    student_docstrings, collected_tests)


# ------------------------------------------------------------------------------------ chapter 2
CH02 = [
    S("simple_tokenizer.SimpleTokenizerV1", "returns each token's id",
      "test_hidden_simple_tokenizer.py::test_simple_tokenizer_v1_encode",
      ("test_simple_tokenizer.py::test_tokenizer_v1_encodes_and_decodes_the_books_sentence",
       "test_simple_tokenizer.py::test_tokenizer_v1_uses_the_ids_of_its_vocabulary")),
    S("simple_tokenizer.SimpleTokenizerV1", "a word missing from the vocabulary raises ``KeyError``",
      "test_hidden_simple_tokenizer.py::test_simple_tokenizer_v1_encode",
      "test_simple_tokenizer.py::test_tokenizer_v1_knows_no_unknown_words"),
    S("simple_tokenizer.SimpleTokenizerV1", "joins the tokens of ``ids`` with single spaces",
      "test_hidden_simple_tokenizer.py::test_simple_tokenizer_v1_decode",
      "test_simple_tokenizer.py::test_tokenizer_v1_encodes_and_decodes_the_books_sentence"),
    S("simple_tokenizer.SimpleTokenizerV1", "any of the three is accepted",
      accepted=("plain student", "listing 2.4's printed punctuation in V1's decode",
                "re.findall tokens; V1 decode with the companion's : and ;")),
    S("special_tokens.SimpleTokenizerV2", "turns every token that is not in the vocabulary into ``<|unk|>`` and returns the ids",
      "test_hidden_special_tokens.py::test_simple_tokenizer_v2_encode",
      ("test_special_tokens.py::test_tokenizer_v2_on_the_books_two_texts",
       "test_special_tokens.py::test_tokenizer_v2_uses_the_ids_of_its_vocabulary")),
    S("special_tokens.SimpleTokenizerV2", "listing 2.4's shorter character class ``[.,;?!\"]`` is accepted too",
      accepted="plain student: own names, loops, dict(zip(...)), listing 2.4's printed split in V2"),
    S("special_tokens.SimpleTokenizerV2", "removes the spaces before",
      "test_hidden_special_tokens.py::test_simple_tokenizer_v2_decode",
      "test_special_tokens.py::test_tokenizer_v2_on_the_books_two_texts"),
    S("special_tokens.SimpleTokenizerV2", "is accepted too)",
      accepted="plain student: own names, loops, dict(zip(...)), listing 2.4's printed split in V2"),
    # beyond the rule's words: the dataset's windows and dtype, the loader's seed
    S("data_sampling.GPTDatasetV1", "Every window whose target fits in the text is kept",
      "test_hidden_data_sampling.py::test_gpt_dataset_v1_windows",
      "test_data_sampling.py::test_every_window_is_kept_up_to_the_last_full_one"),
    S("data_sampling.GPTDatasetV1", "two int64 tensors of shape ``(max_length,)``",
      "test_hidden_data_sampling.py::test_gpt_dataset_v1_windows",
      "test_data_sampling.py::test_every_window_is_kept_up_to_the_last_full_one"),
    S("data_sampling.GPTDatasetV1", 'allowed_special={"<|endoftext|>"}',
      "test_hidden_data_sampling.py::test_gpt_dataset_v1_special_token",
      "test_data_sampling.py::test_a_text_holding_endoftext_gets_the_special_id"),
    S("data_sampling.create_dataloader_v1", "Shuffled batches follow ``torch.manual_seed``",
      "test_hidden_data_sampling.py::test_create_dataloader_v1",
      "test_data_sampling.py::test_shuffle_and_drop_last_are_passed_on"),
    S("bpe.bpe_decode", "``bpe_decode(bpe_encode(text)) == text`` for any text",
      ("test_hidden_bpe.py::test_bpe_decode", "test_hidden_bpe.py::test_bpe_round_trip"),
      "test_bpe.py::test_decoding_gives_the_text_back"),
]

# ------------------------------------------------------------------------------------ chapter 3
CAUSAL_STRUCTURE = ("test_hidden_causal_attention.py::test_causal_attention_seeded_init",
                    "test_hidden_causal_attention.py::test_causal_attention_trainable")
MHA_STRUCTURE = ("test_hidden_multihead_attention.py::test_multihead_attention_seeded_init",
                 "test_hidden_multihead_attention.py::test_multihead_attention_trainable",
                 "test_hidden_multihead_attention.py::test_multihead_attention_qkv_bias")
CH03 = [
    S("simple_attention.dot_product_loop", "Returns a 0-dimensional tensor equal to ``torch.dot(x, y)``",
      "test_hidden_simple_attention.py::test_dot_product_loop",
      "test_simple_attention.py::test_dot_product_loop_matches_torch_dot"),
    S("simple_attention.attn_scores_for_query", "Returns (T,)",
      "test_hidden_simple_attention.py::test_attn_scores_for_query", "test_simple_attention.py::test_scores_of_journey"),
    S("simple_attention.attn_scores_loop", "Returns (T, T) where entry [i, j] is x_i",
      "test_hidden_simple_attention.py::test_attn_scores_loop",
      "test_simple_attention.py::test_all_scores_loop_and_matmul"),
    S("simple_attention.context_vector_for_query", "Returns (d,)",
      "test_hidden_simple_attention.py::test_context_vector_for_query",
      "test_simple_attention.py::test_context_vector_of_journey"),
    S("simple_attention.all_context_vectors", "Returns (T, d); row i is z^(i+1)",
      "test_hidden_simple_attention.py::test_all_context_vectors", "test_simple_attention.py::test_all_context_vectors"),
    S("self_attention.compute_query_key_value", "Returns the tuple (queries, keys, values), each (T, d_out) or (d_out,)",
      "test_hidden_self_attention.py::test_compute_query_key_value",
      "test_self_attention.py::test_query_of_journey_and_shapes"),
    S("self_attention.scaled_attn_weights", "Returns (T,), summing to 1",
      "test_hidden_self_attention.py::test_scaled_attn_weights", "test_self_attention.py::test_scaled_weights_of_journey"),
    S("self_attention.context_vector_for_query", "Returns the context vector z of shape (d_out,)",
      "test_hidden_self_attention.py::test_context_vector_for_query",
      "test_self_attention.py::test_context_vector_of_journey"),
    S("self_attention.SelfAttention_v1", "returns (T, d_out), leaving x unchanged",
      ("test_hidden_self_attention.py::test_self_attention_v1_forward",
       "test_hidden_self_attention.py::test_self_attention_trainable"),
      ("test_self_attention.py::test_self_attention_v1_seed_123", "test_self_attention.py::test_graded_structure_of_v1_and_v2")),
    S("self_attention.SelfAttention_v1", "Graded structure: exactly three parameters, named W_query, W_key, W_value",
      ("test_hidden_self_attention.py::test_self_attention_v1_seeded_init",
       "test_hidden_self_attention.py::test_self_attention_trainable"),
      ("test_self_attention.py::test_self_attention_v1_seed_123", "test_self_attention.py::test_graded_structure_of_v1_and_v2")),
    S("self_attention.SelfAttention_v2", "returns (T, d_out), leaving x unchanged",
      ("test_hidden_self_attention.py::test_self_attention_v2_forward",
       "test_hidden_self_attention.py::test_self_attention_trainable"),
      ("test_self_attention.py::test_self_attention_v2_seed_789", "test_self_attention.py::test_graded_structure_of_v1_and_v2")),
    S("self_attention.SelfAttention_v2", "created in that order, and no other parameters",
      "test_hidden_self_attention.py::test_self_attention_v2_seeded_init_and_bias",
      ("test_self_attention.py::test_self_attention_v2_seed_789", "test_self_attention.py::test_graded_structure_of_v1_and_v2")),
    S("causal_attention.masked_renormalized_weights", "Returns (T, T)",
      "test_hidden_causal_attention.py::test_masked_renormalized_weights", "test_causal_attention.py::test_mask_and_renormalise"),
    S("causal_attention.causal_attn_weights", "Returns the same shape with zeros above the diagonal and rows summing to 1",
      "test_hidden_causal_attention.py::test_causal_attn_weights",
      "test_causal_attention.py::test_minus_infinity_mask_before_softmax"),
    S("causal_attention.causal_attn_weights", "The graded scores include large ones",
      "test_hidden_causal_attention.py::test_causal_attn_weights",
      "test_causal_attention.py::test_minus_infinity_mask_before_softmax"),
    S("causal_attention.dropout_attn_weights", "Kept entries are scaled by 1 / (1 - p)",
      "test_hidden_causal_attention.py::test_dropout_attn_weights",
      "test_causal_attention.py::test_dropout_on_attention_weights_seed_123"),
    S("causal_attention.CausalAttention", "returns (b, num_tokens, d_out) and leaves x unchanged",
      ("test_hidden_causal_attention.py::test_causal_attention_forward",
       "test_hidden_causal_attention.py::test_causal_attention_trainable"),
      ("test_causal_attention.py::test_causal_attention_seed_123",
       "test_causal_attention.py::test_graded_structure_of_causal_attention")),
    S("causal_attention.CausalAttention", "The graded inputs include large values",
      "test_hidden_causal_attention.py::test_causal_attention_forward",
      "test_causal_attention.py::test_causal_attention_seed_123"),
    S("causal_attention.CausalAttention", "Graded structure:", CAUSAL_STRUCTURE,
      "test_causal_attention.py::test_graded_structure_of_causal_attention"),
    S("causal_attention.CausalAttention", "created in that order, and no other parameters", CAUSAL_STRUCTURE,
      ("test_causal_attention.py::test_causal_attention_seed_123",
       "test_causal_attention.py::test_graded_structure_of_causal_attention")),
    S("causal_attention.CausalAttention", "stored as ``self.dropout``, applied to the attention weights",
      "test_hidden_causal_attention.py::test_causal_attention_dropout",
      "test_causal_attention.py::test_graded_structure_of_causal_attention"),
    S("causal_attention.CausalAttention", "the causal mask is a buffer registered as ``mask``",
      "test_hidden_causal_attention.py::test_causal_attention_mask_is_a_buffer",
      "test_causal_attention.py::test_graded_structure_of_causal_attention"),
    S("multihead_attention.MultiHeadAttentionWrapper", "head 0's columns first, and leaves x unchanged",
      ("test_hidden_multihead_attention.py::test_wrapper_forward",
       "test_hidden_multihead_attention.py::test_multihead_attention_trainable"),
      ("test_multihead_attention.py::test_wrapper_two_heads_seed_123",
       "test_multihead_attention.py::test_graded_structure_of_both_classes")),
    S("multihead_attention.MultiHeadAttentionWrapper", "``self.heads`` is an ``nn.ModuleList`` of ``num_heads``",
      "test_hidden_multihead_attention.py::test_wrapper_heads_are_causal_attention",
      "test_multihead_attention.py::test_graded_structure_of_both_classes"),
    S("multihead_attention.MultiHeadAttention", "after the ``out_proj`` linear layer, and leaves x unchanged",
      ("test_hidden_multihead_attention.py::test_multihead_attention_forward",
       "test_hidden_multihead_attention.py::test_multihead_attention_trainable"),
      ("test_multihead_attention.py::test_multihead_attention_seed_123",
       "test_multihead_attention.py::test_graded_structure_of_both_classes")),
    S("multihead_attention.MultiHeadAttention", "The graded inputs include large values",
      "test_hidden_multihead_attention.py::test_multihead_attention_forward",
      "test_multihead_attention.py::test_multihead_attention_seed_123"),
    S("multihead_attention.MultiHeadAttention", "Graded structure:", MHA_STRUCTURE,
      "test_multihead_attention.py::test_graded_structure_of_both_classes"),
    S("multihead_attention.MultiHeadAttention", "created in that order, and no other parameters", MHA_STRUCTURE,
      ("test_multihead_attention.py::test_multihead_attention_seed_123",
       "test_multihead_attention.py::test_graded_structure_of_both_classes")),
    S("multihead_attention.MultiHeadAttention", "stored as ``self.dropout``, applied to the attention weights",
      "test_hidden_multihead_attention.py::test_multihead_attention_dropout",
      "test_multihead_attention.py::test_graded_structure_of_both_classes"),
    S("multihead_attention.MultiHeadAttention", "the causal mask is a buffer registered as ``mask``",
      "test_hidden_multihead_attention.py::test_multihead_attention_mask_is_a_buffer",
      "test_multihead_attention.py::test_graded_structure_of_both_classes"),
    S("exercises.transfer_weights_v2_to_v1", "Afterwards both modules give the same output",
      "test_hidden_exercises.py::test_3_1_transfer_weights", "test_exercises.py::test_3_1_v1_holds_v2_weights_transposed"),
    S("exercises.transfer_weights_v2_to_v1", "Modifies ``sa_v1`` in place",
      "test_hidden_exercises.py::test_3_1_transfer_weights", "test_exercises.py::test_3_1_v1_holds_v2_weights_transposed"),
    S("exercises.build_2d_output_wrapper", "Change only the constructor's arguments",
      "test_hidden_exercises.py::test_3_2_two_dimensional_wrapper",
      "test_exercises.py::test_3_2_two_heads_two_dimensional_output"),
    S("exercises.build_gpt2_small_mha", "so the module has 2,360,064 parameters",
      "test_hidden_exercises.py::test_3_3_gpt2_small", "test_exercises.py::test_3_3_gpt2_small_size"),
]

# ------------------------------------------------------------------------------------ chapter 4
CH04 = [
    S("layer_norm.LayerNorm", "has exactly two parameters, ``scale`` (ones) and ``shift`` (zeros)",
      ("test_hidden_layer_norm.py::test_layer_norm_parameters", "test_hidden_layer_norm.py::test_layer_norm_trainable"),
      "test_layer_norm.py::test_scale_and_shift_are_the_only_parameters"),
    S("layer_norm.LayerNorm", "with the *biased* variance",
      "test_hidden_layer_norm.py::test_layer_norm_forward",
      "test_layer_norm.py::test_normalized_rows_have_mean_0_and_variance_1"),
    S("layer_norm.LayerNorm", "eps = 1e-5, then returns ``scale * norm_x + shift``",
      ("test_hidden_layer_norm.py::test_layer_norm_forward",
       "test_hidden_layer_norm.py::test_layer_norm_eps_keeps_flat_rows_finite"),
      "test_layer_norm.py::test_eps_is_1e_5_inside_the_square_root"),
    S("layer_norm.LayerNorm", "keeps the input's shape and leaves the input unchanged",
      ("test_hidden_layer_norm.py::test_layer_norm_forward", "test_hidden_layer_norm.py::test_layer_norm_trainable"),
      "test_layer_norm.py::test_last_dimension_of_a_3d_batch_gradients_and_input_unchanged"),
    S("feed_forward.GELU", "element by element, any shape",
      ("test_hidden_feed_forward.py::test_gelu", "test_hidden_feed_forward.py::test_gelu_on_any_shape"),
      "test_feed_forward.py::test_gelu_is_the_tanh_approximation"),
    S("feed_forward.FeedForward", "Graded: ``self.layers`` is an ``nn.Sequential``",
      ("test_hidden_feed_forward.py::test_feed_forward_seeded_init", "test_hidden_feed_forward.py::test_feed_forward_forward"),
      "test_feed_forward.py::test_feed_forward_creates_its_layers_in_order"),
    S("feed_forward.FeedForward", "leaves the caller's input unchanged",
      ("test_hidden_feed_forward.py::test_feed_forward_forward", "test_hidden_feed_forward.py::test_feed_forward_trainable"),
      "test_feed_forward.py::test_feed_forward_expands_to_4_emb_dim_and_back"),
    S("shortcuts.ExampleDeepNeuralNetwork", "Graded: ``self.layers`` is an ``nn.ModuleList`` of those five layers",
      ("test_hidden_shortcuts.py::test_each_layer_is_linear_then_your_gelu",
       "test_hidden_shortcuts.py::test_shortcut_seeded_init"),
      ("test_shortcuts.py::test_gradients_vanish_without_shortcuts", "test_shortcuts.py::test_shortcut_only_where_the_shapes_match")),
    S("shortcuts.ExampleDeepNeuralNetwork", "a layer whose output has the shape of its input adds its input",
      "test_hidden_shortcuts.py::test_shortcut_forward", "test_shortcuts.py::test_shortcut_only_where_the_shapes_match"),
    S("shortcuts.ExampleDeepNeuralNetwork", "forward leaves the caller's input unchanged",
      "test_hidden_shortcuts.py::test_shortcut_forward", "test_shortcuts.py::test_shortcut_only_where_the_shapes_match"),
    S("shortcuts.print_gradients", "return the dict {name: mean}",
      "test_hidden_shortcuts.py::test_print_gradients",
      ("test_shortcuts.py::test_gradients_vanish_without_shortcuts", "test_shortcuts.py::test_shortcuts_keep_the_gradients")),
    S("transformer_block.TransformerBlock", "Graded structure, created in this order after a seed",
      ("test_hidden_transformer_block.py::test_block_seeded_init",
       "test_hidden_transformer_block.py::test_block_structure_and_attention_arguments"),
      "test_transformer_block.py::test_graded_structure"),
    S("transformer_block.TransformerBlock", "any name will do), and no other parameters",
      ("test_hidden_transformer_block.py::test_block_structure_and_attention_arguments",
       "test_hidden_transformer_block.py::test_block_dropout"),
      ("test_transformer_block.py::test_graded_structure",
       "test_transformer_block.py::test_dropout_after_attention_and_after_the_feed_forward")),
    S("transformer_block.TransformerBlock", "returns the same shape and leaves the caller's x unchanged",
      ("test_hidden_transformer_block.py::test_block_forward", "test_hidden_transformer_block.py::test_block_trainable"),
      ("test_transformer_block.py::test_book_block_keeps_the_shape",
       "test_transformer_block.py::test_pre_layernorm_and_two_shortcuts")),
    S("gpt_model.GPTModel", "Graded structure, created in this order after a seed",
      ("test_hidden_gpt_model.py::test_gpt_structure", "test_hidden_gpt_model.py::test_gpt_seeded_init"),
      ("test_gpt_model.py::test_graded_structure_and_distinct_blocks", "test_gpt_model.py::test_created_in_the_book_order")),
    S("gpt_model.GPTModel", "returns logits of shape (batch, num_tokens, vocab_size) for every position, and leaves in_idx unchanged",
      ("test_hidden_gpt_model.py::test_gpt_forward", "test_hidden_gpt_model.py::test_gpt_trainable"),
      ("test_gpt_model.py::test_book_logits", "test_gpt_model.py::test_forward_wiring_on_a_short_input")),
    S("generate.generate_text_simple", "Returns a new (batch, num_tokens + max_new_tokens) tensor of ids that starts with ``idx``",
      ("test_hidden_generate.py::test_generate_greedy",
       "test_hidden_generate.py::test_generate_leaves_idx_and_returns_a_new_tensor"),
      ("test_generate.py::test_greedy_from_the_last_position", "test_generate.py::test_crops_to_the_last_context_size_tokens")),
    S("generate.generate_text_simple", "``idx`` itself is left unchanged",
      "test_hidden_generate.py::test_generate_leaves_idx_and_returns_a_new_tensor",
      "test_generate.py::test_greedy_from_the_last_position"),
    S("generate.generate_text_simple", "The model is called exactly ``max_new_tokens`` times",
      "test_hidden_generate.py::test_generate_greedy", "test_generate.py::test_greedy_from_the_last_position"),
    S("generate.generate_text_simple", "feed the model the last ``context_size`` tokens",
      "test_hidden_generate.py::test_generate_crops_to_the_last_context_size_tokens",
      "test_generate.py::test_crops_to_the_last_context_size_tokens"),
    S("exercises.gpt2_config", "Any other size raises ValueError",
      "test_hidden_exercises.py::test_4_2_configs", "test_exercises.py::test_4_2_configs"),
    S("exercises.gpt_parameter_count", "GPT_CONFIG_124M gives 163,009,536",
      "test_hidden_exercises.py::test_4_2_parameter_counts_and_sizes",
      "test_exercises.py::test_4_2_parameter_counts_and_sizes"),
    S("exercises.TransformerBlockSeparateDropout", "Otherwise exactly the graded structure and forward of TransformerBlock",
      "test_hidden_exercises.py::test_4_3_separate_dropout_rates",
      ("test_exercises.py::test_4_3_each_dropout_rate_in_its_place",
       "test_exercises.py::test_4_3_same_model_as_gptmodel_when_the_rates_agree")),
    S("exercises.GPTModelSeparateDropout", "Otherwise exactly the graded structure and forward of GPTModel",
      "test_hidden_exercises.py::test_4_3_separate_dropout_rates",
      ("test_exercises.py::test_4_3_same_model_as_gptmodel_when_the_rates_agree",
       "test_exercises.py::test_4_3_embedding_dropout_only")),
]

# ---------------------------------------------------------------------------- efficient attention
EQUALS_CH3 = ("test_hidden_efficient_mha.py::test_combined_qkv_forward", "test_hidden_efficient_mha.py::test_einsum_forward",
              "test_hidden_efficient_mha.py::test_sdpa_forward", "test_hidden_efficient_mha.py::test_pytorch_class_forward")
TRANSFERS = ("test_hidden_efficient_mha.py::test_transfers", "test_hidden_efficient_mha.py::test_transfers_as_you_call_them")
BOOK_COMPANION = "the book companion's own code"
EFFICIENT = [
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

# ------------------------------------------------------------------------------------ chapter 5
CH05 = [
    S("losses.calc_loss_batch", "Returns the loss as a scalar tensor that gradients flow back through",
      "test_hidden_losses.py::test_calc_loss_batch", "test_losses.py::test_loss_of_a_batch_is_the_mean_cross_entropy"),
    S("training.evaluate_model", "Returns (train_loss, val_loss)",
      "test_hidden_training.py::test_evaluate_model", "test_training.py::test_evaluate_model_in_eval_mode_and_back"),
    S("training.train_model_simple", "Returns (train_losses, val_losses, track_tokens_seen)",
      "test_hidden_training.py::test_train_model_simple_returns_the_losses_and_tokens_seen",
      "test_training.py::test_training_takes_the_books_steps"),
    S("decoding.print_sampled_tokens", "returns the counts: an int64 tensor of ``len(probas)`` entries (zeros included)",
      "test_hidden_decoding.py::test_print_sampled_tokens", "test_decoding.py::test_book_sampled_tokens"),
    S("decoding.generate", "``idx`` itself is left unchanged",
      ("test_hidden_decoding.py::test_generate_greedy", "test_hidden_decoding.py::test_generate_with_temperature"),
      "test_decoding.py::test_greedy_crops_and_leaves_idx"),
    S("checkpoints.load_model_and_optimizer", "so that training goes on exactly as if it had never stopped",
      "test_hidden_checkpoints.py::test_load_model_and_optimizer", "test_checkpoints.py::test_training_resumes_from_a_checkpoint"),
    S("checkpoints.assign", "raises ValueError", "test_hidden_checkpoints.py::test_assign", "test_checkpoints.py::test_assign_checks_shapes"),
]

# the assignments whose expectations live in their own folder (tests/<assignment>/expectations.py)
OWN = {name: load_path(TESTS / name / "expectations.py") for name in ("appendix_a_pytorch",)}
STATED = {**{name: own.STATED for name, own in OWN.items()}, "ch02_text_data": CH02, "ch03_attention": CH03, "ch04_gpt": CH04, "efficient_attention": EFFICIENT,
          "ch05_pretraining": CH05}


# ------------------------------------------------------------------------------------ the checks
def problems(stated, docstrings, hidden_tests, public_tests, alternatives):
    """What is wrong with one assignment's list ``stated``, as lines; none when it holds.

    ``docstrings``: {item: docstring} of its student modules; ``hidden_tests`` and
    ``public_tests``: {file name: {test function names}}; ``alternatives``: the names of its
    alternatives bank."""
    found = []
    docs = {item: squash(doc) for item, doc in docstrings.items()}

    def exists(node, tests, kind):
        file, _, name = node.partition("::")
        if name not in tests.get(file, ()):
            found.append(f"{kind} {node} does not exist")

    for s in stated:
        where = f"{s.item}: {s.phrase!r}"
        if s.item not in docs:
            found.append(f"{where}: no student docstring {s.item}")
        elif squash(s.phrase) not in docs[s.item]:
            found.append(f"{where}: no longer in the docstring")
        for node in s.hidden:
            exists(node, hidden_tests, "hidden check")
        for node in s.public:
            exists(node, public_tests, "public test")
        for name in s.accepted:
            if not any(a.startswith(name) for a in alternatives):
                found.append(f"{where}: no alternative named {name!r}")
        if not (s.hidden and s.public) and not (s.accepted or s.free or s.gap):
            found.append(f"{where}: names no hidden check and public test (or acceptance, free, gap)")
    listed = {}
    for s in stated:
        listed.setdefault(s.item, []).append(squash(s.phrase))
    for item, doc in docstrings.items():
        for sentence in requirement_sentences(doc):
            if not any(phrase in sentence for phrase in listed.get(item, ())):
                found.append(f"{item}: requirement sentence not listed: {sentence!r}")
    return found


def evidence(assignment):
    a = course.get(assignment)
    hidden = {p.name: collected_tests(p) for p in a.suites.glob("test_hidden_*.py")}
    public = {p.name: collected_tests(p) for p in a.solutions.glob("test_*.py")}
    bank = load(assignment, "alternatives")
    alternatives = [alt.name for alt in getattr(bank, "ALTERNATIVES", ())]
    return assignment_docstrings(a.solutions, a.modules), hidden, public, alternatives


def test_every_assignment_has_a_list():
    missing = sorted(set(course.names()) - set(STATED))
    assert not missing, (f"no list of stated requirements for {missing}: add one to STATED (each requirement "
                         "sentence of its student docstrings, with the hidden check and the public test of it)")


@pytest.mark.parametrize("assignment", sorted(STATED))
def test_stated_requirements_are_graded_and_publicly_tested(assignment):
    found = problems(STATED[assignment], *evidence(assignment))
    assert not found, "\n".join(found)


def test_gaps_are_few_and_say_which_side_is_missing():
    """A gap names its missing side by being empty there, and says why: it is a to-do, not a pass."""
    for s in (s for stated in STATED.values() for s in stated if s.gap):
        assert not (s.hidden and s.public), f"{s.item}: {s.phrase!r} has both sides: drop its gap"
        assert len(s.gap) > 40, f"{s.item}: {s.phrase!r}: say why the gap is open"


# -------------------------------------------------------------------------- the rule, on planted docs
PLANTED = '''"""A student module."""


def pick(x, k):
    """The first ``k`` entries of ``x``.

    Returns a new list; ``x`` itself is left unchanged. A ``k`` below 0 raises ValueError.
    The book's slice is fine (e.g. ``x[:k]``).
    - ``k`` must be an int.
    """
    ### BEGIN SOLUTION
    return list(x[:k])
    ### END SOLUTION


def helper(x):
    """Given: returns ``x``. Not the student's to write, so not theirs to read as a requirement."""
    return x
'''


def planted(**changes):
    docs = student_docstrings(PLANTED, "planted")
    hidden = {"test_hidden_planted.py": {"test_pick", "test_pick_refuses"}}
    public = {"test_planted.py": {"test_pick_public"}}
    stated = [S("planted.pick", "Returns a new list; ``x`` itself is left unchanged",
                "test_hidden_planted.py::test_pick", "test_planted.py::test_pick_public"),
              S("planted.pick", "raises ValueError", "test_hidden_planted.py::test_pick_refuses",
                "test_planted.py::test_pick_public"),
              S("planted.pick", "must be an int", "test_hidden_planted.py::test_pick", "test_planted.py::test_pick_public")]
    stated = changes.pop("stated", stated)
    return problems(stated, changes.pop("docs", docs), hidden, public, ["the book's way"])


def test_rule_on_a_planted_module():
    docs = student_docstrings(PLANTED, "planted")
    assert set(docs) == {"planted", "planted.pick"}, "a function without a solution region is not the student's"
    assert sentences(docs["planted.pick"])[-1] == "``k`` must be an int."
    assert requirement_sentences(docs["planted.pick"]) == [
        "Returns a new list; ``x`` itself is left unchanged.", "A ``k`` below 0 raises ValueError.",
        "``k`` must be an int."]
    assert REQUIREMENT.search("The book's slice is fine (e.g. ``x[:k]``).") is None
    assert planted() == []


def test_planted_failures():
    """Each way the list can fall behind fails."""
    full = [S("planted.pick", "Returns a new list; ``x`` itself is left unchanged",
              "test_hidden_planted.py::test_pick", "test_planted.py::test_pick_public"),
            S("planted.pick", "raises ValueError", "test_hidden_planted.py::test_pick_refuses",
              "test_planted.py::test_pick_public")]
    # a requirement sentence nobody listed
    assert planted(stated=full) == [
        "planted.pick: requirement sentence not listed: '``k`` must be an int.'"]
    # a listed phrase the docstring no longer states
    changed = {"planted.pick": student_docstrings(PLANTED, "planted")["planted.pick"].replace("raises ValueError",
                                                                                             "gives []")}
    assert any("no longer in the docstring" in p for p in planted(docs=changed))
    # a hidden check or public test that does not exist; an entry with one side only
    ghost = [*full, S("planted.pick", "must be an int", "test_hidden_planted.py::test_ghost", "test_planted.py::test_nope")]
    assert set(planted(stated=ghost)) == {"hidden check test_hidden_planted.py::test_ghost does not exist",
                                          "public test test_planted.py::test_nope does not exist"}
    one_side = [*full, S("planted.pick", "must be an int", "test_hidden_planted.py::test_pick")]
    assert planted(stated=one_side) == [
        "planted.pick: 'must be an int': names no hidden check and public test (or acceptance, free, gap)"]
    # an acceptance backed by no alternative
    unbacked = [*full, S("planted.pick", "must be an int", accepted="another way")]
    assert planted(stated=unbacked) == ["planted.pick: 'must be an int': no alternative named 'another way'"]
