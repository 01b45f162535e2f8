"""Section 3.3: a simplified self-attention mechanism without trainable weights.

Every function here works on plain tensors. Shapes use T for the number of
tokens and d for the embedding size.
"""
import torch

# "Your journey starts with one step", embedded in three dimensions (section 3.3.1).
inputs = torch.tensor(
    [[0.43, 0.15, 0.89],  # Your     (x^1)
     [0.55, 0.87, 0.66],  # journey  (x^2)
     [0.57, 0.85, 0.64],  # starts   (x^3)
     [0.22, 0.58, 0.33],  # with     (x^4)
     [0.77, 0.25, 0.10],  # one      (x^5)
     [0.05, 0.80, 0.55]]  # step     (x^6)
)


def dot_product_loop(x, y):
    """Dot product of two vectors of shape (d,) with an explicit Python loop.

    Returns a 0-dimensional tensor equal to ``torch.dot(x, y)``.
    """
    ### BEGIN SOLUTION
    res = torch.zeros((), dtype=x.dtype)
    for idx in range(x.shape[0]):
        res = res + x[idx] * y[idx]
    return res
    ### END SOLUTION


def attn_scores_for_query(inputs, query):
    """Attention scores omega of one query against every input, one ``torch.dot`` per token.

    inputs: (T, d); query: (d,). Returns (T,).
    """
    ### BEGIN SOLUTION
    attn_scores = torch.empty(inputs.shape[0], dtype=inputs.dtype)
    for i, x_i in enumerate(inputs):
        attn_scores[i] = torch.dot(x_i, query)
    return attn_scores
    ### END SOLUTION


def attn_scores_loop(inputs):
    """All pairwise attention scores with two nested loops.

    inputs: (T, d). Returns (T, T) where entry [i, j] is x_i . x_j.
    """
    ### BEGIN SOLUTION
    num_tokens = inputs.shape[0]
    attn_scores = torch.empty(num_tokens, num_tokens, dtype=inputs.dtype)
    for i, x_i in enumerate(inputs):
        for j, x_j in enumerate(inputs):
            attn_scores[i, j] = torch.dot(x_i, x_j)
    return attn_scores
    ### END SOLUTION


def attn_scores_matmul(inputs):
    """The same (T, T) scores as ``attn_scores_loop``, as one matrix product."""
    ### BEGIN SOLUTION
    return inputs @ inputs.T
    ### END SOLUTION


def normalize_by_sum(attn_scores):
    """Divide scores of shape (T,) by their sum so that they add up to 1."""
    ### BEGIN SOLUTION
    return attn_scores / attn_scores.sum()
    ### END SOLUTION


def softmax_naive(x):
    """Softmax of a vector of shape (T,) written with ``torch.exp``.

    Naive on purpose: it overflows for large inputs, which is why the book
    moves on to ``torch.softmax``.
    """
    ### BEGIN SOLUTION
    return torch.exp(x) / torch.exp(x).sum(dim=0)
    ### END SOLUTION


def attn_weights_from_scores(attn_scores):
    """Attention weights: ``torch.softmax`` over the last dimension.

    attn_scores: (T,) for one query or (T, T) for all. Same shape out; each row sums to 1.
    """
    ### BEGIN SOLUTION
    return torch.softmax(attn_scores, dim=-1)
    ### END SOLUTION


def context_vector_for_query(inputs, attn_weights):
    """Context vector z as the weighted sum of the inputs, with a loop over tokens.

    inputs: (T, d); attn_weights: (T,) for one query. Returns (d,).
    """
    ### BEGIN SOLUTION
    context_vec = torch.zeros(inputs.shape[1], dtype=inputs.dtype)
    for i, x_i in enumerate(inputs):
        context_vec += attn_weights[i] * x_i
    return context_vec
    ### END SOLUTION


def all_context_vectors(inputs):
    """Every context vector at once: softmax(X X^T) X.

    inputs: (T, d). Returns (T, d); row i is z^(i+1).
    """
    ### BEGIN SOLUTION
    attn_scores = inputs @ inputs.T
    attn_weights = torch.softmax(attn_scores, dim=-1)
    return attn_weights @ inputs
    ### END SOLUTION
