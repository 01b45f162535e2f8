"""Public tests for section A.8: saving a model's weights and loading them back.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from basics_stand_ins import StandInNetwork
from public_tests import expect_equal
from saving_loading import load_model, save_model


def test_save_writes_the_state_dict(tmp_path):
    torch.manual_seed(123)
    model = StandInNetwork(2, 4, 2, 0.0)
    save_model(model, tmp_path / "model.pth")
    state = torch.load(tmp_path / "model.pth", weights_only=True)
    expect_equal(sorted(state), sorted(model.state_dict()), 'the keys of the file save_model wrote (model.state_dict())')
    expect_equal(state["layers.0.weight"], model.layers[0].weight.detach(), 'layers.0.weight in the file')


def test_load_gives_the_weights_back(tmp_path):
    torch.manual_seed(123)
    model = StandInNetwork(2, 4, 2, 0.0)
    torch.save(model.state_dict(), tmp_path / "model.pth")
    other = StandInNetwork(2, 4, 2, 0.0)
    loaded = load_model(other, tmp_path / "model.pth")
    expect_equal(loaded is other, True, 'load_model returns the model it was given')
    for name, tensor in model.state_dict().items():
        expect_equal(other.state_dict()[name], tensor, f'{name} after load_model')
