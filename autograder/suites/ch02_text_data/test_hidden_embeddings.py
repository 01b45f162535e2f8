"""Hidden checks for sections 2.7 and 2.8: token embeddings and input embeddings (15 points)."""
import pytest
import torch

from _text_data import expect
from autograder.grading.compare import expect_close, seeded, value, yours_vs_expected
from autograder.grading.diagnose import wrong_size
from autograder.grading.result import failure

points = pytest.mark.points


def _ids(vocab_size, *shape, seed):
    return torch.randint(vocab_size, shape, generator=torch.Generator().manual_seed(seed))


@points(6)
def test_create_embedding_layer(student, ref, seeds):
    """create_embedding_layer: nn.Embedding(vocab_size, output_dim) after torch.manual_seed(seed); a lookup"""
    cases = [((6, 3), {}), ((6, 3), {"seed": 123}), ((10, 4), {"seed": 7}), ((3, 5), {"seed": 0}),
             ((1000, 8), {"seed": 123})]
    steps = []
    for k, (args, kwargs) in enumerate(cases):
        steps += [{"let": f"e{k}", "call": "embeddings.create_embedding_layer", "args": list(args), "kwargs": kwargs},
                  {"let": f"w{k}", "attr": f"e{k}.weight", "return": True},
                  {"let": f"o{k}", "call": f"e{k}", "args": [_ids(args[0], 2, 5, seed=seeds(f"ids{k}"))], "return": True}]
    reply = student.plan(steps)
    for k, (args, kwargs) in enumerate(cases):
        what = f"create_embedding_layer{(*args, *kwargs.values())}"
        layer = ref.embeddings.create_embedding_layer(*args, **kwargs)
        weight = value(reply, f"w{k}", what)
        seed = kwargs.get("seed", 123)
        mistakes = {}
        if seed != 123:
            torch.manual_seed(123)
            mistakes["the seed ignored: torch.manual_seed(123) whatever seed is given"] = \
                torch.nn.Embedding(*args).weight.detach()
        expect(weight.detach() if isinstance(weight, torch.Tensor) else weight, layer.weight.detach(),
               f"{what}.weight", mistakes)
        ids = _ids(args[0], 2, 5, seed=seeds(f"ids{k}"))
        expect(value(reply, f"o{k}", what), layer(ids).detach(), f"{what} called on ids of shape (2, 5)")


# where the grader copies its tables in: nn.Embedding layers, or the parameters themselves
TABLE_NAMES = (("token_embedding_layer.weight", "pos_embedding_layer.weight"),
               ("token_embedding_layer", "pos_embedding_layer"))


def tables_of(sizes, k, seeds):
    """The grader's (token, position) tables for InputEmbeddings(*sizes), case ``k``."""
    vocab_size, output_dim, context_length = sizes
    return seeded(vocab_size, output_dim, seed=seeds(f"tok{k}")), seeded(context_length, output_dim, seed=seeds(f"pos{k}"))


def _table(reply, name, what):
    """A table of the student's module: an nn.Embedding's weight, or the parameter itself."""
    for step in (f"{name}_w", name):
        if not reply.failed(step) and isinstance(reply.values[step], torch.Tensor):
            return reply.values[step].detach()
    raise AssertionError(f"{what}: {name.split('_')[0]}_embedding_layer is neither an nn.Embedding nor a "
                         f"tensor ({reply.failed(name + '_w')})")


@points(9)
def test_input_embeddings(student, ref, seeds):
    """InputEmbeddings: token embeddings plus the embeddings of positions 0 .. num_tokens - 1"""
    cases = [((50, 8, 6), _ids(50, 2, 3, seed=seeds("ids0"))), ((50, 8, 6), _ids(50, 3, 6, seed=seeds("ids1"))),
             ((20, 4, 4), _ids(20, 1, 1, seed=seeds("ids2"))), ((3000, 8, 4), _ids(3000, 8, 4, seed=seeds("ids3"))),
             ((7, 2, 9), _ids(7, 4, 9, seed=seeds("ids4")))]
    steps = []
    for k, (sizes, inputs) in enumerate(cases):
        steps += [{"let": f"m{k}", "call": "embeddings.InputEmbeddings", "args": list(sizes), "seed": seeds(f"module{k}")},
                  {"let": f"tok{k}_w", "attr": f"m{k}.token_embedding_layer.weight", "return": True},
                  {"let": f"tok{k}", "attr": f"m{k}.token_embedding_layer", "return": True},
                  {"let": f"pos{k}_w", "attr": f"m{k}.pos_embedding_layer.weight", "return": True},
                  {"let": f"pos{k}", "attr": f"m{k}.pos_embedding_layer", "return": True},
                  # forward with the grader's tables, under either name the docstring allows
                  *(step for way, names in enumerate(TABLE_NAMES) for step in (
                      {"let": f"g{k}_{way}", "call": "embeddings.InputEmbeddings", "args": list(sizes),
                       "params": dict(zip(names, tables_of(sizes, k, seeds)))},
                      {"let": f"out{k}_{way}", "call": f"g{k}_{way}", "args": [inputs], "return": True}))]
    reply = student.plan(steps, needs="embeddings.InputEmbeddings")
    tables = []
    for k, ((vocab_size, output_dim, context_length), inputs) in enumerate(cases):
        what = f"InputEmbeddings({vocab_size}, {output_dim}, {context_length}) on ids of shape {tuple(inputs.shape)}"
        if reply.failed(f"m{k}"):
            raise AssertionError(f"{what}: {reply.failed(f'm{k}')}")
        tables.append((_table(reply, f"tok{k}", what), _table(reply, f"pos{k}", what)))
    for which, (name, rows_of) in enumerate((("token_embedding_layer", "vocab_size"),
                                             ("pos_embedding_layer", "context_length"))):
        builds, first = [], None  # every build whose table has the wrong shape: a name must explain them all
        for k, ((vocab_size, output_dim, context_length), _) in enumerate(cases):
            sizes = {"vocab_size": vocab_size, "output_dim": output_dim, "context_length": context_length}
            shape, book = tuple(tables[k][which].shape), (sizes[rows_of], output_dim)
            if shape != book:
                builds.append((shape, book, sizes))
                first = cases[k][0] if first is None else first
        if builds:
            raise failure(f"InputEmbeddings{first}: {name} " + yours_vs_expected(
                yours=f"a table of shape {builds[0][0]}", yours_are="holds", expected=builds[0][1]) + ".",
                          wrong_size(f"{name}.weight", builds))
    for k, ((vocab_size, output_dim, context_length), inputs) in enumerate(cases):
        what = f"InputEmbeddings({vocab_size}, {output_dim}, {context_length}) on ids of shape {tuple(inputs.shape)}"
        # judged with the grader's tables, copied in (how the student's are drawn is not this
        # check's business): the answer is computed here, never from the tables the child reports
        token, position = tables_of((vocab_size, output_dim, context_length), k, seeds)
        n = inputs.shape[1]
        expected = token[inputs] + position[:n]
        way = next((way for way in range(len(TABLE_NAMES)) if not reply.failed(f"out{k}_{way}")), 0)
        out = value(reply, f"out{k}_{way}", f"{what} (with the grader's tables copied into "
                                            f"{' and '.join(TABLE_NAMES[way])})")
        mistakes = {"the position embeddings not added (token embeddings only)": token[inputs],
                    "the token embeddings not added (positions only)": position[:n].expand_as(expected)}
        if n < context_length:
            mistakes["positions counted from 1 (torch.arange(num_tokens) starts at 0)"] = token[inputs] + position[1:n + 1]
        expect_close(out, expected, what, mistakes)
