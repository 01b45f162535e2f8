"""Section A.2: tensors, their data types, shapes and the operations the book uses most."""
import torch


def create_tensors():
    """Section A.2.1: the book's four tensors, built with ``torch.tensor`` from Python integers.
    Returns ``(tensor0d, tensor1d, tensor2d, tensor3d)``: ``1``; ``[1, 2, 3]``;
    ``[[1, 2], [3, 4]]``; ``[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]``, each of dtype ``torch.int64``
    (PyTorch's default for integers), of shapes ``()``, ``(3,)``, ``(2, 2)`` and ``(2, 2, 2)``."""
    raise NotImplementedError("create_tensors: replace this line with your code")


def convert_to_float32(tensor):
    """Section A.2.2: ``tensor`` (of any dtype) as 32-bit floats, ``tensor.to(torch.float32)``:
    returns a tensor of dtype ``torch.float32`` with the same shape and values."""
    raise NotImplementedError("convert_to_float32: replace this line with your code")


def reshape_tensor(tensor, rows, cols):
    """Section A.2.3: the same values, in the same (row-major) order, laid out as ``rows`` by
    ``cols`` (``.reshape`` or ``.view``): returns a tensor of shape ``(rows, cols)``. Not a
    transpose: ``[[1, 2, 3], [4, 5, 6]]`` reshaped to 3 by 2 is ``[[1, 2], [3, 4], [5, 6]]``."""
    raise NotImplementedError("reshape_tensor: replace this line with your code")


def matmul_with_transpose(tensor2d):
    """Section A.2.3: ``tensor2d`` multiplied by its own transpose, ``tensor2d.matmul(tensor2d.T)``
    (or ``tensor2d @ tensor2d.T``): returns a ``(rows, rows)`` tensor for a ``(rows, cols)`` one."""
    raise NotImplementedError("matmul_with_transpose: replace this line with your code")
