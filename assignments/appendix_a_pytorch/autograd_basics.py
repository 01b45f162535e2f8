"""Sections A.3-A.4: a logistic regression unit as a computation graph, and its gradients."""
import torch
import torch.nn.functional as F
from torch.autograd import grad


def logistic_forward(x1, w1, b):
    """Section A.3: the forward pass ``z = x1 * w1 + b``, then ``a = torch.sigmoid(z)``: returns
    ``a``, the predicted probability, with the shape of ``x1`` (tensors of one shape, or ``b`` of
    shape ``(1,)``). The book's ``x1 = [1.1]``, ``w1 = [2.2]``, ``b = [0.0]`` give ``[0.9183]``."""
    raise NotImplementedError("logistic_forward: replace this line with your code")


def logistic_loss(a, y):
    """Section A.3: the binary cross entropy of the predictions ``a`` against the true labels
    ``y`` (``F.binary_cross_entropy(a, y)``, the mean over the elements): returns a scalar tensor."""
    raise NotImplementedError("logistic_loss: replace this line with your code")


def grads_with_autograd(x1, w1, b, y):
    """Section A.4: the loss of ``logistic_forward(x1, w1, b)`` against ``y``, and its gradients
    with ``torch.autograd.grad`` (``w1`` and ``b`` are leaf tensors with ``requires_grad=True``;
    ``retain_graph=True`` keeps the graph for the second call). Returns
    ``(grad_L_w1, grad_L_b)``: two tensors of the shapes of ``w1`` and ``b``; the book's values
    give ``[-0.0898]`` and ``[-0.0817]``. ``w1.grad`` and ``b.grad`` are left as they were."""
    raise NotImplementedError("grads_with_autograd: replace this line with your code")


def grads_with_backward(x1, w1, b, y):
    """Section A.4: the same gradients with ``loss.backward()``, which stores them in ``w1.grad``
    and ``b.grad`` (``w1`` and ``b`` are leaf tensors with ``requires_grad=True`` and no
    gradient yet). Returns ``(w1.grad, b.grad)``: one backward pass, the gradients of this loss
    only."""
    raise NotImplementedError("grads_with_backward: replace this line with your code")
