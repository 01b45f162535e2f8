"""Hidden checks for section A.8: saving and loading a model's weights (10 points).

Saving is judged by what the grader itself reads of the file: its bytes come back as text and are
read with torch.load(weights_only=True) in a fresh child that never imported the submission. Loading
is judged on a file the grader wrote itself (torch.save of its own state dict, here): the weights in
the model afterwards must be the grader's."""
import io
import secrets

import pytest
import torch

from _basics import network_weights, stand_in_step
from autograder.grading.compare import expect_close, value, yours_vs_expected

points = pytest.mark.points
MODULE = "saving_loading"
SIZES = (3, 5, 2, 0.0)
FRESH_CHILD_MEMORY = 1 << 30
NOT_RETURNED = "the model not returned (return model)"
WHOLE_MODEL = "the whole model saved (torch.save(model, path)): save model.state_dict()"


def path_of(tag):
    return f"/tmp/appendix-a-{tag}-{secrets.token_hex(8)}.pth"


@points(5)
def test_save_model(student, seeds):
    """save_model writes torch.save(model.state_dict(), path): the grader reads the model's weights from it"""
    weights = network_weights(*SIZES[:3], seeds("w"))
    path = path_of("save")
    plan = student.plan([stand_in_step("m", SIZES, weights),
                         {"let": "save", "call": f"{MODULE}.save_model", "args": [{"$ref": "m"}, path]},
                         {"let": "bytes", "call": "basics_stand_ins.file_hex", "args": [path], "return": True,
                          "what": f"reading {path}"}], needs=f"{MODULE}.save_model")
    what = "save_model(the grader's network, path)"
    if plan.failed("save") is not None:
        value(plan, "save", what)
    text = value(plan, "bytes", f"the file {what} wrote")
    if not isinstance(text, str):
        raise AssertionError(f"the file {what} wrote could not be read")
    # read in a child of its own, which runs none of the submission's code
    read = student.plan([{"let": "sd", "call": "basics_stand_ins.state_dict_from_hex", "args": [text], "return": True,
                          "what": "torch.load(the file, weights_only=True)"}],
                        needs="basics_stand_ins.state_dict_from_hex", memory=FRESH_CHILD_MEMORY)
    got = value(read, "sd", f"the file {what} wrote, read with torch.load(weights_only=True)",
                [(r"weights_only|Unpickl|not a state dict", WHOLE_MODEL)])
    if set(got) != set(weights):
        raise AssertionError(f"the file {what} wrote holds " + yours_vs_expected(
            yours=sorted(got), yours_are="", expected=f"the model's state_dict keys {sorted(weights)}"))
    for name, tensor in weights.items():
        expect_close(got[name], tensor, f"{name} in the file {what} wrote", atol=0, rtol=0)


@points(5)
def test_load_model(student, seeds):
    """load_model loads the state dict of a torch.save file into the model and returns the model"""
    saved = network_weights(*SIZES[:3], seeds("saved"))
    buffer = io.BytesIO()
    torch.save(saved, buffer)  # the grader's own file, written here
    path = path_of("load")
    plan = student.plan([{"let": "write", "call": "basics_stand_ins.write_hex", "args": [path, buffer.getvalue().hex()],
                          "what": f"writing {path}"},
                         stand_in_step("m", SIZES, network_weights(*SIZES[:3], seeds("other"))),
                         {"let": "out", "call": f"{MODULE}.load_model", "args": [{"$ref": "m"}, path]},
                         {"let": "after", "parameters": "m", "return": True},
                         {"let": "returned", "parameters": "out", "return": True},
                         {"let": "removed", "call": "basics_stand_ins.os.remove", "args": [path],
                          "what": f"removing {path}"}], needs=f"{MODULE}.load_model")
    what = "load_model(a network of other weights, the path of the grader's torch.save file)"
    if plan.failed("out") is not None:
        value(plan, "out", what)
    for step, whose in (("after", "the model passed in"), ("returned", "the model returned")):
        got = value(plan, step, f"the weights of {whose} after {what}",
                    [(r"NoneType", NOT_RETURNED)] if step == "returned" else ())
        for name, tensor in saved.items():
            if not isinstance(got.get(name), torch.Tensor):
                raise AssertionError(f"{what}: {whose} has no {name}.")
            expect_close(got[name], tensor, f"{name} of {whose} after {what}", atol=0, rtol=0)
