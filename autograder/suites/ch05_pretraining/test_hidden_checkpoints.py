"""Hidden checks for sections 5.4-5.5: saving and loading; OpenAI's GPT-2 weights in a GPT (15 points).

Saving and loading are judged by their witness: training resumed from the file must go on exactly
as the grader's training without the break (the model's weights and AdamW's moments both). The
grader's own side of each never runs where the submission ran: the file save_model_and_optimizer
wrote comes back as bytes and is read by torch.load(weights_only=True) in a fresh child that never
had the submission (the tensors it holds come back as data, and training resumes from them here);
the file load_model_and_optimizer reads is the grader's, torch.save of its own tensors here. The
training steps in the child are the plan's own (forward, backward, step), on the grader's models
and optimizers (stand_ins.py), not the student's. load_weights_into_gpt fills stand_ins.GPTParameters
(the book's names) from made-up weights in OpenAI's layout, as NumPy arrays; the expected parameters
are the reference's, loaded here."""
import io
import secrets

import pytest
import torch

from _pretraining import ran, LAYOUT, gpt2_layout, load_mistakes, loaded, numpy_steps, tiny, tiny_step, tiny_weights
from autograder.grading.compare import expect_close, seeded, set_seed, value
from autograder.grading.kit import known_mistake
from autograder.grading.result import failure
from autograder.support.stand_ins import adamw

points = pytest.mark.points
CFG = {"vocab_size": 13, "context_length": 5, "emb_dim": 4, "drop_rate": 0.2}
LAYOUT_CFG = {"vocab_size": 11, "context_length": 7, "emb_dim": 6, "n_layers": 2, "drop_rate": 0.0, "qkv_bias": True}
SETTINGS = {"lr": 0.01, "weight_decay": 0.1}
NO_SHAPE_CHECK = "assign without the shape check (raise ValueError where left.shape != right.shape)"
NO_OPTIMIZER = "the optimizer's state not saved or not loaded (AdamW's moments: optimizer.load_state_dict)"
NOT_TRAIN = "the model not put back in training mode after loading (model.train(): dropout is on in training)"
KEYS = ("model_state_dict", "optimizer_state_dict")


def steps(model_let, opt_let, x, weight, n, seed, tag):
    """n training steps in the plan: dropout after ``seed``, backward of sum(output * weight), step."""
    out = []
    for k in range(n):
        out += [{"let": f"{tag}z{k}", "call": f"{opt_let}.zero_grad"},
                {"let": f"{tag}y{k}", "call": model_let, "args": [x], "grad": True, "seed": seed + k},
                {"let": f"{tag}b{k}", "backward": f"{tag}y{k}", "weight": weight},
                {"let": f"{tag}s{k}", "call": f"{opt_let}.step"}]
    return out


def train_steps(model, opt, x, weight, first, last, seed):
    """Steps ``first`` to ``last - 1`` of the grader's training, here (dropout after ``seed + k``)."""
    for k in range(first, last):
        opt.zero_grad()
        set_seed(seed + k)
        with torch.enable_grad():
            (model(x) * weight).sum().backward()
        opt.step()


def resumed(seeds, *, load_optimizer=True, train_after=True):
    """The weights after 2 steps, a break, 2 more, computed here (the break changes nothing when
    saving and loading are right; the switches model what a mistake loses)."""
    model = tiny(CFG, tiny_weights(CFG, seeds("model")), train=True)
    opt = adamw(model, **SETTINGS)
    x, weight = _data(seeds)
    train_steps(model, opt, x, weight, 0, 2, seeds("drop"))
    if not load_optimizer:
        opt = adamw(model, **SETTINGS)
    model.train(train_after)
    train_steps(model, opt, x, weight, 2, 4, seeds("drop"))
    return {k: v.detach() for k, v in model.named_parameters()}


def _data(seeds):
    x = torch.randint(0, CFG["vocab_size"], (2, 4), generator=torch.Generator().manual_seed(seeds("x")))
    return x, seeded(2, 4, CFG["vocab_size"], seed=seeds("w"))


def judge(got, seeds, what):
    want = resumed(seeds)
    for name in ("tok_emb.weight", "out_head.weight"):
        expect_close(got.get(name), want[name], f"{name} after {what}", {
            NO_OPTIMIZER: lambda n=name: resumed(seeds, load_optimizer=False)[n],
            NOT_TRAIN: lambda n=name: resumed(seeds, train_after=False)[n]}, atol=1e-5, rtol=1e-4)


def _path():
    return f"/tmp/ch05-{secrets.token_hex(8)}.pth"


@points(4)
def test_save_model_and_optimizer(student, seeds):
    """save_model_and_optimizer writes the book's file: torch.load gives model_state_dict and optimizer_state_dict"""
    x, weight = _data(seeds)
    path = _path()
    plan = student.plan([tiny_step("m", CFG, tiny_weights(CFG, seeds("model")), train=True),
                         {"let": "opt", "call": "stand_ins.adamw", "args": [{"$ref": "m"}], "kwargs": SETTINGS},
                         *steps("m", "opt", x, weight, 2, seeds("drop"), "a"),
                         {"let": "save", "call": "checkpoints.save_model_and_optimizer",
                          "args": [{"$ref": "m"}, {"$ref": "opt"}, path]},
                         # the file's bytes, whatever the child's code does: they are read by torch below
                         {"let": "file", "read_file": path, "remove": True, "return": True}],
                        needs="checkpoints.save_model_and_optimizer")
    what = "save_model_and_optimizer(model, optimizer, path)"
    ran(plan, "save", what)
    data = value(plan, "file", f"the file {what} wrote")
    # torch's own load, in a child that never had the submission, from memory: tensors and numbers come back
    ck = student.plan([{"let": "f", "buffer": data},
                       {"let": "ck", "call": "torch.load", "args": [{"$ref": "f"}],
                        "kwargs": {"weights_only": True, "map_location": "cpu"}, "what": f"torch.load({path!r})"},
                       *[{"let": key, "call": "ck.__getitem__", "args": [key], "what": f"checkpoint[{key!r}] (the book's key)",
                          "return": key == KEYS[0]} for key in KEYS],
                       {"let": "groups", "call": f"{KEYS[1]}.__getitem__", "args": ["param_groups"], "return": True},
                       {"let": "state", "call": f"{KEYS[1]}.__getitem__", "args": ["state"]},
                       {"let": "items", "call": "state.items"},
                       {"let": "moments", "iterate": "items", "return": True}],
                      needs="checkpoints.save_model_and_optimizer", clean=True)
    loaded_by = f"torch.load(path, weights_only=True) of the file {what} wrote"
    for key in KEYS:
        ran(ck, key, loaded_by, [(rf"KeyError.*{key}", f"no {key!r} in the file saved (the book saves a dict of "
                                                       "model_state_dict and optimizer_state_dict)")])
    state, groups, moments = (value(ck, name, loaded_by) for name in (KEYS[0], "groups", "moments"))
    model = tiny(CFG, tiny_weights(CFG, seeds("other")), train=True)
    try:   # plain data in torch's own objects here: tensors, numbers, lists
        model.load_state_dict(state)
        opt = adamw(model, **SETTINGS)
        opt.load_state_dict({"state": {int(k): v for k, v in moments}, "param_groups": groups})
        train_steps(model, opt, x, weight, 2, 4, seeds("drop"))
    except Exception as exc:
        raise AssertionError(f"{loaded_by}: its state dicts do not load into the model and AdamW it was given "
                             f"({type(exc).__name__}: {str(exc)[:200]})") from None
    judge({k: v.detach() for k, v in model.named_parameters()}, seeds,
          "training resumed from the file save_model_and_optimizer wrote (loaded by torch.load)")


@points(5)
def test_load_model_and_optimizer(student, seeds):
    """load_model_and_optimizer restores model and optimizer and training mode: resumed training equals unbroken"""
    x, weight = _data(seeds)
    model = tiny(CFG, tiny_weights(CFG, seeds("model")), train=True)
    opt = adamw(model, **SETTINGS)
    train_steps(model, opt, x, weight, 0, 2, seeds("drop"))
    buffer = io.BytesIO()   # torch's own save of the book's file, of the grader's own tensors
    torch.save({KEYS[0]: model.state_dict(), KEYS[1]: opt.state_dict()}, buffer)
    path = _path()
    plan = student.plan([{"let": "w", "write_file": path, "bytes": torch.frombuffer(bytearray(buffer.getvalue()),
                                                                                   dtype=torch.uint8)},
                         tiny_step("m2", CFG, tiny_weights(CFG, seeds("other")), train=False),
                         {"let": "opt2", "call": "stand_ins.adamw", "args": [{"$ref": "m2"}], "kwargs": SETTINGS},
                         {"let": "load", "call": "checkpoints.load_model_and_optimizer",
                          "args": [{"$ref": "m2"}, {"$ref": "opt2"}, path]},
                         # a child without a private root writes to the machine's own /tmp: the file goes
                         {"let": "gone", "read_file": path, "remove": True},
                         *steps("m2", "opt2", x, weight, 2, seeds("drop") + 2, "b"),
                         {"let": "after", "parameters": "m2", "return": True}],
                        needs="checkpoints.load_model_and_optimizer")
    ran(plan, "load", "load_model_and_optimizer(model, optimizer, path)")
    judge(value(plan, "after", "the weights after training resumed"), seeds,
          "training resumed with load_model_and_optimizer from the book's file")


@points(2)
def test_assign(student, seeds):
    """assign: a new Parameter holding right's values; ValueError where the shapes differ"""
    left, right = seeded(3, 5, seed=seeds("left")), seeded(3, 5, seed=seeds("right"))
    plan = student.plan([{"let": "l", "call": "checkpoints.torch.nn.Parameter", "args": [left]},
                         {"let": "r", "call": "checkpoints.np.array", "args": [right]},
                         {"let": "new", "call": "checkpoints.assign", "args": [{"$ref": "l"}, {"$ref": "r"}], "return": True},
                         {"let": "rt", "call": "checkpoints.np.array", "args": [right.T.contiguous()]},
                         {"let": "bad", "call": "checkpoints.assign", "args": [{"$ref": "l"}, {"$ref": "rt"}]}],
                        needs="checkpoints.assign")
    expect_close(value(plan, "new", "assign(a (3, 5) parameter, a (3, 5) array)"), right,
                 "assign(a (3, 5) parameter, a (3, 5) array)")
    why = plan.failed("bad")
    if why is None:
        raise failure("assign(a (3, 5) parameter, a (5, 3) array) returned: it must raise ValueError where the "
                      "shapes differ.", NO_SHAPE_CHECK)
    if "ValueError" not in why:
        raise AssertionError(f"assign(a (3, 5) parameter, a (5, 3) array): {why[:300]} (expected a ValueError)")


@points(4)
def test_load_weights_into_gpt(student, ref, seeds):
    """load_weights_into_gpt: every GPT-2 weight in its place: c_attn split q, k, v and transposed, out_head tied"""
    params = gpt2_layout(LAYOUT_CFG, seeds("params"))
    steps_, arrays = numpy_steps("checkpoints", params)
    plan = student.plan([*steps_, {"let": "gpt", "call": LAYOUT, "args": [LAYOUT_CFG], "seed": seeds("init")},
                         {"let": "load", "call": "checkpoints.load_weights_into_gpt", "args": [{"$ref": "gpt"}, arrays]},
                         {"let": "after", "parameters": "gpt", "return": True}], needs="checkpoints.load_weights_into_gpt")
    what = "load_weights_into_gpt(a GPT with the book's names, GPT-2 weights of 2 blocks, emb_dim 6)"
    ran(plan, "load", what)
    got = value(plan, "after", f"the parameters after {what}")
    want, before = loaded(ref, LAYOUT_CFG, params, seeds("init"))
    missing = sorted(set(want) - set(got))
    if missing:
        raise AssertionError(f"{what}: the GPT no longer holds the parameters {', '.join(missing[:4])}")
    wrong = [name for name in want if not (isinstance(got[name], torch.Tensor) and got[name].shape == want[name].shape
                                           and torch.allclose(got[name], want[name]))]
    if wrong:
        def same(a, b):
            return 0 if all(isinstance(a[k], torch.Tensor) and a[k].shape == b[k].shape and torch.allclose(a[k], b[k])
                            for k in b) else None
        name = known_mistake(got, load_mistakes(want, before), same)
        raise failure(f"{what}: {', '.join(wrong[:4])}{' and more' if len(wrong) > 4 else ''} "
                      "do not hold the GPT-2 weights that belong there.", name)
