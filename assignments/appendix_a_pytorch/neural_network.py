"""Section A.5: a multilayer perceptron with two hidden layers."""
import torch


class NeuralNetwork(torch.nn.Module):
    """Listing A.4: ``self.layers``, one ``torch.nn.Sequential`` of, in this order,
    ``Linear(num_inputs, 30)``, ``ReLU()``, ``Linear(30, 20)``, ``ReLU()``,
    ``Linear(20, num_outputs)`` (so its parameters are named ``layers.0.weight``,
    ``layers.0.bias``, ``layers.2.weight``, ... ``layers.4.bias``, and after
    ``torch.manual_seed(123)`` they are the book's). ``forward(x)`` returns
    ``self.layers(x)``: the logits, no softmax at the end, shape ``(batch, num_outputs)``.
    ``NeuralNetwork(50, 3)`` has 2,213 trainable parameters."""

    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        raise NotImplementedError("NeuralNetwork.__init__: replace this line with your code")

    def forward(self, x):
        raise NotImplementedError("NeuralNetwork.forward: replace this line with your code")


def count_trainable_parameters(model):
    """Section A.5: the number of trainable parameters of ``model`` (any ``torch.nn.Module``):
    the elements (``numel()``) of every parameter with ``requires_grad``, summed; a frozen
    parameter (``requires_grad=False``) is not counted. Returns an int (2,213 for
    ``NeuralNetwork(50, 3)``)."""
    raise NotImplementedError("count_trainable_parameters: replace this line with your code")
