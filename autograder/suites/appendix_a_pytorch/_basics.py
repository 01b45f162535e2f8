"""Appendix A's helpers: the grader's inputs, its own runs of the book's code, and the mistakes
students make, written once with switches.

Every expected answer (a gradient, the weights after training, an accuracy, a loaded weight) is
computed here, on the grader's weights and data; the child's answers are compared, never believed.
The training loop, the accuracy and saving and loading are judged on ``basics_stand_ins``'s
network (the engine's copy, in the child as here), never on the student's ``NeuralNetwork``.
"""
import torch
import torch.nn.functional as F

from autograder.grading.compare import seeded, set_seed
from autograder.support.basics_stand_ins import StandInNetwork

STAND_IN = "basics_stand_ins.StandInNetwork"


def leaf_steps(let, tensor):
    """Plan steps making ``let`` a leaf tensor of the grader's values with ``requires_grad=True``."""
    return [{"let": f"{let}_data", "data": tensor.clone()},
            {"let": let, "call": f"{let}_data.requires_grad_", "what": f"{let}.requires_grad_()"}]


def logistic_grads(x1, w1, b, y, variant=None):
    """The gradients of the book's loss with respect to w1 and b, here (``variant``: a mistake)."""
    w1, b = w1.clone().requires_grad_(), b.clone().requires_grad_()
    with torch.enable_grad():
        loss = F.binary_cross_entropy(torch.sigmoid(x1 * w1 + (0 if variant == "no_bias" else b)), y)
        gw, gb = torch.autograd.grad(loss, (w1, b))
    return (gw * 2, gb * 2) if variant == "twice" else (gw, gb)


def network_weights(num_inputs, num_hidden, num_outputs, seed):
    """The grader's weights for a StandInNetwork: values of order one over the fan-in."""
    return {"layers.0.weight": seeded(num_hidden, num_inputs, seed=seed) / num_inputs**0.5,
            "layers.0.bias": seeded(num_hidden, seed=seed + 1) * 0.1,
            "layers.3.weight": seeded(num_outputs, num_hidden, seed=seed + 2) / num_hidden**0.5,
            "layers.3.bias": seeded(num_outputs, seed=seed + 3) * 0.1}


def stand_in(sizes, weights, train=False):
    """The grader's own StandInNetwork(*sizes) with ``weights``."""
    model = StandInNetwork(*sizes)
    model.load_state_dict(weights)
    return model.train(train)


def stand_in_step(let, sizes, weights, train=False):
    """A plan step building the same StandInNetwork in the child."""
    return {"let": let, "call": STAND_IN, "args": list(sizes), "params": weights, "train": train,
            "what": f"the grader's stand-in network ({let})"}


def batches(sizes, num_inputs, num_classes, seed):
    """[(features, labels)] of the given batch sizes: the grader's data."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(n, num_inputs, generator=g) * 2, torch.randint(0, num_classes, (n,), generator=g))
            for n in sizes]


def as_loader(pairs):
    """The pairs as plan data: a list of [features, labels] lists (what the child iterates)."""
    return [[x.clone(), y.clone()] for x, y in pairs]


TRAINING_MISTAKES = {
    "optimizer.zero_grad() missing (the gradients of every batch add up)": {"zero_grad": False},
    "model.train() missing (the model trained in eval mode: dropout off)": {"train": False},
    "softmax before F.cross_entropy (it takes the logits)": {"softmax": True},
    "one epoch too few (range(num_epochs))": {"epochs": -1},
}


def train(sizes, weights, pairs, num_epochs, lr, seed, zero_grad=True, train=True, softmax=False, epochs=0):
    """The book's loop on the grader's stand-in, after ``seed``; returns its parameters by name."""
    model = stand_in(sizes, weights)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    set_seed(seed)
    with torch.enable_grad():
        for _ in range(num_epochs + epochs):
            model.train(train)
            for features, labels in pairs:
                logits = model(features)
                loss = F.cross_entropy(torch.softmax(logits, dim=1) if softmax else logits, labels)
                if zero_grad:
                    optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            model.eval()
    return {k: v.detach() for k, v in model.named_parameters()}


def accuracy(model, pairs, seed, eval_mode=True, per_batch=False):
    """The accuracy of ``model`` on ``pairs`` after ``seed`` (switches: the mistakes)."""
    model.train(not eval_mode)
    set_seed(seed)
    rates, correct, total = [], 0, 0
    with torch.no_grad():
        for features, labels in pairs:
            right = (model(features).argmax(dim=1) == labels).sum().item()
            rates.append(right / len(labels))
            correct, total = correct + right, total + len(labels)
    return sum(rates) / len(rates) if per_batch else correct / total
