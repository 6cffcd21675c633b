"""The student side of grading: runs untrusted learner code and answers with plain arrays.

This file is the only part of the autograder that ever executes student code. It is written to run on its
own (``python -I worker.py``) inside the sandbox, where the graders, the solutions and the reference values
are not even on the filesystem: it imports only the standard library, ``numpy`` and ``torch``.

Shape of a grading session::

    judge (trusted, decides scores)              sandbox (bubblewrap, no network, rlimits)
    ───────────────────────────────              ─────────────────────────────────────────
    Sandbox.open(stage source) ──control fd──▶   zygote (PID 1 of the sandbox): torch imported and
                                                   warmed once, originals captured, guards installed
                                                   └─ fork ─▶ child: exec student source,
    StudentProxy.call("fn", x) ◀──rpc socket──▶               serve requests, reply arrays

Every message is a frame: ``>II`` (json length, blob length), a JSON header, then a blob of raw array bytes.
Each message's fields are listed once, in the types of the section "the messages" below (:data:`Request`,
:class:`Reply`, and the zygote's :class:`ForkOrder`, :class:`Ready`, :class:`Exited`).
Arrays travel as ``{"__nd__": [offset, size], "np", "dtype", "shape", "device"}`` records pointing into the
blob. Nothing is pickled, in either direction, so a hostile child can send back only numbers, strings and
arrays: the judge compares them with values it computed itself. Each request carries a random ``id`` that the
reply must echo, so bytes written straight into the socket by learner code are not taken for a reply.

Learner code shares the child process with this file, so everything the worker still needs after the
learner's module has run is captured beforehand: builtins (imported below as module globals), the JSON codec
(the C encoder and scanner), socket and struct methods, and the torch functions used to encode values (``_T``).
Patching ``json``, ``builtins`` or ``torch.Tensor`` from learner code therefore changes nothing the worker
relies on. What a call did (the "written by hand" and "vectorised" verdicts) is not reported by this process:
it sends the traced graph of a recorded call (:func:`capture_graph`), and the judge checks and replays it.

The same :class:`Executor` also runs in-process for notebooks (nbgrader cells, self-learner notebooks), where
the learner's code already lives in the kernel and there is nothing to isolate.
"""

from __future__ import annotations

# Bound as module globals before any learner code exists: a learner who replaces builtins.isinstance (or
# len, sorted, ...) later does not change what the worker's own code calls.
from builtins import (  # noqa: A004 - shadowing on purpose
    AttributeError, BaseException, ChildProcessError, EOFError, Exception, IndexError, KeyboardInterrupt,
    OSError, PermissionError, RecursionError, RuntimeError, StopIteration, SyntaxError, TypeError, ValueError,
    all, any, bool, bytearray, bytes, compile, dict, enumerate, exec, float, frozenset, getattr, int, isinstance,
    len, list, max, memoryview, min, open, range, set, sorted, str, tuple, type, zip,
)

import _hashlib
import _json
import _signal
import _socket
import json
import os
import signal
import socket
import struct
import sys
import time
from typing import Any, Callable, Literal, Mapping, TypedDict, Union, cast

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

# Bounds on the graph a recorded call sends back (see capture_graph); the judge applies its own as well.
GRAPH_NODE_LIMIT = 20000
GRAPH_CONSTANT_LIMIT = 64  # tensors the traced code held (module parameters, buffers, literal tensors)
GRAPH_CONSTANT_ELEMENTS = 1 << 20  # in all


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


Request = Union[LoadRequest, CallRequest, NewRequest, MethodRequest, HasRequest, HandleRequest, LoadStateRequest,
                ToRequest, TrainRequest, ByeRequest]


class Where(TypedDict):
    line: int | None  # in the learner's file
    function: str
    code: str  # the line's text


class ErrorInfo(TypedDict, total=False):
    type: str  # the exception's class name (or MissingName, OutputTooLarge, ProtocolError)
    message: str
    where: Where | None


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
    uid: int | None  # the uid every child becomes
    zygote_uid: int
    pid_namespace: bool


class _ExitFields(TypedDict, total=False):
    killed: bool
    output_tail: str  # the end of what it printed (read_tail)
    reason: str  # "memory": killed for the sandbox's memory budget
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


def recv_frame(sock: socket.socket, *, deadline: float | None = None, json_limit: int = MAGIC_LIMIT,
               key: bytes | None = None, reply: bool = False) -> tuple[dict, bytes]:
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
        n_json, n_blob = _unpack_header(head[:_HEADER.size])
        head = head[_HEADER.size:]
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
    data, blob = body[:n_json], view[n_json:n_json + n_blob]
    if key:
        if not _same_digest(body[n_json + n_blob:], _hmac_digest(key, view[:n_json + n_blob], "sha256")):
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
    "<f8": ("float64",), "<f4": ("float32", "float16", "bfloat16"), "|b1": ("bool",), "<i8": ("int64",),
    "<i4": ("int32",), "<i2": ("int16",), "|i1": ("int8",), "|u1": ("uint8",),
}


def encode_array(array, dtype_name: str, device: str, blob: Blob) -> dict:
    """``array`` is a C-contiguous numpy array; ``dtype_name`` the torch dtype it stands for."""
    start, size = blob.add(array.tobytes())
    return {"__nd__": [start, size], "np": array.dtype.str, "dtype": dtype_name,
            "shape": list(array.shape), "device": device}


TORCH_DTYPES = frozenset({"float64", "float32", "float16", "bfloat16", "bool", "int64", "int32", "int16", "int8",
                          "uint8"})


def decode_array(rec: dict, blob: bytes, strict: bool = True):
    """The numpy array an ``__nd__`` record points to. Anything inconsistent raises ``ValueError``: the
    record may come from a hostile process. ``strict``: the numpy dtype must be the one that stands for the
    torch dtype (replies); otherwise (requests, where floats travel as float64, or float32 when that is the
    target) any accepted pair will do."""
    import numpy as np

    where = rec.get("__nd__")
    if (not isinstance(where, list) or len(where) != 2 or not all(type(v) is int for v in where)):
        raise ValueError("bad array record")
    start, size = where
    np_name, torch_name, shape = rec.get("np"), rec.get("dtype"), rec.get("shape")
    if np_name not in ARRAY_DTYPES or torch_name not in TORCH_DTYPES or (strict and torch_name not in ARRAY_DTYPES[np_name]):
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


# ───────────────────────────── captured torch references ─────────────────────────────


class _Refs:
    """torch functions the worker uses after learner code has run, captured before it ran (by
    :func:`capture_torch`, which sets each of these)."""

    torch: Any
    Tensor: Any
    TensorBase: Any
    Module: Any
    dtype: Any
    detach: Any
    cpu: Any
    numpy: Any
    contiguous: Any
    to: Any
    clone: Any
    as_subclass: Any
    requires_grad_: Any
    is_floating_point: Any
    is_complex: Any
    equal: Any
    from_numpy: Any
    zeros: Any
    mul: Any
    sum: Any
    backward: Any
    manual_seed: Any
    no_subclass: Any
    enable_grad: Any
    no_grad: Any
    numpy_ok: tuple  # the dtypes numpy holds as they are
    halves: tuple  # float16, bfloat16: travel as float32


_T: _Refs | None = None


def capture_torch() -> _Refs:
    """Capture (once per process) every torch callable the executor and the recorder use."""
    global _T
    if _T is not None:
        return _T
    import torch

    r = _Refs()
    r.torch = torch
    r.Tensor = torch.Tensor
    r.TensorBase = torch._C.TensorBase
    tb = torch._C.TensorBase
    r.detach, r.cpu, r.numpy, r.contiguous = tb.detach, tb.cpu, tb.numpy, tb.contiguous
    r.to, r.clone, r.as_subclass, r.requires_grad_ = tb.to, tb.clone, tb.as_subclass, tb.requires_grad_
    r.is_floating_point, r.is_complex = tb.is_floating_point, tb.is_complex
    r.equal, r.from_numpy, r.zeros = torch.equal, torch.from_numpy, torch.zeros
    r.no_subclass = torch._C.DisableTorchFunctionSubclass
    r.enable_grad, r.no_grad, r.manual_seed = torch.enable_grad, torch.no_grad, torch.manual_seed
    accelerated = _accelerators(torch)
    if not accelerated:
        # torch.manual_seed also queues a lazy seeding of every accelerator backend, each with a formatted
        # stack (about 1 ms per call); with none present only the CPU generator exists to be seeded
        r.manual_seed = _seed_cpu_only(torch.default_generator.manual_seed)
    r.backward = torch.autograd.backward
    r.mul, r.sum = torch.mul, torch.sum
    r.Module = torch.nn.Module
    r.dtype = torch.dtype
    r.numpy_ok = (torch.float32, torch.float64, torch.bool, torch.int64, torch.int32, torch.int16, torch.int8,
                  torch.uint8)
    r.halves = (torch.bfloat16, torch.float16)
    _T = r
    return r


def _accelerators(torch) -> bool:
    """True when a device other than the CPU could ever be seeded in this process."""
    for name in ("cuda", "mps", "xpu", "mtia"):
        backend = getattr(torch, name, None)
        try:
            if backend is not None and backend.is_available():
                return True
        except Exception:  # noqa: BLE001 - a backend that cannot even answer is not usable
            continue
    return bool(torch._C._get_privateuse1_backend_name() != "privateuseone")


def _seed_cpu_only(seed_default):
    def manual_seed(seed):
        return seed_default(int(seed))

    return manual_seed


# ───────────────────────────── the executor (student side) ─────────────────────────────


class StudentError(Exception):
    """Raised inside the executor when the learner's code fails; carries a teaching summary."""


class Executor:
    """Runs requests against one learner module. Trusted code on the outside sends only plain data, and
    believes nothing this class answers that it cannot check (values are compared with its own references,
    traced graphs are replayed by :mod:`autograder.sandbox.evidence`)."""

    def __init__(self) -> None:
        self.t = capture_torch()
        self.torch = self.t.torch
        self.namespace: dict | None = None
        self.filename = "<student>"
        self.lines: list[str] = []
        self.handles: dict[int, Any] = {}  # modules made by "new" requests
        self.load_error: ErrorInfo | None = None

    # -- loading ------------------------------------------------------------------------------------------
    def load_source(self, source: str, filename: str) -> Reply:
        import types

        self.filename = filename
        self.lines = source.splitlines()
        module = types.ModuleType("student_stage")
        module.__file__ = filename
        sys.modules["student_stage"] = module
        try:
            code = compile(source, filename, "exec")
            exec(code, module.__dict__)  # noqa: S102 - this is the point: we are the sandboxed side
        except SyntaxError as exc:
            self.load_error = {"type": "SyntaxError", "message": f"{exc.msg}",
                               "where": {"line": exc.lineno, "function": "<module>", "code": (exc.text or "").strip()}}
            return {"ok": False, "error": self.load_error}
        except BaseException as exc:  # noqa: BLE001 - any failure at import is the learner's
            self.load_error = self._error(exc)
            return {"ok": False, "error": self.load_error}
        self.namespace = module.__dict__
        return {"ok": True, "names": sorted(str(k) for k in list(module.__dict__) if not str(k).startswith("_"))}

    def use_namespace(self, namespace: dict, filename: str = "<notebook>") -> None:
        """In-process mode: the learner's functions already live in ``namespace``."""
        self.namespace = namespace
        self.filename = filename

    def _error(self, exc: BaseException) -> ErrorInfo:
        """Type, message and the line of the learner's own file where it happened (no autograder frames)."""
        try:
            message = str(exc)[:2000]
        except BaseException:  # noqa: BLE001 - a learner's exception class may fail in __str__
            message = "<the error message could not be shown>"
        where: Where | None = None
        tb = exc.__traceback__
        depth = 0
        while tb is not None and depth < 200:
            code = tb.tb_frame.f_code
            if code.co_filename == self.filename:
                line = tb.tb_lineno
                text = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
                where = {"line": line, "function": code.co_name, "code": text[:200]}
            tb = tb.tb_next
            depth += 1
        return {"type": type(exc).__name__[:100], "message": message, "where": where}

    # -- values -------------------------------------------------------------------------------------------
    def _dtype(self, name):
        if name is None:
            return None
        value = getattr(self.torch, str(name), None)
        if not isinstance(value, self.t.dtype):
            raise ValueError(f"unknown dtype {name!r}")
        return value

    def to_tensor(self, rec: dict, blob: bytes):
        t = self.t
        array = decode_array(rec, blob, strict=False)
        x = t.from_numpy(array.copy())
        dtype = self._dtype(rec.get("dtype"))
        device = rec.get("device") or "cpu"
        if rec.get("noncontig") and x.dim() >= 1:
            # same values, but a view with a stride of 2 on the last dim: catches code that assumes .view works
            wide = t.zeros(*x.shape[:-1], x.shape[-1] * 2, dtype=x.dtype)
            wide[..., ::2] = x
            x = wide[..., ::2]
        x = t.to(x, device=device, dtype=dtype) if not rec.get("noncontig") else t.to(t.to(x, dtype=dtype), device)
        if rec.get("noncontig") and device != "cpu":
            wide = t.zeros(*x.shape[:-1], x.shape[-1] * 2, dtype=x.dtype, device=device)
            wide[..., ::2] = x
            x = wide[..., ::2]
        if rec.get("requires_grad"):
            t.requires_grad_(x, True)
        return x

    def decode(self, value, blob: bytes):
        if isinstance(value, dict):
            if "__nd__" in value:
                return self.to_tensor(value, blob)
            if "__tuple__" in value:
                return tuple(self.decode(v, blob) for v in value["__tuple__"])
            if "__dtype__" in value:
                return self._dtype(value["__dtype__"])
            if "__handle__" in value:  # an object built by an earlier "new" request of this child
                return self.handles[int(value["__handle__"])]
            return {k: self.decode(v, blob) for k, v in value.items()}
        if isinstance(value, list):
            return [self.decode(v, blob) for v in value]
        return value

    def encode(self, value, blob: Blob, depth: int = 0, budget: list | None = None):
        """Learner values → plain records. Only real tensor data leaves: subclasses are unwrapped first, with
        the C-level tensor methods captured before learner code ran (a subclass cannot lie about them)."""
        t = self.t
        if budget is None:
            budget = [ENCODE_BUDGET]
        budget[0] -= 1
        if budget[0] < 0:
            return {"__repr__": "<too many values>"}
        if depth > 6:
            return {"__repr__": "<nested too deeply>"}
        if isinstance(value, t.TensorBase):
            with t.no_subclass():
                x = t.detach(value)
                if type(x) is not t.Tensor:
                    x = t.as_subclass(x, t.Tensor)
                dtype_name = str(x.dtype).replace("torch.", "")
                device = str(x.device)
                x = t.cpu(x)
                if x.dtype in t.halves:
                    x = t.to(x, t.torch.float32)
                if t.is_complex(x) or x.dtype not in t.numpy_ok:
                    return {"__repr__": f"tensor of dtype {dtype_name}"}
                array = t.numpy(t.contiguous(x)).copy()
            return encode_array(array, dtype_name, device, blob)
        if isinstance(value, bool) or value is None:
            return bool(value) if value is not None else None
        if type(value) in (int, float):
            return value
        if type(value) is str:
            return value[:1000]
        if type(value) in (tuple, list):
            items = [self.encode(v, blob, depth + 1, budget) for v in value[:64]]
            return {"__tuple__": items} if type(value) is tuple else items
        if type(value) is dict:
            return {str(k)[:100]: self.encode(v, blob, depth + 1, budget) for k, v in list(value.items())[:64]}
        if isinstance(value, t.dtype):
            return {"__dtype__": str(value).replace("torch.", "")}
        return {"__repr__": f"<{type(value).__name__[:100]}>"}

    # -- requests -----------------------------------------------------------------------------------------
    def handle(self, req: Request, blob: bytes) -> tuple[Reply, bytes]:
        """One request, answered: its reply and the reply's blob. Whatever the learner's code raises becomes an
        error reply."""
        out = Blob()
        try:
            op = req.get("op")
            if op == "load":
                load = cast(LoadRequest, req)
                return self.load_source(load["source"], load["filename"]), b""
            if self.namespace is None:
                return {"ok": False, "error": self.load_error or {"type": "RuntimeError", "message": "nothing loaded"}}, b""
            serve_op = self.OPS.get(op)
            if serve_op is None:
                return {"ok": False, "error": {"type": "ProtocolError", "message": f"unknown op {op!r}"}}, b""
            return serve_op(self, req, blob, out), out.bytes()
        except StudentError as exc:
            return {"ok": False, "error": exc.args[0]}, b""
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            return {"ok": False, "error": self._error(exc)}, b""

    def _has(self, req: HasRequest, blob: bytes, out: Blob) -> Reply:
        namespace = self._namespace()
        return {"ok": True, "value": {str(n): n in namespace for n in req["names"]}}

    def _state(self, req: HandleRequest, blob: bytes, out: Blob) -> Reply:
        module = self.handles[req["handle"]]
        return {"ok": True, "value": {str(k): self.encode(v, out) for k, v in module.state_dict().items()}}

    def _load_state(self, req: LoadStateRequest, blob: bytes, out: Blob) -> Reply:
        module = self.handles[req["handle"]]
        state = {k: self.decode(v, blob) for k, v in req["state"].items()}
        with self.t.no_grad():
            module.load_state_dict(state, strict=True)
        return {"ok": True}

    def _describe_handle(self, req: HandleRequest, blob: bytes, out: Blob) -> Reply:
        return {"ok": True, "value": self._describe(self.handles[req["handle"]])}

    def _to(self, req: ToRequest, blob: bytes, out: Blob) -> Reply:
        self.handles[req["handle"]].to(device=req.get("device"), dtype=self._dtype(req.get("dtype")))
        return {"ok": True}

    def _train(self, req: TrainRequest, blob: bytes, out: Blob) -> Reply:
        self.handles[req["handle"]].train(bool(req["mode"]))
        return {"ok": True}

    def _namespace(self) -> dict:
        if self.namespace is None:  # handle() answers nothing else until a module is loaded
            raise RuntimeError("nothing loaded")
        return self.namespace

    def _lookup(self, name: str):
        namespace = self._namespace()
        if name not in namespace:
            raise StudentError({"type": "MissingName", "message": f"{name} is not defined in your file", "where": None})
        return namespace[name]

    def _call(self, req: CallRequest | NewRequest | MethodRequest, blob: bytes, out: Blob) -> Reply:
        t = self.t
        op = req["op"]
        args = self.decode(req.get("args", []), blob)
        kwargs = self.decode(req.get("kwargs", {}), blob)
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise ValueError("bad arguments")
        on_module = cast(MethodRequest, req) if op == "method" else None
        if on_module is not None:
            target = self.handles[on_module["handle"]]
            method = on_module.get("method", "__call__")
            fn = target if method == "__call__" else getattr(target, method)
        else:
            fn = self._lookup(cast(Union[CallRequest, NewRequest], req)["name"])
        traced, trace_fn = None, fn
        if req.get("record"):
            if _holds_objects(self.handles, args, kwargs):
                # the call changes objects it was given (a cache it appends to): the trace, which runs the call
                # once more, runs on copies of them taken before the call, so that both see the same state
                trace_fn, args_twin, kwargs_twin = _twin(t, (fn, args, kwargs))
                traced = _trace_inputs(t, args_twin, kwargs_twin)
            else:
                traced = _trace_inputs(t, args, kwargs)
        before = None
        if req.get("return_inputs"):
            before = [t.clone(t.detach(a)) if isinstance(a, t.TensorBase) else None for a in args]
        if req.get("seed") is not None:
            t.manual_seed(int(req["seed"]))
        grad_mode = t.enable_grad() if req.get("grad") else _null()
        try:
            with grad_mode:
                value = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise StudentError(self._error(exc)) from None
        reply: Reply = {"ok": True}
        if op == "new":
            handle = len(self.handles) + 1
            self.handles[handle] = value
            reply["value"] = {"handle": handle, **self._describe(value)}
            if req.get("module_dtype") is not None or "weights" in req:
                self._prepare(value, reply["value"], cast(NewRequest, req), blob, reply)
            return reply
        reply["value"] = self.encode(value, out)
        if traced is not None:
            # after the answer is encoded: a value computed lazily, while it is read, is part of the answer
            reply["graph"] = capture_graph(trace_fn, *traced, lambda v: self.encode(v, out))
        if before is not None:
            reply["inputs_changed"] = [
                bool(b is not None and isinstance(a, t.TensorBase)
                     and (a.shape != b.shape or not t.equal(t.as_subclass(t.detach(a), t.Tensor), b)))
                for a, b in zip(args, before)
            ]
        grad = req.get("grad")
        if grad:
            # d(sum(out * upstream))/d(params and grad-requiring inputs): the judge compares with its own grads
            upstream = self.decode(grad["upstream"], blob)
            if not isinstance(value, t.TensorBase) or not value.requires_grad:
                reply["grads"] = None
            else:
                # d(sum(out * upstream)) as a scalar's backward: the same gradients bit for bit (1 * u == u),
                # and unlike backward(out, upstream) it never imports sympy (0.3 s in a fresh process)
                with t.no_subclass():
                    scalar = t.sum(t.mul(value, t.to(upstream, value.device, value.dtype)))
                t.backward(scalar)
                grads = {}
                if on_module is not None:
                    for name, p in self.handles[on_module["handle"]].named_parameters():
                        grads[str(name)] = self.encode(p.grad, out) if p.grad is not None else None
                for i, a in enumerate(args):
                    if isinstance(a, t.TensorBase) and a.requires_grad:
                        grads[f"arg{i}"] = self.encode(a.grad, out) if a.grad is not None else None
                reply["grads"] = grads
        return reply

    def _prepare(self, module, info: dict, req: NewRequest, blob: bytes, reply: Reply) -> None:
        """What the judge would do next with a new module, in the same request: ``module.to(dtype=...)``
        (an error fails the request, as it would fail that call), then read its state and load the given
        weights. The load happens only when the weights fit (same names and shapes, nothing left over), which is
        exactly when the judge, checking the state it gets back, would have asked for it; an error reading the
        state or loading is returned for the judge to raise where the separate call would have raised it."""
        t = self.t
        if req.get("module_dtype") is not None:
            module.to(dtype=self._dtype(req["module_dtype"]))  # an error answers the request, as in ``handle``
        if "weights" not in req:
            return
        weights = self.decode(req["weights"], blob)
        if not isinstance(weights, dict) or not isinstance(module, t.Module):
            return
        prepared: Prepared = {}
        reply["prepared"] = prepared
        try:
            if info.get("buffers"):
                state = dict(module.state_dict())
                shapes = prepared["state"] = {
                    str(k): [int(d) for d in v.shape] if isinstance(v, t.TensorBase) else None for k, v in state.items()}
            else:
                state = {n: None for n in info.get("params", {})}
                shapes = {n: p["shape"] for n, p in info.get("params", {}).items()}
            fits = (all(n in shapes and shapes[n] == [int(d) for d in w.shape] for n, w in weights.items())
                    and all(n in weights for n in info.get("params", {})))
            if fits:
                merged = {n: (weights[n] if n in weights else v) for n, v in state.items()
                          if n in weights or isinstance(v, t.TensorBase)}
                with t.no_grad():
                    module.load_state_dict(merged, strict=True)
                prepared["loaded"] = True
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            prepared["state_error" if "state" not in prepared and info.get("buffers") else "load_error"] = \
                self._error(exc)

    def _describe(self, obj) -> dict:
        t = self.t
        if not isinstance(obj, t.Module):
            return {"type": type(obj).__name__[:100], "module": False}
        return {
            "type": type(obj).__name__[:100],
            "module": True,
            "params": {str(n): {"shape": [int(s) for s in p.shape], "dtype": str(p.dtype).replace("torch.", ""),
                                "requires_grad": bool(p.requires_grad)} for n, p in obj.named_parameters()},
            "buffers": {str(n): {"shape": [int(s) for s in b.shape], "dtype": str(b.dtype).replace("torch.", "")}
                        for n, b in obj.named_buffers()},
            "modules": {str(n): type(m).__name__[:100] for n, m in obj.named_modules() if n},
            "training": bool(obj.training),
        }

    # what each request's op does (after "load", which every child receives first)
    OPS: dict[str, Callable[..., Reply]] = {"call": _call, "new": _call, "method": _call, "has": _has, "state": _state, "load_state": _load_state,
           "describe": _describe_handle, "to": _to, "train": _train}


# ───────────────────────────── evidence: the traced graph of a recorded call ─────────────────────────────
#
# A call with ``record`` is run as usual, for its answer, and traced once more by a recorder at the dispatcher's
# PreDispatch key (the level ``make_fx(pre_dispatch=True)`` traces at): every ATen op the learner's code calls, as
# it enters the dispatcher, before autograd or any decomposition, so fused kernels (scaled_dot_product_attention...)
# stay single nodes. The graph travels as plain data; the judge (autograder/sandbox/evidence.py) believes none of it: it
# looks for forbidden ops, counts the others, and replays the graph with its own torch on the inputs it sent and
# on fresh ones, against the learner's own answers.


class _Slot:
    """Where the ``index``-th traced tensor goes back into the call's arguments."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _trace_inputs(t, args: list, kwargs: dict) -> tuple[list, list, dict]:
    """Copies of the call's tensors, taken before the call (which may change its inputs in place), and the
    arguments with each tensor replaced by its :class:`_Slot`. The order is the order the judge encodes them in
    (positional arguments, then keyword arguments, depth first)."""
    tensors: list = []

    def walk(value, depth: int):
        if isinstance(value, t.TensorBase):
            tensors.append(t.clone(t.detach(value)))
            return _Slot(len(tensors) - 1)
        if depth < 6 and type(value) in (list, tuple):
            return type(value)(walk(v, depth + 1) for v in value)
        if depth < 6 and type(value) is dict:
            return {k: walk(v, depth + 1) for k, v in value.items()}
        return value

    return tensors, walk(list(args), 0), walk(dict(kwargs), 0)


def _holds_objects(handles: dict, args: list, kwargs: dict) -> bool:
    """Do the call's arguments hold an object built by an earlier request (see ``__handle__`` records)?"""
    built = {id(obj) for obj in handles.values()}
    return any(id(v) in built for v in (*args, *kwargs.values()))


def _twin(t, value):
    """A deep copy of ``value``. Tensors with autograd history (keys a cache kept from a forward run with grad),
    which ``copy.deepcopy`` refuses, are copied detached: the trace needs their values only."""
    import copy

    memo: dict = {}

    def seed(v, depth: int) -> None:
        if isinstance(v, t.TensorBase):
            if v.grad_fn is not None and id(v) not in memo:
                memo[id(v)] = t.clone(t.detach(v))
        elif depth < 6 and type(v) in (list, tuple):
            for item in v:
                seed(item, depth + 1)
        elif depth < 6 and type(v) is dict:
            for item in v.values():
                seed(item, depth + 1)
        elif depth < 6 and not isinstance(v, type) and isinstance(getattr(v, "__dict__", None), dict):
            for item in vars(v).values():
                seed(item, depth + 1)

    seed(value, 0)
    return copy.deepcopy(value, memo)


def _fill(value, xs):
    if type(value) is _Slot:
        return xs[value.index]
    if type(value) in (list, tuple):
        return type(value)(_fill(v, xs) for v in value)
    if type(value) is dict:
        return {k: _fill(v, xs) for k, v in value.items()}
    return value


class _TraceError(Exception):
    pass


def capture_graph(fn, tensors: list, args: list, kwargs: dict, encode) -> dict:
    """``fn(*args, **kwargs)`` traced: ``{"inputs": n, "nodes": [...], "output": arg}``, or ``{"error": why}``
    when it cannot be traced. A node is ``{"op": "input", "index": i}``, ``{"op": "constant", "value": array
    record}`` (parameters, buffers and literal tensors the code held; ``encode`` puts them in the reply's blob) or
    ``{"op": "call", "target": "aten.matmul.default", "args": [...], "kwargs": {...}}`` (``"getitem"``: one
    result of an op that returns several); an argument is a number, string, bool or None, ``{"ref": node
    index}``, ``{"list": [...]}``, ``{"dtype": name}``, ``{"device": name}``, ``{"layout": name}`` or
    ``{"memory_format": name}``."""
    t = capture_torch()
    try:
        mark_entry_points()
        _make_tracer()
        recorder = _TRACER[0](tensors, encode)
        with t.no_grad(), _TRACER[1](), recorder:
            value = fn(*_fill(args, tensors), **_fill(kwargs, tensors))
        output = recorder.arg(value) if recorder.error is None else None
        if recorder.error is not None:
            return {"error": recorder.error}
        return {"inputs": len(tensors), "nodes": recorder.nodes, "output": output}
    except _TraceError as exc:
        return {"error": str(exc)}
    except BaseException as exc:  # noqa: BLE001 - whatever the learner's code raised while traced
        if isinstance(exc, KeyboardInterrupt):
            raise
        try:
            why = f"{type(exc).__name__}: {str(exc)[:300]}"
        except BaseException:  # noqa: BLE001 - an exception class of the learner's may fail in __str__
            why = "the trace raised an exception"
        return {"error": why}


_TRACER: list = []  # (the recorder class, torch's context that turns its Python dispatcher on), made once


def _make_tracer() -> None:
    """The recorder class. torch lets only its own tracing modes sit at the PreDispatch key (the slot of
    ``ProxyTorchDispatchMode``), so the recorder is one of those by class, with its own ``__init__`` and
    ``__torch_dispatch__``: it runs each op and appends it to a list of nodes, a few microseconds per op instead
    of the fx machinery's ~1 ms. Tensors are told apart by identity, through weak references (a strong one
    would make autograd copy a factory's result into a new tensor): an id whose tensor has died is not
    mistaken for a later tensor that reuses it."""
    if _TRACER:
        return
    import weakref

    import torch
    from torch._dispatch.python import enable_python_dispatcher
    from torch.fx.experimental.proxy_tensor import ProxyTorchDispatchMode
    from torch.utils._python_dispatch import TorchDispatchMode

    pre_dispatch, proxy_key = torch._C.DispatchKey.PreDispatch, torch._C._TorchDispatchModeKey.PROXY
    skip = {torch.ops.prim.device.default}  # asks a tensor's device: nothing to replay
    literal = {torch.ops.aten.lift_fresh.default}  # torch.tensor(...) lifting its data: the tensor is a constant
    TensorBase, dtype, device, layout, memory_format = (torch._C.TensorBase, torch.dtype, torch.device,
                                                        torch.layout, torch.memory_format)
    OpOverload = torch._ops.OpOverload
    ref = weakref.ref
    plain_dispatch = torch._C._DisablePythonDispatcher

    class Recorder(ProxyTorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # torch's documented switch (TorchDispatchMode._should_skip_dynamo): False leaves __torch_dispatch__
            # unwrapped, so its first call does not import torch._dynamo (about 1.3 s of every sandbox's start)
            # only to keep a compiler that never runs here out of the recorder
            return False

        def __init__(self, tensors: list, encode):
            TorchDispatchMode.__init__(self, pre_dispatch)
            self._mode_key = proxy_key
            self.enter_stack: list = []
            self.pre_dispatch = True
            self.nodes: list = [{"op": "input", "index": i} for i in range(len(tensors))]
            self.ids: dict = {}  # id(tensor) -> (weak reference, node)
            for i, x in enumerate(tensors):
                self.ids[id(x)] = (ref(x), i)
            self.encode = encode
            self.error: str | None = None
            self.n_constants = self.n_elements = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if self.error is not None or func in skip:
                return func(*args, **kwargs)
            try:  # the arguments are read before the op runs: an in-place op must not change a constant first
                if func in literal:
                    record = self.arg(args[0])
                else:
                    record = {"op": "call", "target": (str(func) if type(func) is OpOverload else repr(func))[:200],
                              "args": [self.arg(a) for a in args],
                              "kwargs": {str(k): self.arg(v) for k, v in kwargs.items()}}
            except _TraceError as exc:
                self.error = str(exc)
                return func(*args, **kwargs)
            with plain_dispatch():  # the op itself runs in C++, without the Python decompositions the tracer enables
                value = func(*args, **kwargs)
            try:
                if func in literal:
                    self.name(value, record["ref"])
                else:
                    self.name(value, self.add(record))
            except _TraceError as exc:
                self.error = str(exc)
            return value

        def add(self, record: dict) -> int:
            if len(self.nodes) >= GRAPH_NODE_LIMIT:
                raise _TraceError(f"the traced graph has more than {GRAPH_NODE_LIMIT} nodes")
            self.nodes.append(record)
            return len(self.nodes) - 1

        def name(self, value, node: int) -> None:
            """``value`` (an op's result) is node ``node``; each tensor of a list of results gets a getitem."""
            if isinstance(value, TensorBase):
                self.ids[id(value)] = (ref(value), node)
            elif type(value) in (tuple, list):
                for i, v in enumerate(value):
                    if isinstance(v, TensorBase):
                        self.name(v, self.add({"op": "call", "target": "getitem", "args": [{"ref": node}, i],
                                               "kwargs": {}}))

        def arg(self, value, depth: int = 0):
            if isinstance(value, TensorBase):
                known = self.ids.get(id(value))
                node = known[1] if known is not None and known[0]() is value else None
                if node is None:  # a tensor the graph has not made: a constant, with its value now
                    self.n_constants += 1
                    self.n_elements += value.numel()
                    if self.n_constants > GRAPH_CONSTANT_LIMIT or self.n_elements > GRAPH_CONSTANT_ELEMENTS:
                        raise _TraceError("the traced code holds too many or too large tensors")
                    node = self.add({"op": "constant", "value": self.encode(value)})
                    self.ids[id(value)] = (ref(value), node)
                return {"ref": node}
            if value is None or type(value) in (bool, int, float):
                return value
            if type(value) is str:
                return value[:100]
            if isinstance(value, (list, tuple)) and depth < 4:
                return {"list": [self.arg(v, depth + 1) for v in value]}
            if isinstance(value, dtype):
                return {"dtype": str(value).replace("torch.", "")}
            if isinstance(value, device):
                return {"device": str(value)}
            if isinstance(value, layout):
                return {"layout": str(value).replace("torch.", "")}
            if isinstance(value, memory_format):
                return {"memory_format": str(value).replace("torch.", "")}
            raise _TraceError(f"an argument of type {type(value).__name__[:60]} in the traced graph")

    _TRACER[:] = [Recorder, enable_python_dispatcher]


_MARKS: list = []


def mark_entry_points() -> None:
    """Make torch's Python-level attention entry points that decompose into ordinary ops visible in a traced
    graph: ``F.multi_head_attention_forward`` (which ``nn.MultiheadAttention`` calls unless it takes its fused
    path, itself a forbidden ATen op) is wrapped so that each call also dispatches the identity op
    ``autograder::multi_head_attention_forward``, a node the judge finds by its name. Installed once per process
    (in the sandbox's zygote, before any learner code exists). Best effort: code that reaches the original
    function (the wrapper's closure) runs torch's own Python code, a plagiarism question."""
    if _MARKS:
        return
    import torch
    import torch.nn.functional as F

    lib = torch.library.Library("autograder", "DEF")
    lib.define("multi_head_attention_forward(Tensor x) -> Tensor")
    lib.impl("multi_head_attention_forward", _identity, "CompositeExplicitAutograd")
    mark = torch.ops.autograder.multi_head_attention_forward.default
    original = F.multi_head_attention_forward

    def multi_head_attention_forward(query, *args, **kwargs):
        mark(query)
        return original(query, *args, **kwargs)

    multi_head_attention_forward.__doc__ = original.__doc__
    multi_head_attention_forward.__module__ = original.__module__
    F.multi_head_attention_forward = multi_head_attention_forward
    _MARKS.append(lib)


def _identity(x):
    return x.clone()


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ───────────────────────────── child process ─────────────────────────────


def serve(sock: socket.socket) -> None:
    """Answer requests on ``sock`` until the judge says goodbye or hangs up (one stage of one submission)."""
    executor = Executor()
    key = None
    while True:
        try:
            req, blob = recv_frame(sock)
        except (EOFError, OSError, ValueError):
            return
        if req.get("op") == "bye":
            return
        if req.get("op") == "load" and key is None and isinstance(req.get("key"), str):
            key = bytes.fromhex(req["key"])  # arrives before any learner code has run in this process
        rid = req.get("id")
        reply, out = executor.handle(cast(Request, req), blob)  # the judge's (it is not checked here)
        try:
            if len(out) > MAGIC_LIMIT:
                reply, out = {"ok": False, "error": {"type": "OutputTooLarge", "message": "the result is too large to return"}}, b""
            reply["id"] = rid
            try:
                data = dumps(reply).encode()
            except (TypeError, ValueError, RecursionError):
                reply, out = {"ok": False, "id": rid, "error": {"type": "ProtocolError",
                                                               "message": "the reply could not be encoded"}}, b""
                data = dumps(reply).encode()
            if len(data) > REPLY_JSON_LIMIT:
                data = dumps({"ok": False, "id": rid, "error": {"type": "OutputTooLarge",
                                                                "message": "the result is too large to return"}}).encode()
                out = b""
            frame = _pack_header(len(data), len(out)) + data + out
            if key:
                frame += _hmac_digest(key, data + out, "sha256")
            _sendall(sock, frame)
        except (OSError, ValueError):
            return


def _apply_limits(limits: dict) -> None:
    import resource

    def setlim(res, value, slack=0):
        if value is None:
            return
        try:
            hard = resource.getrlimit(res)[1]
            soft, new_hard = int(value), int(value) + slack
            if hard != resource.RLIM_INFINITY:
                soft, new_hard = min(soft, hard), min(new_hard, hard)
            resource.setrlimit(res, (soft, new_hard))
        except (ValueError, OSError):
            pass

    if limits.get("memory_mb"):
        # address space = what the warm zygote already maps + the learner's allowance (with CUDA, whose driver
        # reserves huge address ranges, the data segment is limited instead)
        if limits.get("cuda"):
            setlim(resource.RLIMIT_DATA, _status_kb("VmData") * 1024 + int(limits["memory_mb"]) * 1024 * 1024)
        else:
            setlim(resource.RLIMIT_AS, _status_kb("VmSize") * 1024 + int(limits["memory_mb"]) * 1024 * 1024)
    setlim(resource.RLIMIT_CPU, limits.get("cpu_s"), slack=2)  # SIGXCPU first, SIGKILL 2 s later
    setlim(resource.RLIMIT_FSIZE, limits.get("file_mb", 8) * 1024 * 1024)
    setlim(resource.RLIMIT_CORE, 0)
    setlim(resource.RLIMIT_NOFILE, limits.get("files", 256))
    if limits.get("nproc"):
        setlim(resource.RLIMIT_NPROC, limits["nproc"])


def _status_kb(field: str, pid: str = "self") -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 4 << 20


# signals a forked process must not meet at their default action in the zygote: faults (a real one ends it)
# and SIGCHLD (its children's ends are collected); every other catchable signal is ignored there
_ZYGOTE_DEFAULT_SIGNALS = frozenset({signal.SIGCHLD, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL,
                                     signal.SIGSYS, signal.SIGTRAP, signal.SIGABRT})
_CATCHABLE = tuple(s for s in sorted(_signal.valid_signals()) if s not in (signal.SIGKILL, signal.SIGSTOP))


def _ignore_signals() -> None:
    """In the zygote: no signal that learner code (or anything else) can send ends or interrupts it. Python's
    own SIGINT handler would raise KeyboardInterrupt in it, which the PID-1 protection does not stop."""
    for sig in _CATCHABLE:
        try:
            signal.signal(sig, signal.SIG_DFL if sig in _ZYGOTE_DEFAULT_SIGNALS else signal.SIG_IGN)
        except (OSError, ValueError):
            pass


def _default_signals() -> None:
    """In a child, before learner code: every signal at its default action (as in a new process), except
    SIGXFSZ, ignored so that a flood of prints fails the write, not the process."""
    for sig in _CATCHABLE:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


_LIBC = None  # libc through ctypes, loaded by the zygote (a child must not load a library of its own)
_CLONE_NEWIPC = 0x08000000
_PR_SET_NO_NEW_PRIVS = 38


def _libc():
    global _LIBC
    if _LIBC is None:
        import ctypes

        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


def _own_ipc_namespace() -> bool:
    """A SysV IPC namespace of this process's own (shared memory, semaphores, message queues): nothing another
    student's process created is visible, nothing this one creates outlives it. Needs CAP_SYS_ADMIN (the
    zygote's, as root); False where it cannot be had."""
    import ctypes

    try:
        return _libc().unshare(_CLONE_NEWIPC) == 0
    except (OSError, AttributeError, ctypes.ArgumentError):
        return False


def _drop_privileges(uid: int | None) -> None:
    """Become ``uid`` for good (real, effective and saved ids; no supplementary groups, no capabilities left),
    then set no-new-privileges; raises when any step did not hold: learner code never runs with more."""
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) or os.getgroups():
            raise PermissionError(f"could not become uid {uid}")
    if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise PermissionError("could not set no-new-privileges")
    if uid is not None:
        _clear_capabilities()


def _clear_capabilities() -> None:
    """No capability in any set (the inheritable ones bubblewrap gave the zygote included): capset(2) with zeros,
    which any process may do to itself."""
    import ctypes

    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: two 32-bit words each
    if _libc().capset(header, data) != 0:
        raise PermissionError("could not clear capabilities")


def _child(rpc: socket.socket, req: dict, workdir: str, uid: int | None, ipc: bool) -> None:
    """In the forked child: own session, default signals, private directory, output to a capped file, limits,
    own IPC namespace, the slot's uid (when the zygote is root), then serve. Nothing of the learner's runs
    before every one of these steps has held; a step that fails ends the child (the stage fails)."""
    try:
        os.setsid()
        _default_signals()
        os.makedirs(workdir, mode=0o700, exist_ok=True)
        if uid is not None:
            os.chown(workdir, uid, uid)
        os.chdir(workdir)
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        fd = os.open(os.path.join(workdir, ".output"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        limits = req.get("limits", {})
        _apply_limits(limits)  # before the uid changes: hard limits the learner's uid can never raise again
        if ipc and not _own_ipc_namespace():
            raise PermissionError("no IPC namespace of its own")
        _drop_privileges(uid)
        _set_dumpable(True)  # (changing uid reset it) the child's /proc files are its own again
        import types

        # the worker's own module is no longer importable by name; learner code starts from scratch
        _KEEP.append(sys.modules.get("__main__"))
        sys.modules["__main__"] = types.ModuleType("__main__")
        serve(rpc)
    finally:
        _os_exit(0)


_KEEP: list = []


def _processes(pid_namespace: bool, uid: int | None, me: int) -> list[int]:
    """Processes the learner may have left behind: everything else in the sandbox's PID namespace; without
    one, every descendant of the zygote (a child subreaper: double-forked daemons are re-parented to it, not
    lost) and, with a dedicated ``uid`` (the children's), every process of that uid."""
    found = []
    parents = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me or (pid_namespace and int(name) == 1):
            continue
        pid = int(name)
        if pid_namespace:
            found.append(pid)
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                parents[pid] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            if uid is not None and os.stat(f"/proc/{pid}").st_uid == uid:
                found.append(pid)
        except (OSError, ValueError, IndexError):
            pass
    if not pid_namespace:
        mine = {me}
        grew = True
        while grew:
            grew = False
            for pid, ppid in parents.items():
                if ppid in mine and pid not in mine:
                    mine.add(pid)
                    grew = True
        found = sorted(set(found) | (mine - {me}))
    return found


def _alive(pid: int) -> bool:
    """True unless the process is gone or a zombie (dead, waiting to be collected)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def _kill_all(pids_of, patience: float = 10.0) -> None:
    """SIGKILL the processes ``pids_of()`` lists until none is alive (a fork loop may race the first pass,
    and a killed process takes a moment to die). Zombies are left for the caller to collect."""
    deadline = _monotonic() + patience
    pause = 0.002
    while True:
        pids = [p for p in pids_of() if _alive(p)]
        if not pids or _monotonic() > deadline:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _reap() -> bool:
    """Collect exited processes (the zygote is PID 1 of its namespace: orphans become its children). True when
    no child is left at all."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def _memory_mb(pids: list[int], base_kb: int) -> float:
    """Private memory the listed processes hold beyond what each inherited from the zygote (statm:
    resident minus file-backed and shared pages)."""
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as fh:
                fields = fh.read().split()
            anon_kb = (int(fields[1]) - int(fields[2])) * page_kb
        except (OSError, ValueError, IndexError):
            continue
        total += max(0, anon_kb - base_kb)
    return total / 1024


def _wipe(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _runtime_dirs() -> tuple:
    """Where the runtime (the interpreter, torch, numpy) lives: kept when the sandbox's /tmp is emptied, for a
    runtime that lies under /tmp and is mounted there read-only."""
    dirs = {"/usr/", "/lib/", "/lib64/", "/lib32/", "/bin/", "/sbin/", "/opt/", "/etc/"}
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))):
        dirs.add(os.path.realpath(p).rstrip("/") + "/")
        dirs.add(p.rstrip("/") + "/")
    for name in ("torch", "numpy"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            top = os.path.dirname(os.path.dirname(path))
            dirs.add(top.rstrip("/") + "/")
            dirs.add(os.path.realpath(top).rstrip("/") + "/")
    return tuple(sorted(dirs))


def _wipe_contents(folder: str, keep: tuple = ()) -> None:
    """Empty ``folder`` (the sandbox's /tmp): nothing one child writes is seen by the next. Entries that lead
    to a path in ``keep`` (the runtime, when it lies under /tmp and is mounted there read-only) stay."""
    import shutil

    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for name in entries:
        path = os.path.join(folder, name)
        if any(k.startswith(path.rstrip("/") + "/") for k in keep):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def warm_up() -> None:
    """Touch the kernels grading will use, so each forked child starts hot."""
    import torch

    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False  # graded values must not depend on TF32
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    x = torch.randn(2, 4, 8, requires_grad=True)
    lin = torch.nn.Linear(8, 8)
    w = (lin(x) @ x.transpose(-2, -1) / 8 ** 0.5).masked_fill(~torch.tril(torch.ones(4, 4, dtype=torch.bool)), float("-inf"))
    (torch.softmax(w, -1) @ x).sum().backward()
    y = torch.nn.Linear(8, 8)(torch.randn(2, 4, 8)).softmax(-1)
    torch.sum(torch.mul(y, torch.ones_like(y))).backward()  # the form gradient requests take
    torch.tril(torch.ones(4, 4)).cumsum(0)
    torch.nn.functional.dropout(x, 0.1)
    capture_torch()
    mark_entry_points()
    _make_tracer()
    executor = Executor()
    executor.encode(torch.ones(2, dtype=torch.float16), Blob())
    _warm_requests()


_WARM_SOURCE = """
import torch
from torch import nn


def f(x):
    return torch.softmax(x @ x.transpose(-2, -1) / 2.0, dim=-1) @ x


class M(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.W_query = nn.Linear(d, d, bias=False)
        self.register_buffer("mask", torch.ones(4, 4).tril())

    def forward(self, x):
        t = x.shape[-2]
        w = (x @ x.transpose(-2, -1)).masked_fill(self.mask[:t, :t] == 0, float("-inf"))
        return torch.softmax(w, dim=-1) @ self.W_query(x)
"""


def _warm_requests() -> None:
    """Serve a short session of the requests grading makes (load, a recorded call, a module built, cast and
    loaded, a call with gradients, its state) over a socket pair, in the zygote itself: the lazily filled
    caches these paths use (OpenSSL's HMAC method store, JSON, numpy and dispatcher look-ups) are then filled
    once, here, instead of in every forked child, where the first use wrote to shared pages."""
    import numpy as np

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        key = bytes(32)
        x = np.linspace(-1.0, 1.0, 2 * 4 * 3).reshape(2, 4, 3)
        w = np.eye(3)
        send_frame(ours, {"op": "load", "source": _WARM_SOURCE, "filename": "/warm.py", "key": key.hex(), "id": 1})
        blob = Blob()
        send_frame(ours, {"op": "call", "name": "f", "id": 2, "record": True, "return_inputs": True,
                          "args": [encode_array(x, "float32", "cpu", blob)], "kwargs": {}}, blob.bytes())
        blob = Blob()
        send_frame(ours, {"op": "new", "name": "M", "id": 3, "seed": 123, "module_dtype": "float64",
                          "args": [3], "kwargs": {},
                          "weights": {"W_query.weight": encode_array(w, "float64", "cpu", blob)}}, blob.bytes())
        blob = Blob()
        send_frame(ours, {"op": "method", "handle": 1, "method": "__call__", "id": 4, "record": True,
                          "args": [encode_array(x, "float64", "cpu", blob)], "kwargs": {},
                          "grad": {"upstream": encode_array(np.ones((2, 4, 3)), "float64", "cpu", blob)}},
                   blob.bytes())
        send_frame(ours, {"op": "state", "handle": 1, "id": 5})
        send_frame(ours, {"op": "bye"})
        serve(theirs)
        for _ in range(5):
            recv_frame(ours, key=key, json_limit=REPLY_JSON_LIMIT)
    finally:
        ours.close()
        theirs.close()
        sys.modules.pop("student_stage", None)


def _prctl(option: int, value: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _set_dumpable(flag: bool) -> None:
    """PR_SET_DUMPABLE: a non-dumpable zygote cannot be ptraced and its /proc files (memory, fds) are closed
    to the children, which run under the same uid."""
    _prctl(4, int(flag))


OUTPUT_TAIL = 2000  # bytes of a child's output shown to the learner


def read_tail(directory: str, name: str, limit: int = OUTPUT_TAIL) -> bytes:
    """The last ``limit`` bytes of ``directory/name``, a file in a child's area (which learner code controls):
    opened without following a link and without blocking (a FIFO), read only when it is a regular file, and
    never more than ``limit`` bytes (a link to /dev/zero, a sparse giant). Anything else reads as nothing."""
    import stat

    try:
        fd = os.open(os.path.join(directory, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b""
        start = max(0, info.st_size - limit)
        chunks, left = [], limit
        while left > 0:
            chunk = os.pread(fd, left, start + limit - left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _probe_ipc() -> bool:
    """Whether a forked child can have a SysV IPC namespace of its own (asked once, by a throwaway fork)."""
    pid = os.fork()
    if pid == 0:
        _os_exit(0 if _own_ipc_namespace() else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def zygote(control: socket.socket, pid_namespace: bool, base_tmp: str, uid: int | None = None) -> None:
    """Serve fork requests from the judge: a fresh child for every stage of every submission.

    The control socket is SOCK_SEQPACKET, so each JSON message is one packet; a fork request carries the
    child's RPC socket as an SCM_RIGHTS file descriptor. While a child runs, the zygote watches the memory
    of everything the child started (a whole-sandbox budget that per-process rlimits cannot give) and kills
    the lot when it is exceeded. After each child, every process the child left behind is killed and the
    sandbox's /tmp is emptied. ``uid``: the unprivileged uid each child becomes before learner code runs (the
    zygote itself is then root, inside the sandbox when there is one).
    """
    import gc
    import select

    _ignore_signals()
    # no cyclic collection while torch is imported and warmed up: the collector would walk its hundreds of
    # thousands of new objects again and again (about 0.15 CPU s of each worker's start); one collection below,
    # then the heap is frozen and the collector switched back on for the children
    gc.disable()
    warm_up()
    runtime = _runtime_dirs()
    _set_dumpable(False)
    if not pid_namespace:
        _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans of the children become ours, so they can be found
    import resource  # noqa: F401 - loaded here, not in each child's _apply_limits: a child maps no new code

    _libc()
    ipc = _probe_ipc()
    gc.collect()
    gc.freeze()  # the warm heap is never traversed by a child's collections: fewer copy-on-write faults
    gc.enable()
    me = os.getpid()
    base_kb = _status_kb("RssAnon")
    hello: Ready = {"op": "ready", "pid": me, "ipc": ipc, "uid": uid, "zygote_uid": os.getuid(),
                    "pid_namespace": pid_namespace}
    control.send(dumps(hello).encode())
    counter = 0
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(control, 1 << 16, 1)
        except OSError:
            return
        if not msg:
            return
        try:
            req = loads(msg)
        except ValueError:
            req = {}
        if req.get("op") == "quit":
            return
        if req.get("op") != "fork" or not fds:
            for fd in fds:
                os.close(fd)
            continue
        counter += 1
        workdir = os.path.join(base_tmp, f"c{counter}")
        rpc = socket.socket(fileno=fds[0])
        limits = req.get("limits", {}) or {}
        budget_mb = float(limits.get("memory_mb") or 0) * 1.25 + 64
        pid = os.fork()
        if pid == 0:
            control.close()
            _child(rpc, req, workdir, uid, ipc)
        rpc.close()
        pidfd = os.pidfd_open(pid)

        def tree():
            return _processes(pid_namespace, uid, me)

        killed = why = None
        while True:
            ready, _, _ = select.select([pidfd, control], [], [], 0.1 if pid_namespace else 0.25)
            if pidfd in ready:
                break
            if control in ready:
                try:
                    kmsg = control.recv(1 << 16)
                except OSError:
                    kmsg = b""
                if not kmsg or b'"kill"' in kmsg:
                    killed = True
                    _kill_all(lambda child=pid: [p for p in tree() + [child] if p != me])
                    if not kmsg:
                        return
                continue
            if budget_mb > 64 and _memory_mb(tree(), base_kb) > budget_mb:
                killed, why = True, "memory"
                _kill_all(lambda child=pid: [p for p in tree() + [child] if p != me])
        _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        try:
            os.killpg(pid, signal.SIGKILL)  # the child's own session: helpers it started
        except OSError:
            pass
        _kill_all(tree)  # whatever the child left behind, detached or not
        _reap()
        tail = read_tail(workdir, ".output").decode("utf-8", "replace")
        _wipe(workdir)
        _wipe_contents(base_tmp, keep=runtime)
        info: Exited = {"op": "exited", "killed": bool(killed), "output_tail": tail}
        if why:
            info["reason"] = why
        if os.WIFSIGNALED(status):
            info["signal"] = os.WTERMSIG(status)
        else:
            info["code"] = os.WEXITSTATUS(status)
        try:
            control.send(dumps(info).encode())
        except OSError:  # the judge is gone (SIGPIPE is ignored here: the send fails instead)
            return


def main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--pid-namespace", action="store_true")
    parser.add_argument("--uid", type=int, default=None,
                        help="the unprivileged uid every child becomes before learner code runs (zygote: root)")
    parser.add_argument("--tmp", default="/tmp")
    opts = parser.parse_args(argv)
    control = socket.socket(fileno=opts.control_fd)
    zygote(control, opts.pid_namespace, opts.tmp, opts.uid)
    _os_exit(0)  # at once: no interpreter teardown (torch's takes seconds), nothing left to flush


if __name__ == "__main__":
    main(sys.argv[1:])
