"""Sections 2.7 and 2.8: token embeddings, and input embeddings with absolute positions."""
import torch
import torch.nn as nn


def create_embedding_layer(vocab_size, output_dim, seed=123):
    """The book's embedding layer: ``torch.manual_seed(seed)``, then
    ``torch.nn.Embedding(vocab_size, output_dim)``. For ``(6, 3)`` its weight is the book's 6x3
    table (first row ``[0.3374, -0.1778, -0.1690]``), and calling it on ``torch.tensor([2, 3, 5, 1])``
    picks rows 2, 3, 5 and 1."""
    ### BEGIN SOLUTION
    torch.manual_seed(seed)
    return torch.nn.Embedding(vocab_size, output_dim)
    ### END SOLUTION


class InputEmbeddings(nn.Module):
    """Section 2.8: the input embeddings of a batch of token ids, token plus absolute position.

    ``token_embedding_layer`` holds one ``output_dim`` vector per token id (``vocab_size`` rows)
    and ``pos_embedding_layer`` one per position (``context_length`` rows): each an
    ``nn.Embedding``, or a parameter of that shape. ``forward(inputs)``: ids of shape
    ``(batch, num_tokens)`` with ``num_tokens <= context_length`` give
    ``token_embedding_layer(inputs) + pos_embedding_layer(torch.arange(num_tokens))``, shape
    ``(batch, num_tokens, output_dim)``: the first token gets position 0. The book's 8x4 batch
    with ``(50257, 256, 4)`` gives ``[8, 4, 256]``.
    """

    def __init__(self, vocab_size, output_dim, context_length):
        super().__init__()
        ### BEGIN SOLUTION
        self.token_embedding_layer = nn.Embedding(vocab_size, output_dim)
        self.pos_embedding_layer = nn.Embedding(context_length, output_dim)
        ### END SOLUTION

    def forward(self, inputs):
        ### BEGIN SOLUTION
        token_embeddings = self.token_embedding_layer(inputs)
        pos_embeddings = self.pos_embedding_layer(torch.arange(inputs.shape[-1], device=inputs.device))
        return token_embeddings + pos_embeddings
        ### END SOLUTION
