"""What the project's tests expect of ch05_pretraining (the convention: DESIGN.md, "Several
assignments, one engine, one seam"; CONTRIBUTING.md, "Adding an assignment")."""
from stated import S

# tests/test_stated_requirements.py: each requirement its student docstrings state, with the
# hidden check and the public test of it
STATED = [
    S("losses.calc_loss_batch", "Returns the loss as a scalar tensor that gradients flow back through",
      "test_hidden_losses.py::test_calc_loss_batch", "test_losses.py::test_loss_of_a_batch_is_the_mean_cross_entropy"),
    S("training.evaluate_model", "Returns (train_loss, val_loss)",
      "test_hidden_training.py::test_evaluate_model", "test_training.py::test_evaluate_model_in_eval_mode_and_back"),
    S("training.train_model_simple", "Returns (train_losses, val_losses, track_tokens_seen)",
      "test_hidden_training.py::test_train_model_simple_returns_the_losses_and_tokens_seen",
      "test_training.py::test_training_takes_the_books_steps"),
    S("training", "the grader and the public tests hand these functions stand-ins for them",
      ("test_hidden_training.py::test_train_model_simple_takes_the_books_steps",
       "test_hidden_training.py::test_evaluate_model", "test_hidden_training.py::test_generate_and_print_sample"),
      ("test_training.py::test_training_takes_the_books_steps", "test_training.py::test_sample_in_eval_mode_and_back")),
    S("decoding.generate", "with ``top_k`` (used, and graded, on a batch of one, as the book's listing samples)",
      "test_hidden_decoding.py::test_generate_with_top_k", "test_decoding.py::test_top_k_and_temperature_sampling"),
    S("decoding.print_sampled_tokens", "returns the counts: an int64 tensor of ``len(probas)`` entries (zeros included)",
      "test_hidden_decoding.py::test_print_sampled_tokens", "test_decoding.py::test_book_sampled_tokens"),
    S("decoding.generate", "``idx`` itself is left unchanged",
      ("test_hidden_decoding.py::test_generate_greedy", "test_hidden_decoding.py::test_generate_with_temperature"),
      "test_decoding.py::test_greedy_crops_and_leaves_idx"),
    S("checkpoints.load_model_and_optimizer", "so that training goes on exactly as if it had never stopped",
      "test_hidden_checkpoints.py::test_load_model_and_optimizer", "test_checkpoints.py::test_training_resumes_from_a_checkpoint"),
    S("checkpoints.assign", "raises ValueError", "test_hidden_checkpoints.py::test_assign", "test_checkpoints.py::test_assign_checks_shapes"),
]

# tests/test_nbgrader_release.py: what the master notebook prints from the reference (the book's values)
BOOK_VALUES = [
    "tensor([[6109, 3626, 6100,  345]])",
    "Every effort moves you rentingetic wasnم refres RexMeCHicular stren",             # untrained, seed 123
    "Outputs batch 1:  Armed heNetflix",
    "tensor([ -9.5042, -10.3796, -11.3677, -11.4798,  -9.7764, -12.2561])",
    "Loss: tensor(10.7940)",
    # the book's 48725.8203; the exp of a float32 loss moves in its last digits with the CPU's
    # matrix kernels (48725.8672 seen on another machine, the same loss printed)
    "Perplexity: tensor(48725.8",
    "Characters: 20479",
    "Tokens: 5145",
    "Training tokens: 4608",
    "Validation tokens: 512",
    # the book's 10.98758347829183: the last digits follow the order the shuffled batches come in
    "Training loss: 10.98758",
    "Validation loss: 10.9811",
    "Ep 1 (Step 000015): Train loss",                                  # train_model_simple (QUICK_RUN)
    "582 x forward",                                                   # print_sampled_tokens
    "343 x toward",
    "is drawn 32 times in 1,000",                                      # exercise 5.1: pizza at temperature 5
    "tensor([0.0615, 0.0000, 0.0000, 0.5775, 0.0000, 0.0000, 0.0000, 0.3610, 0.0000])",  # top-k
    "Temperature 0 is greedy: True",
    "Top-1 sampling is greedy: True",
    "Resumed from the checkpoint, same weights as without a break: True",   # exercise 5.4
    "Weights only, with a fresh optimizer, same weights: False",
    "Left as they were: []",                                           # load_weights_into_gpt
    "W_key of block 1 is the middle third of c_attn, transposed: True",
    "Output head is wte: True",
    "Queries, keys and values as GPT-2 computes them: True",
]

# tests/test_public_tests.py: one wrong line in the reference that a public test catches with a
# value: (module, the line, the wrong one, what the student must read)
WRONG = ("losses.py", "return torch.exp(loss)", "return torch.exp(loss) * 2", "yours differ from the book's")
