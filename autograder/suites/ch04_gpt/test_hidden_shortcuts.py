"""Hidden checks for section 4.4, shortcut connections (12 points).

The network is judged with linear stand-ins for its GELUs (so a wrong GELU costs points in
feed_forward only); that each layer's activation is the student's own GELU is checked apart, with
torch's GELU standing in for that class."""
import copy

import pytest
import torch
import torch.nn.functional as F

from _gpt import KEEP, TORCH_GELU, gelu, linear_map, live_tensor, once, params, swapped
from autograder.grading.compare import expect_close, seeded, set_seed, yours_vs_expected
from autograder.grading.diagnose import IN_PLACE, LOOP_SHORT
from autograder.grading.result import failure

RELU = "nn.ReLU where the book's example network uses GELU (nn.Sequential(nn.Linear(...), GELU()))"
BIASES_TOO = "the biases' gradients reported too (the book's print_gradients keeps only names with 'weight' in them)"

points = pytest.mark.points
NET = "shortcuts.ExampleDeepNeuralNetwork"
SIZES = [[3, 3, 3, 3, 3, 1], [4, 4, 2, 2, 2, 3], [5, 5, 5, 5, 5, 5]]


def activations(sizes, seed):
    return {f"layers.{i}.1": linear_map(sizes[i + 1], seed + 10 * i) for i in range(5)}


def reference_net(ref, sizes, use_shortcut, seed):
    def build():
        set_seed(seed)
        return ref.shortcuts.ExampleDeepNeuralNetwork(sizes, use_shortcut)
    return once(("built", ref.shortcuts.ExampleDeepNeuralNetwork, tuple(sizes), use_shortcut, seed), build)


def net_model(x, net, shortcut):
    """The network on the stand-ins, with a shortcut wherever ``shortcut(shapes match)`` says."""
    for layer in net.layers:
        out = layer(x)
        x = x + out if shortcut(x.shape == out.shape) else out
    return x


@points(4)
def test_shortcut_forward(student, ref, seeds):
    """with use_shortcut, a layer whose output keeps its input's shape adds its input; without, never; x kept"""
    steps, cases = [], []
    for i, sizes in enumerate(SIZES):
        for use in (False, True):
            k = len(cases)
            net = swapped(reference_net(ref, sizes, use, seeds(f"net{i}")), activations(sizes, seeds(f"gelus{i}")))
            x = seeded(2, sizes[0], seed=seeds(f"x{k}"))
            # x lives in the child and is read back after the call: a forward that adds in place
            # (x += layer(x)) on the caller's tensor shows (the docstring: forward leaves it unchanged)
            steps += [{"let": f"net{k}", "call": NET, "args": [sizes, use], "train": False,
                       "stand_in": activations(sizes, seeds(f"gelus{i}")), "params_keep": KEEP, "params": params(net)},
                      live_tensor(f"x{k}", f"net{k}.layers.0.0.weight", x),
                      {"let": f"out{k}", "call": f"net{k}", "args": [{"$ref": f"x{k}"}], "return": True},
                      {"let": f"x{k}_after", "attr": f"x{k}", "return": True}]
            cases.append((x, net, use, f"ExampleDeepNeuralNetwork({sizes}, use_shortcut={use}) on input (2, {sizes[0]})"))
    plan = student.plan(steps, needs=NET)
    for k, (x, net, use, what) in enumerate(cases):
        with torch.no_grad():
            expected = net_model(x, net, lambda same: use and same)
            mistakes = {"shortcuts added although use_shortcut is False": lambda: net_model(x, net, lambda same: same),
                        "no shortcuts although use_shortcut is True": lambda: net_model(x, net, lambda same: False)}
        expect_close(plan.values[f"out{k}"], expected, what + " (its GELUs replaced by the grader's linear maps)",
                     mistakes)
    for k, (x, net, use, what) in enumerate(cases):
        if not torch.equal(plan.values[f"x{k}_after"], x):
            raise failure(f"{what} changed the caller's input in place: forward must leave x as it was "
                          "(x = x + layer_output makes a new tensor; x += layer_output writes into the caller's).",
                          IN_PLACE)


@points(2)
def test_each_layer_is_linear_then_your_gelu(student, seeds):
    """self.layers is a ModuleList of five (nn.Linear, GELU) pairs: layers.i.0.weight/bias, layers.i.1 your GELU"""
    sizes = SIZES[1]
    # the network built with torch's GELU in place of the name GELU (feed_forward's, whatever it
    # does: a mistake in it is feed_forward's): each activation must then be that GELU, computed here
    steps = [{"let": "net", "call": NET, "args": [sizes, True], "inject": {"feed_forward.GELU": TORCH_GELU}},
             {"let": "names", "grads": "net", "return": True}]
    probes = {i: seeded(3, sizes[i + 1], seed=seeds(f"probe{i}"), scale=2.0) for i in range(5)}
    for i, probe in probes.items():
        steps.append({"let": f"act{i}", "call": f"net.layers.{i}.1", "args": [probe], "return": True})
    plan = student.plan(steps, needs=NET)
    names = list(plan.values["names"])
    expected = [f"layers.{i}.0.{p}" for i in range(5) for p in ("weight", "bias")]
    if names != expected:
        short = names == expected[:-2]  # the last (Linear, GELU) pair missing: the loop ran one step short
        raise failure(f"ExampleDeepNeuralNetwork({sizes}, True): " + yours_vs_expected(
            yours=names, yours_are="has parameters", expected=expected, expected_are="the book's are")
            + " (five nn.Sequential(nn.Linear(...), GELU()) in an nn.ModuleList).", LOOP_SHORT if short else None)
    for i, probe in probes.items():
        act = plan.values[f"act{i}"]
        if close(act, gelu(probe)):
            continue
        relu = isinstance(act, torch.Tensor) and act.shape == probe.shape and torch.equal(act, probe.clamp(min=0))
        raise failure(f"ExampleDeepNeuralNetwork.layers[{i}][1] is not the GELU of feed_forward.py: built with torch's "
                      "GELU in place of that class, it does not give a GELU's values (use GELU(), imported from "
                      "feed_forward).", RELU if relu else None)


def close(actual, expected):
    return isinstance(actual, torch.Tensor) and actual.shape == expected.shape and \
        torch.allclose(actual, expected, atol=1e-6)


@points(2)
def test_shortcut_seeded_init(student, ref):
    """the five layers created in order: the book's weights after torch.manual_seed(123)"""
    sizes = SIZES[0]
    plan = student.plan([{"let": "net", "call": NET, "args": [sizes, False], "seed": 123},
                         {"let": "gen", "call": "net.named_parameters"},
                         {"let": "state", "iterate": "gen", "return": True}], needs=NET)
    mine = dict(plan.values["state"])
    expected = params(reference_net(ref, sizes, False, 123))
    if sorted(mine) != sorted(expected):
        raise AssertionError("ExampleDeepNeuralNetwork: " + yours_vs_expected(
            yours=sorted(mine), yours_are="has parameters", expected=sorted(expected)))
    for key, value in expected.items():
        if not torch.equal(mine[key], value):
            raise AssertionError(f"{key} after torch.manual_seed(123) differs from the book's draw: create the five "
                                 "layers in order, each nn.Linear before its GELU, and nothing random before them")


def gradient_model(net, x, *, reduce="mean", absolute=True, loss="mse", which="weight"):
    net = copy.deepcopy(net)
    out = net(x)
    value = F.mse_loss(out, torch.zeros_like(out)) if loss == "mse" else out.sum()
    value.backward()
    found = {}
    for name, p in net.named_parameters():
        if which in name:
            g = p.grad.abs() if absolute else p.grad
            found[name] = (g.mean() if reduce == "mean" else g.sum()).item()
    return found


@points(4)
def test_print_gradients(student, ref, seeds):
    """print_gradients returns {weight name: mean absolute gradient} after one MSE backward against zeros"""
    sizes, spec = SIZES[0], activations(SIZES[0], seeds("gelus"))
    net = swapped(reference_net(ref, sizes, True, 123), spec)
    x = torch.tensor([[1.0, 0.0, -1.0]])
    plan = student.plan([{"let": "net", "call": NET, "args": [sizes, True], "stand_in": spec, "params_keep": KEEP,
                          "params": params(net)},
                         {"let": "means", "call": "shortcuts.print_gradients", "args": [{"$ref": "net"}, x],
                          "grad": True, "return": True}], needs="shortcuts.print_gradients")
    means = plan.values["means"]
    expected = gradient_model(net, x)
    what = f"print_gradients(ExampleDeepNeuralNetwork({sizes}, use_shortcut=True), {x.tolist()}) (GELUs stood in)"
    if not isinstance(means, dict):
        raise AssertionError(f"{what} returned {type(means).__name__}; return a dict {{name: mean}}, as it prints")
    if list(means) != list(expected):
        biases = len(means) > len(expected) and [n for n in means if not n.endswith(".bias")] == list(expected)
        raise failure(f"{what}: " + yours_vs_expected(yours=list(means), yours_are="returned the names",
                                                      expected=list(expected), expected_are="expected the weights"),
                      BIASES_TOO if biases else None)
    models = {"the mean of the gradient without abs()": dict(absolute=False),
              "the sum instead of the mean": dict(reduce="sum"),
              "a loss of output.sum() instead of the MSE against zeros": dict(loss="sum")}
    for name, value in expected.items():
        got = means[name]
        if isinstance(got, torch.Tensor) and got.numel() == 1:  # a one-element tensor says the same
            got = got.item()
        if type(got) not in (int, float) or abs(got - value) > 1e-5 + 1e-4 * abs(value):
            mistake = next((model for model, change in models.items()
                            if type(got) in (int, float) and
                            abs(got - gradient_model(net, x, **change)[name]) <= 1e-5 + 1e-4 * abs(value)), None)
            raise failure(f"{what}: {name}: " + yours_vs_expected(yours=repr(got), yours_are="gave",
                                                                   expected=f"{value:.6g}") + ".", mistake)
