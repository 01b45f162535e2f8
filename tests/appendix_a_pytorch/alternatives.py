'''A bank of correct appendix-A submissions written in other students' styles.

Each module's "plain" variant is the reference itself without docstrings; the others: tensors by
``torch.as_tensor``/``.float()``/``.view``/``@``; the forward by ``1 / (1 + exp(-z))`` and the
loss by its formula, gradients by ``torch.autograd.grad`` on both at once; the network written
with ``from torch import nn`` and ``nn.Sequential(*layers)`` or as an ``OrderedDict`` with the
book's indices; a dataset that keeps views and counts by ``len``; loaders with keyword order of
their own; the loop by ``zip(range(...), loader)`` with ``zero_grad`` first, the accuracy by
``sum``/``item``; saving with ``weights_only`` and ``map_location``. Each takes the book's steps,
so each must score full marks (``tests/test_alternatives.py`` grades them).
'''
from functools import partial

import banks

plain = partial(banks.plain, "appendix_a_pytorch")   # the reference without docstrings

TENSORS = {"plain": plain("tensor_basics"), "as_tensor": '''import torch


def create_tensors():
    values = [1, [1, 2, 3], [[1, 2], [3, 4]], [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]
    return tuple(torch.as_tensor(v) for v in values)


def convert_to_float32(tensor):
    return tensor.float()


def reshape_tensor(tensor, rows, cols):
    return tensor.contiguous().view(rows, cols)


def matmul_with_transpose(tensor2d):
    return tensor2d @ tensor2d.transpose(0, 1)
'''}

AUTOGRAD = {"plain": plain("autograd_basics"), "formula": '''import torch


def logistic_forward(x1, w1, b):
    z = torch.add(torch.mul(x1, w1), b)
    return 1 / (1 + torch.exp(-z))


def logistic_loss(a, y):
    return torch.nn.BCELoss()(a, y)


def grads_with_autograd(x1, w1, b, y):
    loss = logistic_loss(logistic_forward(x1, w1, b), y)
    grad_w1, grad_b = torch.autograd.grad(loss, [w1, b])
    return grad_w1, grad_b


def grads_with_backward(x1, w1, b, y):
    prediction = logistic_forward(x1, w1, b)
    logistic_loss(prediction, y).backward()
    return (w1.grad, b.grad)
'''}

NETWORK = {"plain": plain("neural_network"), "from_nn": '''from torch import nn


class NeuralNetwork(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        sizes = [num_inputs, 30, 20]
        layers = []
        for n_in, n_out in zip(sizes, sizes[1:]):
            layers += [nn.Linear(n_in, n_out), nn.ReLU()]
        layers.append(nn.Linear(sizes[-1], num_outputs))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


def count_trainable_parameters(model):
    total = 0
    for param in model.parameters():
        if param.requires_grad:
            total += param.numel()
    return total
''', "ordered": '''from collections import OrderedDict

import torch.nn as nn
import torch.nn.functional as F  # noqa: F401  (the book imports it)


class NeuralNetwork(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(NeuralNetwork, self).__init__()
        self.layers = nn.Sequential(OrderedDict([
            ("0", nn.Linear(num_inputs, 30)), ("1", nn.ReLU()),
            ("2", nn.Linear(30, 20)), ("3", nn.ReLU()),
            ("4", nn.Linear(20, num_outputs))]))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def count_trainable_parameters(model):
    return int(sum(p.numel() for p in filter(lambda p: p.requires_grad, model.parameters())))
'''}

LOADERS = {"plain": plain("data_loaders"), "len": '''import torch


class ToyDataset(torch.utils.data.Dataset):
    def __init__(self, X, y):
        super().__init__()
        self.features, self.labels = X, y

    def __getitem__(self, index):
        return (self.features[index], self.labels[index])

    def __len__(self):
        return len(self.labels)


def make_loaders(train_ds, test_ds, batch_size=2):
    loader = torch.utils.data.DataLoader
    train_loader = loader(train_ds, batch_size, True, drop_last=True, num_workers=0)
    test_loader = loader(test_ds, batch_size=batch_size, num_workers=0)
    return train_loader, test_loader
'''}

TRAINING = {"plain": plain("training_loop"), "zip": '''import torch
from torch.nn import functional as F


def train_model(model, train_loader, optimizer, num_epochs):
    n_batches = len(train_loader)
    for epoch in range(1, num_epochs + 1):
        model.train()
        for batch_idx, (features, labels) in zip(range(n_batches), train_loader):
            optimizer.zero_grad()
            logits = model(features)
            loss = F.cross_entropy(logits, labels)
            loss.backward()
            optimizer.step()
            print("Epoch: %03d/%03d | Batch %03d/%03d | Train Loss: %.2f"
                  % (epoch, num_epochs, batch_idx, n_batches, loss.item()))
        model.eval()
    return None


@torch.no_grad()
def compute_accuracy(model, dataloader):
    model.eval()
    correct, total = 0, 0
    for features, labels in dataloader:
        predictions = model(features).argmax(dim=-1)
        correct += (predictions == labels).sum().item()
        total += labels.numel()
    return correct / total
'''}

SAVING = {"plain": plain("saving_loading"), "weights_only": '''import torch


def save_model(model, path):
    state = model.state_dict()
    torch.save(state, path)


def load_model(model, path):
    state_dict = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state_dict, strict=True)
    return model
'''}

VARIANTS = {"tensor_basics": TENSORS, "autograd_basics": AUTOGRAD, "neural_network": NETWORK,
            "data_loaders": LOADERS, "training_loop": TRAINING, "saving_loading": SAVING}

Alternative = partial(banks.Alternative, VARIANTS)
ALL_OTHER = {"tensor_basics": "as_tensor", "autograd_basics": "formula", "neural_network": "from_nn",
             "data_loaders": "len", "training_loop": "zip", "saving_loading": "weights_only"}

ALTERNATIVES = [
    Alternative("plain student: the book's code without docstrings"),
    Alternative("tensors by as_tensor, .float(), .view and @", {"tensor_basics": "as_tensor"}),
    Alternative("the sigmoid by its formula, BCELoss, both gradients in one autograd.grad",
                {"autograd_basics": "formula"}),
    Alternative("the network from `from torch import nn`, layers built in a loop, parameters counted by hand",
                {"neural_network": "from_nn"}),
    Alternative("the network as an OrderedDict with the book's indices, forward by a loop over the layers",
                {"neural_network": "ordered"}),
    Alternative("a dataset counted by len, loaders with positional arguments", {"data_loaders": "len"}),
    Alternative("the loop over zip(range(...), loader), zero_grad first, %-formatting; accuracy under @no_grad",
                {"training_loop": "zip"}),
    Alternative("saving the state dict by name, loading with weights_only and map_location",
                {"saving_loading": "weights_only"}),
    Alternative("every module in another style", ALL_OTHER),
    Alternative("every module in another style, the network as an OrderedDict",
                {**ALL_OTHER, "neural_network": "ordered"}),
    Alternative("plain, indented with tabs", tabs=True),
    Alternative("every module in another style, indented with tabs", ALL_OTHER, tabs=True),
    Alternative("plain, Windows line endings", newline="\r\n"),
    Alternative("every module in another style, saved with a byte-order mark", ALL_OTHER, encoding="utf-8-sig"),
    Alternative("plain, a coding line and a French comment first", coding_line="# -*- coding: utf-8 -*-"),
    Alternative("the other tensors and network with the book's loop and loaders",
                {"tensor_basics": "as_tensor", "neural_network": "ordered", "saving_loading": "weights_only"}),
]
