"""Hidden checks for section A.2: tensors, dtypes, shapes and operations (10 points).

Every expected tensor is built here with torch; the child's answers are compared, dtype included."""
import pytest
import torch

from autograder.grading.compare import check_calls, expect_close, value, yours_vs_expected
from autograder.grading.kit import Case

points = pytest.mark.points
MODULE = "tensor_basics"


def ints(rows, cols, seed):
    return torch.randint(-50, 50, (rows, cols), generator=torch.Generator().manual_seed(seed))



@points(4)
def test_create_tensors(student):
    """create_tensors: the book's 0-d, 1-d, 2-d and 3-d tensors of int64"""
    plan = student.plan([{"let": "t", "call": f"{MODULE}.create_tensors", "return": True}])
    got = value(plan, "t", "create_tensors()")
    want = (torch.tensor(1), torch.tensor([1, 2, 3]), torch.tensor([[1, 2], [3, 4]]),
            torch.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]))
    if not (isinstance(got, list) and len(got) == 4):
        raise AssertionError("create_tensors(): " + yours_vs_expected(
            yours=repr(got)[:100], yours_are="returned", expected="four tensors (tensor0d, tensor1d, tensor2d, tensor3d)"))
    for k, (g, w) in enumerate(zip(got, want)):
        expect_close(g, w, f"tensor{k}d of create_tensors()", {
            "floats instead of integers (torch.tensor of Python ints gives int64)": w.float()}, atol=0, rtol=0)


@points(2)
def test_convert_to_float32(student, seeds):
    """convert_to_float32: the same values as float32"""
    cases = []
    for k, (shape, dtype) in enumerate((((3, 4), torch.int64), ((5,), torch.int32), ((2, 3), torch.float64))):
        t = ints(1, shape[0] * (shape[1] if len(shape) > 1 else 1), seeds(f"t{k}")).reshape(shape).to(dtype)
        if dtype == torch.float64:
            t = t / 7
        cases.append(Case((t,), t.to(torch.float32), f"convert_to_float32(a {dtype} tensor of shape {shape})",
                          {"float64 instead of float32 (.double())": t.to(torch.float64)}))
    check_calls(student, MODULE, "convert_to_float32", cases)


@points(2)
def test_reshape_tensor(student, seeds):
    """reshape_tensor: the values in row-major order, rows x cols (not a transpose)"""
    cases = []
    for k, (shape, rows, cols) in enumerate((((2, 3), 3, 2), ((4, 6), 6, 4), ((3, 4), 2, 6), ((2, 5), 10, 1))):
        t = ints(*shape, seeds(f"t{k}"))
        mistakes = {"a transpose instead of a reshape (.T swaps rows and columns: reshape keeps the order)": t.T} \
            if (rows, cols) == shape[::-1] else {}
        cases.append(Case((t, rows, cols), t.reshape(rows, cols), f"reshape_tensor(a {shape} tensor, {rows}, {cols})",
                          mistakes))
    check_calls(student, MODULE, "reshape_tensor", cases)


@points(2)
def test_matmul_with_transpose(student, seeds):
    """matmul_with_transpose: tensor2d @ tensor2d.T, (rows, rows)"""
    cases = []
    for k, shape in enumerate(((2, 3), (4, 2), (3, 3), (1, 5))):
        t = ints(*shape, seeds(f"t{k}")).float()
        cases.append(Case((t,), t @ t.T, f"matmul_with_transpose(a {shape} tensor)", {
            "the transpose first (tensor2d.T @ tensor2d is (cols, cols))": t.T @ t,
            "an elementwise product instead of a matrix product (* instead of @)": t * t}))
    check_calls(student, MODULE, "matmul_with_transpose", cases)
