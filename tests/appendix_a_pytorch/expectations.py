"""What the project's tests expect of appendix_a_pytorch (the convention: DESIGN.md, "Several
assignments, one engine, one seam")."""
from stated import S

H = "test_hidden_"
# tests/test_stated_requirements.py: each requirement its student docstrings state, with the
# hidden check and the public test of it
STATED = [
    S("tensor_basics.create_tensors", "each of dtype ``torch.int64``", H + "tensor_basics.py::test_create_tensors",
      "test_tensor_basics.py::test_the_books_four_tensors"),
    S("tensor_basics.convert_to_float32", "returns a tensor of dtype ``torch.float32`` with the same shape and values",
      H + "tensor_basics.py::test_convert_to_float32", "test_tensor_basics.py::test_float32"),
    S("tensor_basics.reshape_tensor", "returns a tensor of shape ``(rows, cols)``",
      H + "tensor_basics.py::test_reshape_tensor", "test_tensor_basics.py::test_reshape_is_not_a_transpose"),
    S("tensor_basics.matmul_with_transpose", "returns a ``(rows, rows)`` tensor",
      H + "tensor_basics.py::test_matmul_with_transpose", "test_tensor_basics.py::test_matmul_with_its_transpose"),
    S("autograd_basics.logistic_forward", "returns ``a``, the predicted probability",
      H + "autograd_basics.py::test_logistic_forward", "test_autograd_basics.py::test_the_books_forward_pass_and_loss"),
    S("autograd_basics.logistic_loss", "the mean over the elements): returns a scalar tensor",
      H + "autograd_basics.py::test_logistic_loss", "test_autograd_basics.py::test_the_books_forward_pass_and_loss"),
    S("autograd_basics.grads_with_autograd", "Returns ``(grad_L_w1, grad_L_b)``",
      H + "autograd_basics.py::test_grads_with_autograd", "test_autograd_basics.py::test_the_books_gradients_with_autograd"),
    S("autograd_basics.grads_with_backward", "Returns ``(w1.grad, b.grad)``: one backward pass",
      H + "autograd_basics.py::test_grads_with_backward", "test_autograd_basics.py::test_the_books_gradients_with_backward"),
    S("neural_network.NeuralNetwork", "after ``torch.manual_seed(123)`` they are the book's",
      H + "neural_network.py::test_neural_network_layers",
      ("test_neural_network.py::test_the_books_parameter_count", "test_neural_network.py::test_the_books_seeded_output")),
    S("neural_network.NeuralNetwork", "``forward(x)`` returns ``self.layers(x)``: the logits, no softmax at the end",
      H + "neural_network.py::test_neural_network_forward", "test_neural_network.py::test_the_books_seeded_output"),
    S("neural_network.count_trainable_parameters", "Returns an int (2,213",
      H + "neural_network.py::test_count_trainable_parameters",
      ("test_neural_network.py::test_the_books_parameter_count",
       "test_neural_network.py::test_frozen_parameters_are_not_counted")),
    S("data_loaders.ToyDataset", "``dataset[index]`` returns ``(features[index], labels[index])``",
      H + "data_loaders.py::test_toy_dataset", "test_data_loaders.py::test_the_books_toy_dataset"),
    S("data_loaders.make_loaders", "returns ``(train_loader, test_loader)``",
      H + "data_loaders.py::test_make_loaders", "test_data_loaders.py::test_the_books_loaders"),
    S("training_loop.train_model", "The model's weights after training are what is graded",
      H + "training_loop.py::test_train_model",
      ("test_training_loop.py::test_the_books_training_run", "test_training_loop.py::test_training_mode_and_zero_grad")),
    S("training_loop.compute_accuracy", "Returns a float between 0 and 1",
      H + "training_loop.py::test_compute_accuracy",
      ("test_training_loop.py::test_the_books_training_run",
       "test_training_loop.py::test_accuracy_counts_examples_in_eval_mode")),
    S("saving_loading.save_model", "``torch.save(model.state_dict(), path)``",
      H + "saving_loading.py::test_save_model", "test_saving_loading.py::test_save_writes_the_state_dict"),
    S("saving_loading.load_model", "returns ``model``",
      H + "saving_loading.py::test_load_model", "test_saving_loading.py::test_load_gives_the_weights_back"),
]

# tests/test_nbgrader_release.py: what the master notebook prints from the reference
BOOK_VALUES = [
    "torch.int64",                                                     # tensor_basics
    "torch.float32",
    "tensor([[14, 32],",
    "tensor([-0.0898]) tensor([-0.0817])",                             # autograd_basics
    "Total number of trainable model parameters: 2213",                # neural_network
    "tensor([[-0.1670,  0.1001, -0.1219]])",                           # torch 2.13.0's seeded output
    "Epoch: 001/003 | Batch 000/002 | Train Loss: 0.75",               # training_loop
    "Epoch: 003/003 | Batch 001/002 | Train Loss: 0.00",
    "Training accuracy: 1.0",
    "Test accuracy: 1.0",
    "Same weights after loading: True",                                # saving_loading
]

# tests/test_public_tests.py: one wrong line in the reference that a public test catches with a
# value: (module, the line, the wrong one, what the student must read)
WRONG = ("autograd_basics.py", "return torch.sigmoid(z)", "return torch.sigmoid(z + 0.1)", "yours differ from the book's")
