"""The wire format between the judge and the sandbox: every message's fields (typed), JSON without the json
module's Python layer, length-prefixed frames (signed by the child when the judge gave it a key), and arrays as
records pointing into a frame's blob. Nothing is pickled, in either direction.

Imported by the judge (:mod:`autograder.sandbox.host`, :mod:`autograder.sandbox.proxy`) and, inside the
sandbox, by the rest of this package; it imports only the standard library (numpy for arrays, when used)."""

from __future__ import annotations

# Bound as module globals before any learner code exists: a learner who replaces builtins.isinstance (or
# len, sorted, ...) later does not change what the worker's own code calls.
from builtins import (  # noqa: A004 - shadowing on purpose
    EOFError,
    StopIteration,
    TypeError,
    ValueError,
    all,
    bool,
    bytearray,
    bytes,
    dict,
    float,
    frozenset,
    int,
    isinstance,
    len,
    list,
    memoryview,
    min,
    str,
    tuple,
    type,
)

import _hashlib
import _json
import _socket
import json
import os
import socket
import struct
import time
from typing import Any, Iterable, Literal, Mapping, TypedDict, Union


MAGIC_LIMIT = 64 * 1024 * 1024  # largest frame either side accepts (bytes of JSON or of arrays)
REPLY_JSON_LIMIT = 4 * 1024 * 1024  # largest JSON header the judge accepts from a child
ENCODE_BUDGET = 20000  # most values (tensors, numbers, strings...) one reply may carry
_HEADER = struct.Struct(">II")
_pack_header = _HEADER.pack
_unpack_header = _HEADER.unpack
_sendall = _socket.socket.sendall
_recv = _socket.socket.recv
_recv_into = _socket.socket.recv_into
_settimeout = _socket.socket.settimeout
_monotonic = time.monotonic
_urandom = os.urandom
_os_exit = os._exit
_getpid = os.getpid
_os_open, _os_read, _os_close, _os_listdir = os.open, os.read, os.close, os.listdir
_hmac_digest = _hashlib.hmac_digest
_same_digest = _hashlib.compare_digest
MAC_SIZE = 32  # replies end with HMAC-SHA256(key, json + blob) when the judge gave the child a key

# ───────────────────────────── the messages ─────────────────────────────
#
# Every message of the protocol, field by field: requests from the judge to a child and the child's replies
# (frames on the child's RPC socket), and the judge's orders to the zygote and its answers (packets on the
# control socket). On the wire each is a plain JSON object; these types only name the fields. Nothing a child
# sends is believed: the judge checks a reply's shape (``autograder.sandbox.proxy._check_reply``) before using it.
#
# A value (an argument, a reply's value) is JSON, with records for what JSON lacks: an array
# (:class:`ArrayRecord`, its bytes in the frame's blob), ``{"__tuple__": [...]}``, ``{"__dtype__": "float32"}``
# and, in replies only, ``{"__repr__": "<generator>"}`` for anything that is not data.


class ArrayRecord(TypedDict, total=False):
    __nd__: list[int]  # [offset, size] of the array's bytes in the frame's blob
    np: str  # numpy dtype string (one of ARRAY_DTYPES)
    dtype: str  # the torch dtype it stands for (float16 and bfloat16 travel as float32)
    shape: list[int]
    device: str
    noncontig: bool  # requests: make it a non-contiguous view
    requires_grad: bool  # requests: a leaf that requires grad


class _Framed(TypedDict, total=False):
    id: int | None  # set by the judge's proxy on each request; the reply echoes it


class LoadRequest(_Framed):
    op: Literal["load"]
    source: str  # the learner's file, run as a module
    filename: str
    key: str  # hex: the key of the HMAC that signs every reply (received before any learner code runs)
    by_hand: bool  # a stage written by hand: fused attention kernels are switched off before the module runs


class _CallFields(_Framed, total=False):
    args: list
    kwargs: dict
    seed: int  # torch.manual_seed before the call
    record: bool  # also send the call's traced graph (:func:`capture_graph`)
    return_inputs: bool  # also say which tensor arguments the call changed in place
    grad: dict  # {"upstream": value}: also send d(sum(out * upstream)) for parameters and grad inputs


class CallRequest(_CallFields):
    op: Literal["call"]
    name: str  # a function of the learner's file


class _NewFields(_CallFields, total=False):
    training: bool  # then .train(training)
    module_dtype: str  # then .to(dtype=...)
    weights: dict  # then read its state and load these (see Executor._prepare)


class NewRequest(_NewFields):
    op: Literal["new"]
    name: str  # a class of the learner's file


class MethodRequest(_CallFields):
    op: Literal["method"]
    handle: int  # a module made by "new"
    method: str


class HasRequest(_Framed):
    op: Literal["has"]
    names: list[str]


class HandleRequest(_Framed):
    op: Literal["state", "describe"]
    handle: int


class LoadStateRequest(_Framed):
    op: Literal["load_state"]
    handle: int
    state: dict  # name -> value


class ToRequest(_Framed):
    op: Literal["to"]
    handle: int
    device: str | None
    dtype: str | None


class TrainRequest(_Framed):
    op: Literal["train"]
    handle: int
    mode: bool


class ByeRequest(_Framed):
    op: Literal["bye"]  # the stage is over: the child ends


class BatchRequest(_Framed):
    """Several calls in one frame (their arrays in its one blob), answered in order by one reply frame each, with
    the call's own ``id``; the child stops after the first reply that is not ok. Each reply is read with its own
    deadline, so a call that hangs costs one timeout, as alone."""

    op: Literal["batch"]
    requests: list[Union[CallRequest, MethodRequest]]


BATCH_LIMIT = 64  # most calls in one batch


Request = Union[
    LoadRequest,
    CallRequest,
    NewRequest,
    MethodRequest,
    HasRequest,
    HandleRequest,
    LoadStateRequest,
    ToRequest,
    TrainRequest,
    ByeRequest,
    BatchRequest,
]


class Where(TypedDict):
    line: int | None  # in the learner's file
    function: str
    code: str  # the line's text


class ErrorInfo(TypedDict, total=False):
    type: str  # the exception's class name (or MissingName, OutputTooLarge, ProtocolError)
    bases: list[str]  # the built-in exception classes it derives from (ValueError for `class Full(ValueError)`)
    message: str
    where: Where | None


def weights_fit(shapes: Mapping[str, Any], weights: Mapping[str, Any], params: Iterable[str]) -> bool:
    """The rule, used on both sides, for loading given ``weights`` as they are: each is in the module's state with
    the same shape (``shapes``: state name -> shape as a list, None for a non-tensor entry) and every parameter
    of the module (``params``) is among them. The worker loads weights that fit in the "new" request itself; the
    judge, seeing that they fit, takes that load as its own (and loads a bias the module lacks or has beyond them
    itself, in another request)."""
    return all(n in shapes and shapes[n] == [int(d) for d in w.shape] for n, w in weights.items()) and all(
        n in weights for n in params
    )


class Prepared(TypedDict, total=False):
    """What a "new" request with ``weights`` did with them."""

    state: dict[str, list[int] | None]  # the state's shapes, when the module has buffers
    loaded: bool  # the weights fit and were loaded
    state_error: ErrorInfo  # reading the state failed
    load_error: ErrorInfo  # loading failed


class _ReplyFields(_Framed, total=False):
    error: ErrorInfo
    value: Any  # the call's value ("new": the module's description and its ``handle``)
    names: list[str]  # "load": the module's public names
    graph: dict  # "record": the traced graph (see capture_graph), or {"error": why}
    inputs_changed: list[bool]  # "return_inputs": per positional argument
    grads: dict | None  # "grad": name ("arg0", parameter names) -> value; None when the output has no grad
    prepared: Prepared  # "new" with weights


class Reply(_ReplyFields):
    ok: bool  # False: ``error`` says why, and nothing else is sent


class ChildLimits(TypedDict, total=False):
    memory_mb: int
    cpu_s: int
    file_mb: int
    nproc: int
    files: int
    tmp_files: int  # entries (files, folders, links) the child's processes may make in the sandbox's /tmp
    cuda: bool  # limit the data segment instead of the address space (CUDA reserves huge ranges)


class ForkOrder(TypedDict):
    op: Literal["fork"]  # with the child's RPC socket as an SCM_RIGHTS descriptor
    limits: ChildLimits


class Order(TypedDict):
    op: Literal["kill", "quit"]  # kill: end the running child now; quit: end the zygote


class Ready(TypedDict):
    op: Literal["ready"]  # the zygote's first packet, once torch is imported and warm
    pid: int
    ipc: bool  # a child can have a SysV IPC namespace of its own
    seccomp: list[str]  # the system calls every child's seccomp filter refuses (empty: no filter to be had)
    uid: int | None  # the uid every child becomes
    zygote_uid: int
    pid_namespace: bool


class _ExitFields(TypedDict, total=False):
    killed: bool
    output_tail: str  # the end of what it printed (read_tail)
    reason: str  # "memory": killed for the sandbox's memory budget; "files": for Limits.tmp_files
    signal: int  # the signal that ended it, or
    code: int  # its exit code
    lost: bool  # set by the judge: the zygote did not answer


class Exited(_ExitFields):
    op: Literal["exited"]  # after each child, once it and everything it started are gone


# ───────────────────────────── JSON without the json module's Python layer ─────────────────────────────


def _not_json(value):
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


_make_encoder = _json.make_encoder
_encode_str = _json.encode_basestring_ascii
# the C scanner; hooks (float, int, constants) bound now (it takes the decoder as its context: typeshed says not)
_scanner = _json.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_join = "".join


def dumps(value) -> str:
    """JSON text of ``value`` (dicts, lists, str, int, float incl. NaN/Infinity, bool, None)."""
    return _join(_make_encoder({}, _not_json, _encode_str, None, ":", ",", False, False, True)(value, 0))


def loads(text):
    """Parse one JSON document (no surrounding whitespace: the frames never have any)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    try:
        value, end = _scanner(text, 0)
    except StopIteration as exc:
        raise ValueError("invalid JSON in frame") from exc
    if end != len(text):
        raise ValueError("trailing data after the JSON header")
    return value


# ───────────────────────────── framing ─────────────────────────────


def _arm(sock: socket.socket, deadline: float | None) -> None:
    """Bound the next read by what is left of ``deadline`` (``time.monotonic()`` seconds), if any."""
    if deadline is not None:
        left = deadline - _monotonic()
        if left <= 0:
            raise socket.timeout("deadline passed")
        _settimeout(sock, left)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes | bytearray:
    if n > _BIG_READ:
        return _recv_exact_into(sock, n, deadline)
    chunks = []
    while n:
        _arm(sock, deadline)
        chunk = _recv(sock, min(n, 1 << 20))
        if not chunk:
            raise EOFError("connection closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


_BIG_READ = 1 << 16


def _recv_exact_into(sock: socket.socket, n: int, deadline: float | None, head: bytes = b"") -> bytearray:
    """A large read straight into one buffer (megabytes of inputs: no chunks to join, no second copy), after
    ``head``, the part already read."""
    buf = bytearray(n)
    view = memoryview(buf)
    pos = len(head)
    view[:pos] = head
    while pos < n:
        _arm(sock, deadline)
        got = _recv_into(sock, view[pos:], min(n - pos, 1 << 20))
        if not got:
            raise EOFError("connection closed")
        pos += got
    return buf


def send_frame(sock: socket.socket, header: Mapping[str, Any], blob: bytes = b"", key: bytes | None = None) -> None:
    data = dumps(header).encode()
    frame = _pack_header(len(data), len(blob)) + data + blob
    if key:
        frame += _hmac_digest(key, data + blob, "sha256")
    _sendall(sock, frame)


class ForgedFrame(ValueError):
    """A frame whose MAC does not match: it was not written by the worker's own reply path."""


def recv_frame(
    sock: socket.socket,
    *,
    deadline: float | None = None,
    json_limit: int = MAGIC_LIMIT,
    key: bytes | None = None,
    reply: bool = False,
) -> tuple[dict, bytes]:
    """One frame. ``deadline`` (``time.monotonic()`` seconds) bounds the whole frame, not each read, so a
    peer that trickles bytes cannot hold the reader; oversized frames are refused before the rest is read; with
    ``key``, the frame's MAC is checked before its JSON is parsed.

    ``reply``: the frame answers a request, and nothing may follow it (the peer speaks only when asked), so the
    first read takes up to 64 KB at once: a small reply costs one read instead of two. Bytes after the frame
    are an error (a frame nobody asked for)."""
    head = b""
    if reply:
        _arm(sock, deadline)
        head = _recv(sock, _BIG_READ)
        if not head:
            raise EOFError("connection closed")
        if len(head) < _HEADER.size:
            head += _recv_exact(sock, _HEADER.size - len(head), deadline)
        n_json, n_blob = _unpack_header(head[: _HEADER.size])
        head = head[_HEADER.size :]
    else:
        n_json, n_blob = _unpack_header(_recv_exact(sock, _HEADER.size, deadline))
    if n_json > json_limit or n_blob > MAGIC_LIMIT:
        raise ValueError(f"frame too large ({n_json} + {n_blob} bytes)")
    n_mac = MAC_SIZE if key else 0
    size = n_json + n_blob + n_mac
    extra = len(head) > size  # refused below, after the frame's own signature (the more telling error)
    if len(head) >= size:
        body = head[:size] if extra else head
    elif size > _BIG_READ:
        body = _recv_exact_into(sock, size, deadline, head)
    else:  # the rest of the frame in as few reads as it takes
        body = head + _recv_exact(sock, size - len(head), deadline)
    view = memoryview(body)  # the arrays are read in place: a copy of megabytes of inputs costs page faults too
    data, blob = body[:n_json], view[n_json : n_json + n_blob]
    if key:
        if not _same_digest(body[n_json + n_blob :], _hmac_digest(key, view[: n_json + n_blob], "sha256")):
            raise ForgedFrame("the reply is not signed by the worker")
    if extra:
        raise ForgedFrame("data after the reply, which the worker's own reply path never sends")
    header = loads(data)
    if not isinstance(header, dict):
        raise ValueError("frame header is not an object")
    return header, blob


# ───────────────────────────── values ─────────────────────────────


class Blob:
    """Collects raw array bytes while a header is being encoded."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.offset = 0

    def add(self, raw: bytes) -> tuple[int, int]:
        start = self.offset
        self.parts.append(raw)
        self.offset += len(raw)
        return start, len(raw)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


# numpy dtype string ↔ the torch dtype names it may stand for (half types travel as float32)
ARRAY_DTYPES = {
    "<f8": ("float64",),
    "<f4": ("float32", "float16", "bfloat16"),
    "|b1": ("bool",),
    "<i8": ("int64",),
    "<i4": ("int32",),
    "<i2": ("int16",),
    "|i1": ("int8",),
    "|u1": ("uint8",),
}


def encode_array(array, dtype_name: str, device: str, blob: Blob) -> dict:
    """``array`` is a C-contiguous numpy array; ``dtype_name`` the torch dtype it stands for."""
    start, size = blob.add(array.tobytes())
    return {
        "__nd__": [start, size],
        "np": array.dtype.str,
        "dtype": dtype_name,
        "shape": list(array.shape),
        "device": device,
    }


TORCH_DTYPES = frozenset(
    {"float64", "float32", "float16", "bfloat16", "bool", "int64", "int32", "int16", "int8", "uint8"}
)


def decode_array(rec: dict, blob: bytes, strict: bool = True):
    """The numpy array an ``__nd__`` record points to. Anything inconsistent raises ``ValueError``: the
    record may come from a hostile process. ``strict``: the numpy dtype must be the one that stands for the
    torch dtype (replies); otherwise (requests, where floats travel as float64, or float32 when that is the
    target) any accepted pair will do."""
    import numpy as np

    where = rec.get("__nd__")
    if not isinstance(where, list) or len(where) != 2 or not all(type(v) is int for v in where):
        raise ValueError("bad array record")
    start, size = where
    np_name, torch_name, shape = rec.get("np"), rec.get("dtype"), rec.get("shape")
    if (
        np_name not in ARRAY_DTYPES
        or torch_name not in TORCH_DTYPES
        or (strict and torch_name not in ARRAY_DTYPES[np_name])
    ):
        raise ValueError(f"array dtype {np_name!r} / {torch_name!r} is not accepted")
    if not isinstance(shape, list) or len(shape) > 16 or not all(type(s) is int and s >= 0 for s in shape):
        raise ValueError("bad array shape")
    np_dtype = np.dtype(np_name)
    count = 1
    for s in shape:
        count *= s
    if start < 0 or size < 0 or start + size > len(blob) or count * np_dtype.itemsize != size:
        raise ValueError("array record does not match its bytes")
    if not isinstance(rec.get("device", "cpu"), str):
        raise ValueError("bad array device")
    array = np.frombuffer(blob, dtype=np_dtype, count=count, offset=start)
    return array.reshape(shape)
