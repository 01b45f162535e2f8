"""Public tests for sections A.3-A.4: the book's logistic regression unit and its gradients.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from autograd_basics import grads_with_autograd, grads_with_backward, logistic_forward, logistic_loss
from public_tests import expect_close

BOOK = {"x1": [1.1], "w1": [2.2], "b": [0.0], "y": [1.0]}


def leaves():
    """The book's inputs; w1 and b leaf tensors that require grad."""
    return (torch.tensor(BOOK["x1"]), torch.tensor(BOOK["w1"], requires_grad=True),
            torch.tensor(BOOK["b"], requires_grad=True), torch.tensor(BOOK["y"]))


def test_the_books_forward_pass_and_loss():
    x1, w1, b, y = leaves()
    a = logistic_forward(x1, w1, b)
    expect_close(a, torch.tensor([0.9183]), 'logistic_forward(x1, w1, b): sigmoid(1.1 * 2.2 + 0.0)')
    expect_close(logistic_loss(a, y), torch.tensor(0.0852), 'logistic_loss(a, y)')
    # several examples: the mean over them
    a3, y3 = torch.tensor([0.9, 0.2, 0.6]), torch.tensor([1.0, 0.0, 1.0])
    expect_close(logistic_loss(a3, y3), -(torch.log(torch.tensor([0.9, 0.8, 0.6]))).mean(), 'logistic_loss of three examples')


def test_the_books_gradients_with_autograd():
    grad_L_w1, grad_L_b = grads_with_autograd(*leaves())
    expect_close(grad_L_w1, torch.tensor([-0.0898]), 'grad_L_w1 (torch.autograd.grad)')
    expect_close(grad_L_b, torch.tensor([-0.0817]), 'grad_L_b (torch.autograd.grad)')


def test_the_books_gradients_with_backward():
    x1, w1, b, y = leaves()
    w1_grad, b_grad = grads_with_backward(x1, w1, b, y)
    expect_close(w1_grad, torch.tensor([-0.0898]), 'w1.grad after loss.backward()')
    expect_close(b_grad, torch.tensor([-0.0817]), 'b.grad after loss.backward()')
