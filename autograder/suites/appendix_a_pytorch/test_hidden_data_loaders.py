"""Hidden checks for section A.6: the toy dataset and its loaders (15 points).

ToyDataset on the grader's rows and labels; make_loaders on the grader's datasets (torch's own
TensorDataset), each loader iterated in the child after a seed and compared with torch's DataLoader
built and iterated here after the same seed."""
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from autograder.grading.compare import expect_close, seeded, set_seed, value, yours_vs_expected
from autograder.grading.result import failure

points = pytest.mark.points
MODULE = "data_loaders"
DATASET = "basics_stand_ins.torch.utils.data.TensorDataset"


def toy(n, num_features, seed):
    return seeded(n, num_features, seed=seed), torch.randint(0, 2, (n,), generator=torch.Generator().manual_seed(seed))


@points(7)
def test_toy_dataset(student, seeds):
    """ToyDataset: features and labels kept; dataset[i] is (features[i], labels[i]); len is the number of examples"""
    X, y = toy(7, 3, seeds("toy"))
    indices = (0, 3, 6)
    plan = student.plan([{"let": "ds", "call": f"{MODULE}.ToyDataset", "args": [X, y]},
                         {"let": "features", "attr": "ds.features", "return": True},
                         {"let": "labels", "attr": "ds.labels", "return": True},
                         {"let": "n", "len": "ds", "return": True},
                         *({"let": f"i{i}", "call": "ds.__getitem__", "args": [i], "return": True} for i in indices)],
                        needs=f"{MODULE}.ToyDataset")
    what = "ToyDataset(7 rows of 3 features, 7 labels)"
    expect_close(value(plan, "features", f"{what}.features"), X, f"{what}.features")
    expect_close(value(plan, "labels", f"{what}.labels"), y, f"{what}.labels")
    n = value(plan, "n", f"len({what})")
    if n != 7:
        raise failure(f"len({what}): " + yours_vs_expected(yours=n, expected=7) + ".",
                      "the number of features (columns) instead of examples (rows)" if n == 3 else None)
    for i in indices:
        got = value(plan, f"i{i}", f"{what}[{i}]")
        if not (isinstance(got, list) and len(got) == 2):
            raise AssertionError(f"{what}[{i}]: " + yours_vs_expected(yours=repr(got)[:100], yours_are="returned",
                                                                   expected=f"(features[{i}], labels[{i}])"))
        expect_close(got[0], X[i], f"the features of {what}[{i}]")
        expect_close(got[1], y[i], f"the label of {what}[{i}]")


def loader_batches(X, y, seed, **kwargs):
    set_seed(seed)
    return [[bx, by] for bx, by in DataLoader(TensorDataset(X, y), num_workers=0, **kwargs)]


def same(got, want):
    return (isinstance(got, list) and len(got) == len(want)
            and all(isinstance(g, list) and len(g) == 2 and all(isinstance(t, torch.Tensor) and t.shape == w.shape
                                                                  and torch.equal(t, w) for t, w in zip(g, b))
                    for g, b in zip(got, want)))


@points(8)
def test_make_loaders(student, seeds):
    """make_loaders: train shuffled after the seed, last short batch dropped; test in order, every example"""
    train, test = toy(7, 2, seeds("train")), toy(5, 2, seeds("test"))
    cases = [(3, [3]), (2, [])]
    steps = [{"let": "tr", "call": DATASET, "args": list(train)}, {"let": "te", "call": DATASET, "args": list(test)}]
    for k, (batch_size, args) in enumerate(cases):
        steps += [{"let": f"l{k}", "call": f"{MODULE}.make_loaders", "args": [{"$ref": "tr"}, {"$ref": "te"}, *args]},
                  {"let": f"trl{k}", "call": f"l{k}.__getitem__", "args": [0]},
                  {"let": f"tel{k}", "call": f"l{k}.__getitem__", "args": [1]},
                  *({"let": f"b{k}_{e}", "iterate": f"trl{k}", "seed": seeds(f"epoch{k}{e}"), "return": True}
                    for e in range(2)),
                  {"let": f"t{k}", "iterate": f"tel{k}", "seed": seeds(f"test{k}"), "return": True}]
    plan = student.plan(steps, needs=f"{MODULE}.make_loaders")
    for k, (batch_size, args) in enumerate(cases):
        call = f"make_loaders(train_ds of 7, test_ds of 5{''.join(f', {a}' for a in args)})"
        for e in range(2):
            seed = seeds(f"epoch{k}{e}")
            want = loader_batches(*train, seed, batch_size=batch_size, shuffle=True, drop_last=True)
            got = value(plan, f"b{k}_{e}", f"the batches of {call}'s train_loader")
            if not same(got, want):
                named = {"the training examples not shuffled (shuffle=True)":
                         loader_batches(*train, seed, batch_size=batch_size, drop_last=True),
                         "the last, smaller batch kept (drop_last=True)":
                         loader_batches(*train, seed, batch_size=batch_size, shuffle=True),
                         f"batches of 2 whatever batch_size is given (batch_size={batch_size})":
                         loader_batches(*train, seed, batch_size=2, shuffle=True, drop_last=True)}
                raise failure(f"the batches of {call}'s train_loader after torch.manual_seed are not DataLoader's "
                              f"with batch_size={batch_size}, shuffle=True, drop_last=True.",
                              next((name for name, batches in named.items() if same(got, batches)), None))
        want = loader_batches(*test, seeds(f"test{k}"), batch_size=batch_size)
        got = value(plan, f"t{k}", f"the batches of {call}'s test_loader")
        if not same(got, want):
            named = {"the test examples shuffled (shuffle=False for the test loader)":
                     loader_batches(*test, seeds(f"test{k}"), batch_size=batch_size, shuffle=True),
                     "the test loader's last, smaller batch dropped (drop_last only for training)":
                     loader_batches(*test, seeds(f"test{k}"), batch_size=batch_size, drop_last=True)}
            raise failure(f"the batches of {call}'s test_loader are not DataLoader's with batch_size={batch_size}, "
                          "shuffle=False: every example, in order.",
                          next((name for name, batches in named.items() if same(got, batches)), None))
