"""What the project's tests expect of ch04_gpt (the convention: DESIGN.md, "Several
assignments, one engine, one seam"; CONTRIBUTING.md, "Adding an assignment")."""
from stated import S

# tests/test_stated_requirements.py: each requirement its student docstrings state, with the
# hidden check and the public test of it
STATED = [
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

# tests/test_nbgrader_release.py: what the master notebook prints from the reference (the book's values)
BOOK_VALUES = [
    "tensor([[6109, 3626, 6100,  345],",
    "Variance:\n tensor([[1.0000],",                                                      # LayerNorm
    # the book's 0.00020173587836325169 and 1.3258544206619263 to 7 digits: the last ones follow the
    # CPU's kernels (this VM's AVX-512 ones print ...584925942123 and ...541822433472)
    "layers.0.0.weight has gradient mean of 0.0002017358",                               # no shortcuts
    "layers.4.0.weight has gradient mean of 1.325854",                                   # shortcuts
    "Your MultiHeadAttention comes from ../ch03_attention/multihead_attention.py",
    "Output shape: torch.Size([2, 4, 50257])",
    "[ 0.3613,  0.4222, -0.0711,  ...,  0.3483,  0.4661, -0.2838]",
    "Total number of parameters: 163,009,536",
    "Number of trainable parameters considering weight tying: 124,412,160",
    "Total size of the model: 621.83 MB",
    "encoded: [15496, 11, 314, 716]",
    "Output: tensor([[15496,    11,   314,   716, 27018, 24086, 47843, 30961, 42348,  7267]])",
    "Hello, I am Featureiman Byeswickattribute argue",
    "Feed forward module: 4,722,432 parameters",
    "GPT-2 xl    : 1,637,792,000 parameters (1,557,380,800 with weight tying),  6247.68 MB",
    "Same count as your GPTModel: True",
    "Same logits as GPTModel: True",
]

# tests/test_public_tests.py: one wrong line in the reference that a public test catches with a
# value: (module, the line, the wrong one, what the student must read)
WRONG = ("layer_norm.py", "unbiased=False", "unbiased=True", "yours look like rows normalised with the "
         "unbiased variance")
