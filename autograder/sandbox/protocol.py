"""The data-only channel between the grader and a sandboxed child.

A frame is a fixed 12-byte prefix (JSON length, tensor-blob length), a UTF-8 JSON
header and a safetensors blob. Tensors inside the JSON are written as
``{"$tensor": "<key>"}`` and travel in the blob. Nothing here can execute code on
decode (no pickle), and every length is checked before anything is read.
"""
import hashlib
import json
import select
import socket
import struct
import time

import torch
from safetensors.torch import load as _load_tensors
from safetensors.torch import save as _save_tensors

PREFIX = struct.Struct(">IQ")
MAX_JSON = 1 << 20            # 1 MiB of header is far more than any probe needs
MAX_BLOB = 96 << 20           # a GPT-2-small state_dict is ~38 MiB in float32
TENSOR_KEY = "$tensor"


class ChannelError(Exception):
    """The other side sent something that is not a well-formed frame, or hung up."""


class ChannelTimeout(ChannelError):
    """No complete frame arrived (or could be sent) before the deadline."""


MAX_DEPTH = 32                # nesting of lists and dicts; a probe's answer is a few levels deep
MAX_TENSORS = 4096            # tensors in one frame (a GPT-2 state_dict has ~100)

# The plan probe's bounds (child.op_plan sends no more; session.StudentSession.plan checks again).
PLAN_DEPTH = 8                # nesting of lists and dicts in one returned value
PLAN_ITEMS = 100_000          # tensors, numbers and strings in one reply
PLAN_STRING = 1 << 16         # characters of one string
PLAN_CALLS = 256              # calls of one submodule recorded in one step
PLAN_LIMIT = 4096             # items taken from one iterable
# Where a step's exception was raised in the student's code (child._where): its tensors' shapes.
WHERE_LOCALS = 16             # tensor locals named
WHERE_ITEMS = 8               # tensors of one list or tuple local
WHERE_DIMS = 8                # dimensions of one shape


_SCALARS = (str, int, float, bool, type(None))  # exactly these types: a subclass is not plain data


class _Tensors(dict):
    """A frame's tensors by key, and their bytes so far."""
    nbytes = 0


def _flatten(value, tensors):
    """``value`` with each tensor replaced by a reference to its key in ``tensors`` (a _Tensors)."""
    kind = type(value)
    if kind in _SCALARS:  # most of a frame: names, numbers and flags
        return value
    if kind is list or kind is tuple:  # a scalar item is taken as it is, without a call (frames hold thousands)
        return [v if type(v) in _SCALARS else _flatten(v, tensors) for v in value]
    if isinstance(value, torch.Tensor):
        key = str(len(tensors))
        tensors.nbytes += value.nelement() * value.element_size()
        # Refuse before copying: a child returning a huge tensor should fail fast, not time out.
        if tensors.nbytes > MAX_BLOB:
            raise ValueError("message too large for the channel")
        if type(value) is not torch.Tensor or value.requires_grad or not value.is_cpu or not value.is_contiguous():
            value = torch.Tensor.detach(value).cpu().contiguous()  # else it is that already: ~2 us a tensor saved
        tensors[key] = value
        return {TENSOR_KEY: key}
    if isinstance(value, dict):
        flat = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError("only str keys can cross the channel")
            flat[k] = v if type(v) in _SCALARS else _flatten(v, tensors)
        return flat
    if isinstance(value, (list, tuple)):
        return [_flatten(v, tensors) for v in value]
    raise TypeError(f"a {type(value).__name__} cannot cross the channel")


def _restore(value, tensors, depth=0):
    """A decoded JSON value (plain dicts, lists and scalars) with each tensor reference replaced
    by its tensor; a scalar item is taken as it is, without a call."""
    if type(value) is dict:
        if depth > MAX_DEPTH:
            raise ChannelError(f"frame nested more than {MAX_DEPTH} levels deep")
        if len(value) == 1 and TENSOR_KEY in value:
            try:
                return tensors[value[TENSOR_KEY]]
            except (KeyError, TypeError):
                raise ChannelError("frame names a tensor it does not carry") from None
        return {k: v if type(v) in _SCALARS else _restore(v, tensors, depth + 1) for k, v in value.items()}
    if type(value) is list:
        if depth > MAX_DEPTH:
            raise ChannelError(f"frame nested more than {MAX_DEPTH} levels deep")
        return [v if type(v) in _SCALARS else _restore(v, tensors, depth + 1) for v in value]
    return value


def _load_bounded(blob):
    """safetensors' own header (a little-endian length, then JSON) is read and counted before
    any tensor is made: a million empty tensors fit under the byte cap but not the grader."""
    if len(blob) < 8:
        raise ValueError("short blob")
    size = int.from_bytes(blob[:8], "little")
    if size > MAX_JSON:
        raise ValueError("tensor header too large")
    if len(json.loads(blob[8:8 + size])) > MAX_TENSORS + 1:   # + its "__metadata__" entry
        raise ValueError(f"more than {MAX_TENSORS} tensors")
    return _load_tensors(blob)


# safetensors' names of the dtypes _save writes itself
_DTYPE_NAMES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
                torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
                torch.bool: "BOOL"}


def _save(tensors):
    """safetensors' format, written here: safetensors.torch.save checks for shared storage and
    converts each tensor through numpy, ~40 us a tensor where a frame carries hundreds. Other
    dtypes go through safetensors itself (which refuses shared or strided storage: copies)."""
    if any(t.dtype not in _DTYPE_NAMES for t in tensors.values()):
        return _save_tensors({k: t.clone() for k, t in tensors.items()})
    header, chunks, offset = {}, [], 0
    for key, tensor in tensors.items():  # each contiguous, on the CPU, detached (_flatten)
        if tensor.is_conj() or tensor.is_neg():
            tensor = tensor.resolve_conj().resolve_neg()
        # numpy's own view of the bytes (no copy), where numpy has the dtype: a fraction of torch's view calls
        data = tensor.reshape(-1).view(torch.uint8).numpy() if tensor.dtype is torch.bfloat16 else tensor.numpy()
        header[key] = {"dtype": _DTYPE_NAMES[tensor.dtype], "shape": list(tensor.shape),
                       "data_offsets": [offset, offset + data.nbytes]}
        chunks.append(data)
        offset += data.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # as safetensors pads it
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


# How a plan step that was sent parameter digests fails where the module drew other parameters:
# the grader then sends the parameters themselves (grading.probes.module).
PARAMS_DIFFER = "params differ"


def digest(tensor) -> list:
    """[shape, dtype, sha256 of the bytes]: which tensor it is, exactly, without sending it."""
    values = torch.Tensor.detach(tensor).cpu().contiguous().reshape(-1).view(torch.uint8).numpy()
    return [list(tensor.shape), str(tensor.dtype), hashlib.sha256(values).hexdigest()]


def encode(message) -> bytes:
    tensors = _Tensors()
    header = json.dumps(_flatten(message, tensors), allow_nan=True).encode()
    blob = _save(tensors) if tensors else b""
    if len(header) > MAX_JSON or len(blob) > MAX_BLOB:
        raise ValueError("message too large for the channel")
    return PREFIX.pack(len(header), len(blob)) + header + blob


def decode(header: bytes, blob: bytes):
    try:
        message = json.loads(header.decode())
        tensors = _load_bounded(blob) if blob else {}
    except Exception as exc:  # any malformed frame is the sender's fault, never ours
        raise ChannelError(f"malformed frame ({type(exc).__name__}: {str(exc)[:80]})") from None
    return _restore(message, tensors)


def send(sock: socket.socket, message, deadline: float = None) -> None:
    """Write one frame; ``deadline`` as for ``recv``: a reader that stops reading cannot stall us."""
    frame = encode(message)
    if deadline is None:
        sock.sendall(frame)
        return
    sock.settimeout(max(deadline - time.monotonic(), 1e-3))  # sendall's timeout covers the whole frame
    try:
        sock.sendall(frame)
    except TimeoutError:
        raise ChannelTimeout("the other side stopped reading before the time limit") from None
    finally:
        sock.settimeout(None)


def _recv_exact(sock, size, deadline):
    chunks, remaining = [], size
    while remaining:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                raise ChannelTimeout("no answer before the time limit")
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            raise ChannelError("the other side closed the channel")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def recv(sock: socket.socket, deadline: float = None):
    """Read one frame; ``deadline`` is a ``time.monotonic()`` value or None to wait forever."""
    json_len, blob_len = PREFIX.unpack(_recv_exact(sock, PREFIX.size, deadline))
    if json_len > MAX_JSON or blob_len > MAX_BLOB:
        raise ChannelError(f"frame of {json_len + blob_len} bytes is over the limit")
    header = _recv_exact(sock, json_len, deadline)
    blob = _recv_exact(sock, blob_len, deadline)
    return decode(header, blob)
