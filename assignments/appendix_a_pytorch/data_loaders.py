"""Section A.6: a dataset of the book's toy examples, and the loaders that batch it."""
from torch.utils.data import DataLoader, Dataset


class ToyDataset(Dataset):
    """Listing A.6: ``ToyDataset(X, y)`` keeps the feature rows as ``self.features`` and the
    class labels as ``self.labels``. ``dataset[index]`` returns ``(features[index],
    labels[index])``: one example's feature row and its label; ``len(dataset)`` returns the
    number of examples (rows of ``y``), not of features."""

    def __init__(self, X, y):
        raise NotImplementedError("ToyDataset.__init__: replace this line with your code")

    def __getitem__(self, index):
        raise NotImplementedError("ToyDataset.__getitem__: replace this line with your code")

    def __len__(self):
        raise NotImplementedError("ToyDataset.__len__: replace this line with your code")


def make_loaders(train_ds, test_ds, batch_size=2):
    """Listing A.7: returns ``(train_loader, test_loader)``, two ``DataLoader``s with
    ``batch_size`` and ``num_workers=0``: ``train_loader`` shuffles (``shuffle=True``, the order
    drawn from ``torch.manual_seed`` when it is iterated) and drops the last batch where it would
    be smaller (``drop_last=True``); ``test_loader`` keeps the order (``shuffle=False``) and every
    example."""
    raise NotImplementedError("make_loaders: replace this line with your code")
