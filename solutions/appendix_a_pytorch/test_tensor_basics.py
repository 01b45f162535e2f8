"""Public tests for section A.2: the book's tensors, dtypes, shapes and operations.

PYTEST_DONT_REWRITE: a failing check says what it compared, your value beside the book's
(public_tests.py), instead of pytest's view of the assert statement."""
import torch

from public_tests import expect_close, expect_equal
from tensor_basics import convert_to_float32, create_tensors, matmul_with_transpose, reshape_tensor


def test_the_books_four_tensors():
    tensor0d, tensor1d, tensor2d, tensor3d = create_tensors()
    expect_equal(tensor0d, torch.tensor(1), 'tensor0d')
    expect_equal(tensor1d, torch.tensor([1, 2, 3]), 'tensor1d')
    expect_equal(tensor2d, torch.tensor([[1, 2], [3, 4]]), 'tensor2d')
    expect_equal(tensor3d, torch.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]), 'tensor3d')
    expect_equal(tensor1d.dtype, torch.int64, 'the dtype of tensor1d')
    expect_equal(tuple(tensor3d.shape), (2, 2, 2), 'the shape of tensor3d')


def test_float32():
    floatvec = convert_to_float32(torch.tensor([1, 2, 3]))
    expect_equal(floatvec.dtype, torch.float32, 'the dtype of convert_to_float32(tensor1d)')
    expect_close(floatvec, torch.tensor([1.0, 2.0, 3.0]), 'convert_to_float32(tensor1d)')


def test_reshape_is_not_a_transpose():
    tensor2d = torch.tensor([[1, 2, 3], [4, 5, 6]])
    expect_equal(reshape_tensor(tensor2d, 3, 2), torch.tensor([[1, 2], [3, 4], [5, 6]]), 'reshape_tensor(tensor2d, 3, 2)',
                 [("a transpose instead of a reshape", tensor2d.T)])
    expect_equal(tuple(reshape_tensor(tensor2d, 6, 1).shape), (6, 1), 'the shape of reshape_tensor(tensor2d, 6, 1)')


def test_matmul_with_its_transpose():
    tensor2d = torch.tensor([[1, 2, 3], [4, 5, 6]])
    expect_equal(matmul_with_transpose(tensor2d), torch.tensor([[14, 32], [32, 77]]), 'matmul_with_transpose(tensor2d)')
