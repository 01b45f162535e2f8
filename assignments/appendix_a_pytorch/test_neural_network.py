"""Public tests for section A.5: the book's network of two hidden layers.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from basics_stand_ins import StandInNetwork
from neural_network import NeuralNetwork, count_trainable_parameters
from public_tests import expect_close, expect_equal


def test_the_books_parameter_count():
    model = NeuralNetwork(50, 3)
    expect_equal(count_trainable_parameters(model), 2213, 'count_trainable_parameters(NeuralNetwork(50, 3))')
    expect_equal(tuple(model.layers[0].weight.shape), (30, 50), 'the shape of model.layers[0].weight')
    expect_equal([type(layer).__name__ for layer in model.layers], ["Linear", "ReLU", "Linear", "ReLU", "Linear"],
                 'the layers of model.layers')


def test_frozen_parameters_are_not_counted():
    model = StandInNetwork(4, 5, 2, 0.0)   # 4 * 5 + 5 + 5 * 2 + 2 = 37 parameters
    model.layers[0].bias.requires_grad_(False)
    expect_equal(count_trainable_parameters(model), 32, 'count_trainable_parameters with layers.0.bias frozen')


def test_the_books_seeded_output():
    torch.manual_seed(123)
    model = NeuralNetwork(50, 3)
    X = torch.rand((1, 50))
    out = model(X)
    # recomputed on torch 2.13.0 (the book, on an older torch, prints [[-0.1262, 0.1080, -0.1792]]);
    # another machine's generator may differ in the last digits
    expect_close(out.detach(), torch.tensor([[-0.1670, 0.1001, -0.1219]]), 'model(X) after torch.manual_seed(123)',
                 mistakes=[("softmax at the end: forward returns the logits", torch.tensor([[0.2983, 0.3896, 0.3121]]))])
    expect_equal(tuple(out.shape), (1, 3), 'the shape of model(X)')
