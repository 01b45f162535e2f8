"""What the project's tests expect of ch03_attention (the convention: DESIGN.md, "Several
assignments, one engine, one seam"; CONTRIBUTING.md, "Adding an assignment")."""
from stated import S

# tests/test_stated_requirements.py: each requirement its student docstrings state, with the
# hidden check and the public test of it
CAUSAL_STRUCTURE = ("test_hidden_causal_attention.py::test_causal_attention_seeded_init",
                    "test_hidden_causal_attention.py::test_causal_attention_trainable")
MHA_STRUCTURE = ("test_hidden_multihead_attention.py::test_multihead_attention_seeded_init",
                 "test_hidden_multihead_attention.py::test_multihead_attention_trainable",
                 "test_hidden_multihead_attention.py::test_multihead_attention_qkv_bias")
STATED = [
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

# tests/test_nbgrader_release.py: what the master notebook prints from the reference (the book's values)
BOOK_VALUES = [
    "tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])",        # scores of "journey"
    "Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])",
    "Attention weights: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])",
    "tensor([0.4419, 0.6515, 0.5683])",                                  # z^(2)
    "[0.4421, 0.5931, 0.5790]",                                          # all context vectors
    "tensor([0.4306, 1.4551])",                                          # query_2
    "tensor(1.8524)",
    "tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])",
    "tensor([0.3061, 0.8210])",
    "[0.2996, 0.8053]",                                                  # SelfAttention_v1
    "[-0.0739,  0.0713]",                                                # SelfAttention_v2
    "[0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000]",                  # causal weights
    "[0.2899,   -inf,   -inf,   -inf,   -inf,   -inf]",
    "[2., 2., 0., 2., 2., 0.]",                                          # dropout on ones
    "[0.7599, 0.6194, 0.6206, 0.0000, 0.0000, 0.0000]",                  # dropout on weights
    "context_vecs.shape: torch.Size([2, 6, 2])",
    "[-0.4519,  0.2216,  0.4772,  0.1063]",                              # the wrapper
    "context_vecs.shape: torch.Size([2, 6, 4])",
    "[1.3208, 1.1631, 1.2879]",
    "[0.3190, 0.4858]",                                                  # MultiHeadAttention
    "Same as v2: True",
    "Parameters: 2360064",
]

# tests/test_public_tests.py: one wrong line in the reference that a public test catches with a
# value: (module, the line, the wrong one, what the student must read)
WRONG = ("self_attention.py", "torch.softmax(attn_scores / d_k**0.5, dim=-1)",
         "torch.softmax(attn_scores, dim=-1)", "yours look like weights without the scaling")
