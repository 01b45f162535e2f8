"""Public tests for section A.7: the book's training loop and accuracy.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from basics_stand_ins import StandInNetwork
from public_tests import expect_close, expect_equal
from training_loop import compute_accuracy, train_model

X_train = torch.tensor([[-1.2, 3.1], [-0.9, 2.9], [-0.5, 2.6], [2.3, -1.1], [2.7, -1.5]])
y_train = torch.tensor([0, 0, 0, 1, 1])


def book_network():
    """The book's NeuralNetwork(2, 2), built here from torch's layers in the same order (the same
    weights after a seed): neural_network.py is graded in its own part."""
    return torch.nn.Sequential(torch.nn.Linear(2, 30), torch.nn.ReLU(), torch.nn.Linear(30, 20), torch.nn.ReLU(),
                               torch.nn.Linear(20, 2))


def book_loader():
    """The book's train_loader (torch's own DataLoader: data_loaders.py is graded in its own part)."""
    dataset = torch.utils.data.TensorDataset(X_train, y_train)
    return torch.utils.data.DataLoader(dataset, batch_size=2, shuffle=True, num_workers=0, drop_last=True)


def test_the_books_training_run(capsys):
    torch.manual_seed(123)
    train_loader = book_loader()
    torch.manual_seed(123)
    model = book_network()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    train_model(model, train_loader, optimizer, num_epochs=3)
    printed = capsys.readouterr().out
    # the book's losses, recomputed on torch 2.13.0: the same to two decimals
    for line in ("Epoch: 001/003 | Batch 000/002 | Train Loss: 0.75", "Epoch: 003/003 | Batch 001/002 | Train Loss: 0.00"):
        expect_equal(line in printed, True, f'{line!r} printed by train_model')
    with torch.no_grad():
        outputs = model(X_train)
    expect_close(outputs, torch.tensor([[2.8569, -4.1618], [2.5382, -3.7548], [2.0944, -3.1820],
                                        [-1.4814, 1.4816], [-1.7176, 1.7342]]),
                 'the trained model on X_train (recomputed on torch 2.13.0)', atol=1e-3)
    expect_equal(torch.argmax(outputs, dim=1), y_train, 'the predictions on X_train')
    expect_equal(compute_accuracy(model, train_loader), 1.0, 'compute_accuracy(model, train_loader)')


def test_training_mode_and_zero_grad():
    """On a network with dropout: training mode for every step, gradients cleared before each."""
    torch.manual_seed(0)
    pairs = [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(3)]
    models = [StandInNetwork(3, 6, 2, 0.5) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.3) for m in models]
    models[0].eval()
    torch.manual_seed(1)
    train_model(models[0], pairs, optimizers[0], num_epochs=2)
    torch.manual_seed(1)
    for _ in range(2):   # the book's steps, here
        models[1].train()
        for features, labels in pairs:
            loss = torch.nn.functional.cross_entropy(models[1](features), labels)
            optimizers[1].zero_grad()
            loss.backward()
            optimizers[1].step()
    expect_close(models[0].layers[0].weight.detach(), models[1].layers[0].weight.detach(),
                 'the first layer after train_model, beside the book\'s steps after the same seed', atol=1e-5)


def test_accuracy_counts_examples_in_eval_mode():
    torch.manual_seed(0)
    model = StandInNetwork(2, 8, 2, 0.5).train()
    X, y = torch.randn(5, 2), torch.tensor([0, 1, 1, 0, 1])
    with torch.no_grad():
        right = (model.eval()(X).argmax(dim=1) == y).float()
    model.train()
    pairs = [(X[:4], y[:4]), (X[4:], y[4:])]   # the last batch smaller
    acc = compute_accuracy(model, pairs)
    expect_close(torch.tensor(acc), right.mean(), 'compute_accuracy over batches of 4 and 1, in eval mode',
                 mistakes=[("the mean of the batches' accuracies", (right[:4].mean() + right[4:].mean()) / 2)])
