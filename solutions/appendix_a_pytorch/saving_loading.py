"""Section A.8: saving a model's weights to a file, and loading them back."""
import torch


def save_model(model, path):
    """Section A.8: ``torch.save(model.state_dict(), path)``: the file at ``path`` holds the
    model's state dict (its parameter names and tensors), as ``torch.load`` reads it back."""
    ### BEGIN SOLUTION
    torch.save(model.state_dict(), path)
    ### END SOLUTION


def load_model(model, path):
    """Section A.8: ``model.load_state_dict(torch.load(path))``: the weights of the file at
    ``path`` (a state dict saved with ``torch.save``) loaded into ``model``, which has the same
    architecture; returns ``model``."""
    ### BEGIN SOLUTION
    model.load_state_dict(torch.load(path))
    return model
    ### END SOLUTION
