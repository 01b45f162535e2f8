"""Section A.6: a dataset of the book's toy examples, and the loaders that batch it."""
from torch.utils.data import DataLoader, Dataset


class ToyDataset(Dataset):
    """Listing A.6: ``ToyDataset(X, y)`` keeps the feature rows as ``self.features`` and the
    class labels as ``self.labels``. ``dataset[index]`` returns ``(features[index],
    labels[index])``: one example's feature row and its label; ``len(dataset)`` returns the
    number of examples (rows of ``y``), not of features."""

    def __init__(self, X, y):
        ### BEGIN SOLUTION
        self.features = X
        self.labels = y
        ### END SOLUTION

    def __getitem__(self, index):
        ### BEGIN SOLUTION
        one_x = self.features[index]
        one_y = self.labels[index]
        return one_x, one_y
        ### END SOLUTION

    def __len__(self):
        ### BEGIN SOLUTION
        return self.labels.shape[0]
        ### END SOLUTION


def make_loaders(train_ds, test_ds, batch_size=2):
    """Listing A.7: returns ``(train_loader, test_loader)``, two ``DataLoader``s with
    ``batch_size`` and ``num_workers=0``: ``train_loader`` shuffles (``shuffle=True``, the order
    drawn from ``torch.manual_seed`` when it is iterated) and drops the last batch where it would
    be smaller (``drop_last=True``); ``test_loader`` keeps the order (``shuffle=False``) and every
    example."""
    ### BEGIN SOLUTION
    train_loader = DataLoader(dataset=train_ds, batch_size=batch_size, shuffle=True, num_workers=0, drop_last=True)
    test_loader = DataLoader(dataset=test_ds, batch_size=batch_size, shuffle=False, num_workers=0)
    return train_loader, test_loader
    ### END SOLUTION
