"""Hidden checks for section A.5: the two-hidden-layer network and its parameter count (20 points).

The network's layers are judged by their parameters after the grader's seed (compared with the
reference's, built here after the same seed); its forward on the grader's weights, copied in by the
book's names, against the same layers computed here; the count on the grader's stand-in network with
a frozen parameter, counted here."""
import pytest
import torch

from _basics import network_weights, stand_in, stand_in_step
from autograder.grading.compare import expect_close, seeded, set_seed, value, yours_vs_expected
from autograder.grading.result import failure

points = pytest.mark.points
MODULE = "neural_network"
SIZES = ((7, 4), (50, 3), (2, 2))
SWAPPED = "the hidden layers swapped (the first has 30 units, the second 20)"


def book_names(num_inputs, num_outputs):
    return {"layers.0.weight": (30, num_inputs), "layers.0.bias": (30,), "layers.2.weight": (20, 30),
            "layers.2.bias": (20,), "layers.4.weight": (num_outputs, 20), "layers.4.bias": (num_outputs,)}


@points(6)
def test_neural_network_layers(student, ref, seeds):
    """NeuralNetwork: layers 0, 2, 4 Linear of 30 and 20 hidden units, drawn in the book's order after a seed"""
    steps = []
    for k, sizes in enumerate(SIZES):
        steps += [{"let": f"m{k}", "call": f"{MODULE}.NeuralNetwork", "args": list(sizes), "seed": seeds(f"init{k}")},
                  {"let": f"p{k}", "parameters": f"m{k}", "return": True}]
    plan = student.plan(steps, needs=f"{MODULE}.NeuralNetwork")
    for k, sizes in enumerate(SIZES):
        what = f"NeuralNetwork{sizes}"
        got = value(plan, f"p{k}", f"the parameters of {what}")
        shapes = {name: tuple(t.shape) for name, t in got.items() if isinstance(t, torch.Tensor)}
        want = book_names(*sizes)
        if shapes != want:
            swapped = {**want, "layers.0.weight": (20, sizes[0]), "layers.0.bias": (20,), "layers.2.weight": (30, 20),
                       "layers.2.bias": (30,), "layers.4.weight": (sizes[1], 30)}
            raise failure(f"{what}: parameters " + yours_vs_expected(yours=shapes, expected=want) + " (self.layers: "
                          "Linear, ReLU, Linear, ReLU, Linear).", SWAPPED if shapes == swapped else None)
        set_seed(seeds(f"init{k}"))
        reference = dict(ref.neural_network.NeuralNetwork(*sizes).named_parameters())
        for name in want:
            expect_close(got[name], reference[name].detach(), f"{what}.{name} after torch.manual_seed")


def relu_net(x, w, relu=(True, True), last_relu=False):
    h = x @ w["layers.0.weight"].T + w["layers.0.bias"]
    h = h.relu() if relu[0] else h
    h = h @ w["layers.2.weight"].T + w["layers.2.bias"]
    h = h.relu() if relu[1] else h
    out = h @ w["layers.4.weight"].T + w["layers.4.bias"]
    return out.relu() if last_relu else out


@points(8)
def test_neural_network_forward(student, seeds):
    """NeuralNetwork.forward: the logits of Linear, ReLU, Linear, ReLU, Linear (no softmax)"""
    steps, cases = [], []
    for k, (num_inputs, num_outputs) in enumerate(SIZES):
        shapes = book_names(num_inputs, num_outputs)
        weights = {name: seeded(*shape, seed=seeds(f"{name}{k}")) / (shape[-1] ** 0.5 if len(shape) == 2 else 2)
                   for name, shape in shapes.items()}
        x = seeded(5, num_inputs, seed=seeds(f"x{k}"), scale=2.0)
        steps += [{"let": f"m{k}", "call": f"{MODULE}.NeuralNetwork", "args": [num_inputs, num_outputs],
                   "params": weights, "what": f"NeuralNetwork({num_inputs}, {num_outputs}) with the grader's weights "
                                             "(layers.0.weight, ..., layers.4.bias)"},
                  {"let": f"o{k}", "call": f"m{k}", "args": [x], "return": True}]
        cases.append((weights, x, f"NeuralNetwork({num_inputs}, {num_outputs}) on a (5, {num_inputs}) batch"))
    plan = student.plan(steps, needs=f"{MODULE}.NeuralNetwork")
    for k, (weights, x, what) in enumerate(cases):
        want = relu_net(x, weights)
        expect_close(value(plan, f"o{k}", what), want, what, {
            "softmax at the end (forward returns the logits)": torch.softmax(want, dim=-1),
            "no ReLU between the layers": relu_net(x, weights, relu=(False, False)),
            "one ReLU missing": relu_net(x, weights, relu=(True, False)),
            "the first ReLU missing": relu_net(x, weights, relu=(False, True)),
            "a ReLU after the output layer (the logits may be negative)": relu_net(x, weights, last_relu=True)})


@points(6)
def test_count_trainable_parameters(student, seeds):
    """count_trainable_parameters: the elements of every parameter with requires_grad, frozen ones left out"""
    cases = [((6, 9, 3, 0.0), ()), ((11, 4, 5, 0.0), ("layers.0.bias",)), ((3, 13, 2, 0.0), ("layers.3.weight",))]
    steps = []
    for k, (sizes, frozen) in enumerate(cases):
        steps.append(stand_in_step(f"m{k}", sizes, network_weights(*sizes[:3], seeds(f"w{k}"))))
        steps += [{"let": f"f{k}_{j}", "call": f"m{k}.{name}.requires_grad_", "args": [False]}
                  for j, name in enumerate(frozen)]
        steps.append({"let": f"n{k}", "call": f"{MODULE}.count_trainable_parameters", "args": [{"$ref": f"m{k}"}],
                      "return": True})
    plan = student.plan(steps, needs=f"{MODULE}.count_trainable_parameters")
    for k, (sizes, frozen) in enumerate(cases):
        model = stand_in(sizes, network_weights(*sizes[:3], seeds(f"w{k}")))
        params = dict(model.named_parameters())
        want = sum(p.numel() for name, p in params.items() if name not in frozen)
        what = (f"count_trainable_parameters(the grader's network of {sizes[:3]}"
                + (f", {', '.join(frozen)} frozen)" if frozen else ")"))
        got = value(plan, f"n{k}", what)
        if got != want or type(got) is not int:
            named = {sum(p.numel() for p in params.values()): "the frozen parameters counted too (only those with "
                                                                "requires_grad are trainable)",
                     len(params): "the parameter tensors counted, not their elements (p.numel())"}
            raise failure(f"{what}: " + yours_vs_expected(yours=repr(got)[:60], expected=want) + ".",
                          named.get(got) if type(got) is int else None)
