"""Public tests for sections 2.7 and 2.8: the book's seeded 6x3 embeddings and the input embeddings.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from embeddings import InputEmbeddings, create_embedding_layer
from public_tests import expect_close, expect_equal

BOOK_WEIGHT = torch.tensor([[0.3374, -0.1778, -0.1690], [0.9178, 1.5810, 1.3010], [1.2753, -0.2010, -0.1606],
                            [-0.4015, 0.9666, -1.1481], [-1.1589, 0.3255, -0.6315], [-2.8400, -0.7849, -1.4096]])


def test_the_books_embedding_layer():
    embedding_layer = create_embedding_layer(6, 3)
    # printed with four decimals; another machine's generator may differ in the last digits
    expect_close(embedding_layer.weight.detach(), BOOK_WEIGHT, 'the weights of create_embedding_layer(6, 3)', atol=1e-4)
    expect_close(embedding_layer(torch.tensor([3])).detach(), BOOK_WEIGHT[[3]], 'the embedding of id 3', atol=1e-4)
    expect_close(embedding_layer(torch.tensor([2, 3, 5, 1])).detach(), BOOK_WEIGHT[[2, 3, 5, 1]], 'the embeddings of ids 2, 3, 5, 1', atol=1e-4)


def test_input_embeddings_add_positions_from_0():
    torch.manual_seed(123)
    layer = InputEmbeddings(50257, 256, 4)
    inputs = torch.tensor([[40, 367, 2885, 1464], [1807, 3619, 402, 271], [10899, 2138, 257, 7026],
                           [15632, 438, 2016, 257], [922, 5891, 1576, 438], [568, 340, 373, 645],
                           [1049, 5975, 284, 502], [284, 3285, 326, 11]])
    input_embeddings = layer(inputs)
    expect_equal(input_embeddings.shape, (8, 4, 256), 'the shape of the input embeddings')
    # each table an nn.Embedding or a parameter of that shape (the docstring allows both)
    token = table(layer.token_embedding_layer)[inputs]
    positions = table(layer.pos_embedding_layer)[torch.arange(4)]
    expect_close(input_embeddings, token + positions, 'the input embeddings: token embeddings plus positions 0 to 3')
    # a shorter batch gets the first positions
    expect_close(layer(inputs[:, :2]), token[:, :2] + positions[:2], 'the input embeddings of two tokens: positions 0 and 1')


def table(embedding):
    """The rows of an embedding table: an nn.Embedding's weight, or the parameter itself."""
    return (embedding.weight if isinstance(embedding, torch.nn.Embedding) else embedding).detach()
