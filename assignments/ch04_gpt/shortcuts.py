"""Section 4.4: shortcut connections keep the gradients of a deep network from vanishing."""
import torch
import torch.nn as nn

from feed_forward import GELU


class ExampleDeepNeuralNetwork(nn.Module):
    """Listing 4.5: five layers, each ``nn.Sequential(nn.Linear(layer_sizes[i], layer_sizes[i + 1]), GELU())``.

    Graded: ``self.layers`` is an ``nn.ModuleList`` of those five layers, created in order
    (parameters layers.0.0.weight, layers.0.0.bias, ..., layers.4.0.bias); ``layer_sizes``
    has six entries. forward runs the layers in turn; with ``use_shortcut`` true, a layer
    whose output has the shape of its input adds its input to its output (x = x + layer(x)),
    otherwise x = layer(x). forward leaves the caller's input unchanged.
    """

    def __init__(self, layer_sizes, use_shortcut):
        super().__init__()
        raise NotImplementedError("ExampleDeepNeuralNetwork.__init__: replace this line with your code")

    def forward(self, x):
        raise NotImplementedError("ExampleDeepNeuralNetwork.forward: replace this line with your code")


def print_gradients(model, x):
    """The book's gradient printout, returning what it prints.

    One forward pass of ``model`` on ``x``, the mean squared error against a target of zeros
    shaped like the output (``nn.MSELoss``), one backward pass; then, for every parameter
    whose name contains "weight", in ``model.named_parameters()`` order, print
    ``f"{name} has gradient mean of {mean}"`` and return the dict {name: mean} where mean is
    ``param.grad.abs().mean().item()`` (a Python float). Gradients already on the model are
    not cleared first (call it on a fresh model, as the book does).
    """
    raise NotImplementedError("print_gradients: replace this line with your code")
