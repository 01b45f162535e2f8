"""Section 4.3: the GELU activation and the feed forward network of a transformer block."""
import torch
import torch.nn as nn


class GELU(nn.Module):
    """Listing 4.3: GELU with the tanh approximation GPT-2 was trained with:

    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))), element by element, any shape.
    (``nn.GELU(approximate="tanh")`` computes the same.)
    """

    def forward(self, x):
        ### BEGIN SOLUTION
        return 0.5 * x * (1 + torch.tanh(
            torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))
        ))
        ### END SOLUTION


class FeedForward(nn.Module):
    """Listing 4.4: expand to 4 * emb_dim, GELU, project back to emb_dim.

    Graded: ``self.layers`` is an ``nn.Sequential`` of ``nn.Linear(emb_dim, 4 * emb_dim)``, a
    GELU (tanh approximation) and ``nn.Linear(4 * emb_dim, emb_dim)``, both linear layers with
    bias, created in that order (parameters layers.0.weight, layers.0.bias, layers.2.weight,
    layers.2.bias and no others). ``cfg`` is a dict like ``GPT_CONFIG_124M``; only
    ``cfg["emb_dim"]`` is used. forward maps (..., emb_dim) to (..., emb_dim) and leaves the
    caller's input unchanged.
    """

    def __init__(self, cfg):
        super().__init__()
        ### BEGIN SOLUTION
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return self.layers(x)
        ### END SOLUTION
