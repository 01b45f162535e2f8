"""Public tests for section A.6: the book's toy dataset and its loaders.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from data_loaders import ToyDataset, make_loaders
from public_tests import expect_equal

X_train = torch.tensor([[-1.2, 3.1], [-0.9, 2.9], [-0.5, 2.6], [2.3, -1.1], [2.7, -1.5]])
y_train = torch.tensor([0, 0, 0, 1, 1])
X_test = torch.tensor([[-0.8, 2.8], [2.6, -1.6]])
y_test = torch.tensor([0, 1])


def test_the_books_toy_dataset():
    train_ds = ToyDataset(X_train, y_train)
    expect_equal(len(train_ds), 5, 'len(train_ds)')
    expect_equal(len(ToyDataset(X_train[:3], y_train[:3])), 3, 'len of a dataset of 3 examples with 2 features')
    features, label = train_ds[3]
    expect_equal(features, X_train[3], 'the features of train_ds[3]')
    expect_equal(label, y_train[3], 'the label of train_ds[3]')
    expect_equal(train_ds.features, X_train, 'train_ds.features')
    expect_equal(train_ds.labels, y_train, 'train_ds.labels')


def test_the_books_loaders():
    train_loader, test_loader = make_loaders(ToyDataset(X_train, y_train), ToyDataset(X_test, y_test))
    torch.manual_seed(123)
    batches = list(train_loader)
    # shuffled after the seed and drawn on this machine: compared with torch's own DataLoader here
    torch.manual_seed(123)
    expected = list(torch.utils.data.DataLoader(ToyDataset(X_train, y_train), batch_size=2, shuffle=True, drop_last=True))
    expect_equal(len(batches), 2, 'the number of batches of train_loader (5 examples, batches of 2, the last dropped)')
    for k, ((x, y), (ex, ey)) in enumerate(zip(batches, expected)):
        expect_equal(x, ex, f'the features of train batch {k} after torch.manual_seed(123)')
        expect_equal(y, ey, f'the labels of train batch {k} after torch.manual_seed(123)')
    (x, y), = list(test_loader)
    expect_equal(x, X_test, 'the one test batch, in order')
    expect_equal(y, y_test, 'the labels of the test batch')
    train_loader, test_loader = make_loaders(ToyDataset(X_train, y_train), ToyDataset(X_test, y_test), batch_size=3)
    expect_equal([len(y) for _, y in train_loader], [3], 'the batch sizes of train_loader with batch_size=3')
    expect_equal([len(y) for _, y in test_loader], [2], 'the batch sizes of test_loader with batch_size=3')
