"""Public tests for section 4.4: shortcut connections (listing 4.5 and the gradient printout).

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import pytest
import torch

from shortcuts import ExampleDeepNeuralNetwork, print_gradients
from public_tests import expect_close, expect_equal

layer_sizes = [3, 3, 3, 3, 3, 1]
sample_input = torch.tensor([[1.0, 0.0, -1.0]])
NAMES = [f"layers.{i}.0.weight" for i in range(5)]


def test_gradients_vanish_without_shortcuts():
    torch.manual_seed(123)
    model_without_shortcut = ExampleDeepNeuralNetwork(layer_sizes, use_shortcut=False)
    means = print_gradients(model_without_shortcut, sample_input)
    expect_equal(list(means), NAMES, 'the names print_gradients reports')
    book = [0.00020173587836325169, 0.0001201116101583466, 0.0007152041653171182,
            0.001398873864673078, 0.005049646366387606]
    expect_equal(list(means.values()), pytest.approx(book, rel=1e-4), 'the mean absolute gradients')


def test_shortcuts_keep_the_gradients():
    torch.manual_seed(123)
    model_with_shortcut = ExampleDeepNeuralNetwork(layer_sizes, use_shortcut=True)
    means = print_gradients(model_with_shortcut, sample_input)
    expect_equal(list(means), NAMES, 'the names print_gradients reports')
    book = [0.22169792652130127, 0.20694105327129364, 0.32896995544433594,
            0.2665732502937317, 1.3258541822433472]
    expect_equal(list(means.values()), pytest.approx(book, rel=1e-4), 'the mean absolute gradients')


def test_shortcut_only_where_the_shapes_match():
    torch.manual_seed(1)
    model = ExampleDeepNeuralNetwork([4, 4, 2, 2, 2, 3], use_shortcut=True)
    expect_equal([n for n, _ in model.named_parameters()], [f"layers.{i}.0.{p}" for i in range(5) for p in ("weight", "bias")], 'the parameter names')
    x = torch.randn(3, 4)
    before = x.clone()
    expected = x
    for i, layer in enumerate(model.layers):
        out = layer(expected)
        expected = expected + out if i in (0, 2, 3) else out  # 4->4, 2->2 and 2->2 keep their shape
    expect_close(model(x), expected, 'the output, with a shortcut where the shapes match', atol=1e-6)
    expect_equal(x, before, "forward must not change its input")
