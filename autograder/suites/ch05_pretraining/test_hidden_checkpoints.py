"""Hidden checks for sections 5.4-5.5: saving and loading; OpenAI's GPT-2 weights in a GPT (15 points).

Saving and loading are judged by their witness: training resumed from the file must go on exactly
as the grader's training without the break (the model's weights and AdamW's moments both), with
each direction checked against torch's own save or load of the book's file (its two keys). The
training steps are the plan's own (forward, backward, step), not the student's. load_weights_into_gpt
fills stand_ins.GPTParameters (the book's names) from made-up weights in OpenAI's layout, as NumPy
arrays; the expected parameters are the reference's, loaded here."""
import secrets

import pytest
import torch

from _pretraining import ran, LAYOUT, gpt2_layout, load_mistakes, loaded, numpy_steps, tiny, tiny_step, tiny_weights
from autograder.grading.compare import expect_close, seeded, set_seed, value
from autograder.grading.kit import known_mistake
from autograder.grading.result import failure

points = pytest.mark.points
CFG = {"vocab_size": 13, "context_length": 5, "emb_dim": 4, "drop_rate": 0.2}
LAYOUT_CFG = {"vocab_size": 11, "context_length": 7, "emb_dim": 6, "n_layers": 2, "drop_rate": 0.0, "qkv_bias": True}
SETTINGS = {"lr": 0.01, "weight_decay": 0.1}
NO_SHAPE_CHECK = "assign without the shape check (raise ValueError where left.shape != right.shape)"
NO_OPTIMIZER = "the optimizer's state not saved or not loaded (AdamW's moments: optimizer.load_state_dict)"
NOT_TRAIN = "the model not put back in training mode after loading (model.train(): dropout is on in training)"


def steps(model_let, opt_let, x, weight, n, seed, tag):
    """n training steps in the plan: dropout after ``seed``, backward of sum(output * weight), step."""
    out = []
    for k in range(n):
        out += [{"let": f"{tag}z{k}", "call": f"{opt_let}.zero_grad"},
                {"let": f"{tag}y{k}", "call": model_let, "args": [x], "grad": True, "seed": seed + k},
                {"let": f"{tag}b{k}", "backward": f"{tag}y{k}", "weight": weight},
                {"let": f"{tag}s{k}", "call": f"{opt_let}.step"}]
    return out


def optimizer_step(let, model_let):
    return [{"let": f"{let}p", "call": f"{model_let}.parameters"},
            {"let": let, "call": "torch.optim.AdamW", "args": [{"$ref": f"{let}p"}], "kwargs": SETTINGS,
             "what": "torch.optim.AdamW (torch's own in the child, whatever checkpoints.py imports)"}]


def resumed(seeds, *, load_optimizer=True, train_after=True):
    """The weights after 2 steps, a break, 2 more, computed here (the break changes nothing when
    saving and loading are right; the switches model what a mistake loses)."""
    model = tiny(CFG, tiny_weights(CFG, seeds("model")), train=True)
    opt = torch.optim.AdamW(model.parameters(), **SETTINGS)
    x, weight = _data(seeds)
    for k in range(4):
        if k == 2:
            if not load_optimizer:
                opt = torch.optim.AdamW(model.parameters(), **SETTINGS)
            if not train_after:
                model.eval()
        opt.zero_grad()
        set_seed(seeds("drop") + k)
        with torch.enable_grad():
            (model(x) * weight).sum().backward()
        opt.step()
    return {k: v.detach() for k, v in model.named_parameters()}


def _data(seeds):
    x = torch.randint(0, CFG["vocab_size"], (2, 4), generator=torch.Generator().manual_seed(seeds("x")))
    return x, seeded(2, 4, CFG["vocab_size"], seed=seeds("w"))


def resume_plan(seeds, save, load):
    """Train 2 steps, ``save`` (a step list writing the file), build a fresh model (other weights, eval
    mode) and optimizer, ``load`` them, train 2 more steps; return the weights."""
    x, weight = _data(seeds)
    path = f"/tmp/ch05-{secrets.token_hex(8)}.pth"
    return ([tiny_step("m", CFG, tiny_weights(CFG, seeds("model")), train=True), *optimizer_step("opt", "m"),
             *steps("m", "opt", x, weight, 2, seeds("drop"), "a"), *save(path),
             tiny_step("m2", CFG, tiny_weights(CFG, seeds("other")), train=False), *optimizer_step("opt2", "m2"),
             *load(path), *steps("m2", "opt2", x, weight, 2, seeds("drop") + 2, "b"),
             {"let": "after", "parameters": "m2", "return": True},
             # a child without a private root writes to the machine's own /tmp: it removes its file
             # (torch.serialization's os, reached through checkpoints.py's `import torch`)
             {"let": "removed", "call": "checkpoints.torch.serialization.os.remove", "args": [path],
              "what": f"removing {path}"}])


def judge(plan, seeds, what):
    got = value(plan, "after", what)
    want = resumed(seeds)
    for name in ("tok_emb.weight", "out_head.weight"):
        expect_close(got.get(name), want[name], f"{name} after {what}", {
            NO_OPTIMIZER: lambda n=name: resumed(seeds, load_optimizer=False)[n],
            NOT_TRAIN: lambda n=name: resumed(seeds, train_after=False)[n]}, atol=1e-5, rtol=1e-4)


@points(4)
def test_save_model_and_optimizer(student, seeds):
    """save_model_and_optimizer writes the book's file: torch.load gives model_state_dict and optimizer_state_dict"""
    def save(path):
        return [{"let": "save", "call": "checkpoints.save_model_and_optimizer", "args": [{"$ref": "m"}, {"$ref": "opt"}, path]}]

    def load(path):  # torch's own load of the book's keys
        return [{"let": "ck", "call": "checkpoints.torch.load", "args": [path], "what": f"torch.load({path!r})"},
                {"let": "msd", "call": "ck.__getitem__", "args": ["model_state_dict"],
                 "what": "checkpoint['model_state_dict'] (the book's key)"},
                {"let": "osd", "call": "ck.__getitem__", "args": ["optimizer_state_dict"],
                 "what": "checkpoint['optimizer_state_dict'] (the book's key)"},
                {"let": "lm", "call": "m2.load_state_dict", "args": [{"$ref": "msd"}]},
                {"let": "lo", "call": "opt2.load_state_dict", "args": [{"$ref": "osd"}]},
                {"let": "tr", "call": "m2.train"}]
    plan = student.plan(resume_plan(seeds, save, load), needs="checkpoints.save_model_and_optimizer")
    ran(plan, "save", "save_model_and_optimizer(model, optimizer, path)")
    for step, key in (("msd", "model_state_dict"), ("osd", "optimizer_state_dict")):
        ran(plan, step, "torch.load(path) of the file save_model_and_optimizer wrote",
            [(rf"KeyError.*{key}", f"no {key!r} in the file saved (the book saves a dict of model_state_dict and "
                                   "optimizer_state_dict)")])
    judge(plan, seeds, "training resumed from the file save_model_and_optimizer wrote (loaded by torch.load)")


@points(5)
def test_load_model_and_optimizer(student, seeds):
    """load_model_and_optimizer restores model and optimizer and training mode: resumed training equals unbroken"""
    def save(path):  # torch's own save of the book's file
        return [{"let": "msd", "call": "m.state_dict"}, {"let": "osd", "call": "opt.state_dict"},
                {"let": "save", "call": "checkpoints.torch.save",
                 "args": [{"model_state_dict": {"$ref": "msd"}, "optimizer_state_dict": {"$ref": "osd"}}, path]}]

    def load(path):
        return [{"let": "load", "call": "checkpoints.load_model_and_optimizer", "args": [{"$ref": "m2"}, {"$ref": "opt2"}, path]}]
    plan = student.plan(resume_plan(seeds, save, load), needs="checkpoints.load_model_and_optimizer")
    ran(plan, "load", "load_model_and_optimizer(model, optimizer, path)")
    judge(plan, seeds, "training resumed with load_model_and_optimizer from the book's file")


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
