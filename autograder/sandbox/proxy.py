"""The proxy graders talk to: calls into one learner file, answered by a fresh child of a :class:`Sandbox`.

A request is encoded here (the judge's tensors as array records), sent to the child, and its reply checked field
by field and decoded (:class:`~autograder.sandbox.values.Out` for arrays) before anything reads it; a learner's failure
becomes one of the exceptions of :mod:`autograder.sandbox.errors`. A recorded call's graph is judged here too
(:func:`recorded`, through :mod:`autograder.sandbox.evidence`). :class:`LocalStudent` answers the same requests
in-process (notebooks). The message types are those of :mod:`autograder.runtime.wire`.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Generator, Iterable, Sequence, cast

from ..runtime import fused, wire
from ..runtime.executor import Executor
from .errors import (
    MissingName,
    ProtocolViolation,
    SandboxError,
    StudentCodeError,
    StudentCrashed,
    StudentFailure,
    StudentTimeout,
    SubmissionLoadError,
    learner_error,
    load_failure,
)
from .values import Call, Opaque, Out

if TYPE_CHECKING:
    from .host import Sandbox


class Answer(wire.Reply, total=False):
    """A reply as graders get it (``full=True``): its values decoded (:class:`Out` for arrays), and the judge's
    own additions, never the child's."""

    record: dict  # the judge's verdict on a recorded call's graph (see :func:`recorded`)
    graph_blob: bytes  # the graph's constants, until the judge has read them


def _decode_reply_value(value, blob: bytes, depth: int = 0, left: list | None = None):
    """Records from the child → values. Everything is checked: the child runs untrusted code. ``left``: the bytes
    of ``blob`` the arrays decoded so far may still claim (one list shared by the decodes of one reply): each array
    is copied, and records that point at the same bytes would multiply the blob in the judge's memory; the worker
    writes every array once, so an honest reply never claims more than its blob."""
    if left is None:
        left = [len(blob)]
    kind = type(value)
    if (kind is str or kind is int or kind is float or kind is bool or value is None) and depth <= 12:
        return value  # the common case first (names, shapes, flags in describe() replies)
    import torch

    if depth > 12:
        raise ProtocolViolation("reply nested too deeply")
    if isinstance(value, dict):
        if "__nd__" in value:
            array = wire.decode_array(value, blob)
            left[0] -= array.nbytes
            if left[0] < 0:
                raise ProtocolViolation("the reply's arrays claim more bytes than it holds")
            t = torch.from_numpy(array.copy())
            if value["dtype"] in ("bfloat16", "float16"):
                t = t.to(getattr(torch, value["dtype"]))
            device = value.get("device", "cpu")
            return Out(t, value["dtype"], device[:40])
        if "__tuple__" in value:
            items = value["__tuple__"]
            if not isinstance(items, list):
                raise ProtocolViolation("bad tuple record")
            return tuple(_decode_reply_value(v, blob, depth + 1, left) for v in items)
        if "__repr__" in value:
            return Opaque(str(value["__repr__"])[:200])
        if "__dtype__" in value:
            dtype = getattr(torch, str(value["__dtype__"]), None)
            if not isinstance(dtype, torch.dtype):
                raise ProtocolViolation("bad dtype record")
            return dtype
        return {str(k): _decode_reply_value(v, blob, depth + 1, left) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_reply_value(v, blob, depth + 1, left) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ProtocolViolation(f"unexpected value of type {type(value).__name__}")


def _check_reply(reply: dict) -> wire.Reply:
    """The shape of a reply, field by field; anything unexpected is a protocol violation."""
    if not isinstance(reply.get("ok"), bool):
        raise ProtocolViolation("reply without ok")
    if not reply["ok"]:
        err = reply.get("error")
        if not isinstance(err, dict):
            raise ProtocolViolation("error reply without error")
        where = err.get("where")
        if where is not None and not (isinstance(where, dict) and isinstance(where.get("line"), (int, type(None)))):
            raise ProtocolViolation("bad error location")
        bases = err.get("bases")
        reply["error"] = {
            "type": str(err.get("type", "Error"))[:100],
            "bases": [str(b)[:100] for b in bases[:16]] if isinstance(bases, list) else [],
            "message": str(err.get("message", ""))[:2000],
            "where": None
            if where is None
            else {
                "line": where.get("line"),
                "function": str(where.get("function", ""))[:100],
                "code": str(where.get("code", ""))[:200],
            },
        }
        return cast(wire.Reply, reply)
    reply.pop("record", None)  # the record is the judge's to make (autograder.sandbox.evidence), never the child's
    changed = reply.get("inputs_changed")
    if changed is not None and not (isinstance(changed, list) and all(isinstance(c, bool) for c in changed)):
        raise ProtocolViolation("bad inputs_changed")
    names = reply.get("names")
    if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise ProtocolViolation("bad names")
    grads = reply.get("grads")
    if grads is not None and not isinstance(grads, dict):
        raise ProtocolViolation("bad grads")
    return cast(wire.Reply, reply)  # its fields checked above (values are checked as they are decoded)


def encode_args(value, blob: wire.Blob, *, device: str, dtype, noncontig: bool, requires_grad: bool):
    """Judge values → records. Float tensors are sent as float32 when that is their target dtype (``dtype``, or
    their own), else as float64, and cast by the child to the target: rounding float64 to float32 here or
    there gives the same values, and half the bytes travel."""
    import torch

    if isinstance(value, torch.Tensor):
        # the judge's own tensors are nearly always CPU, contiguous, without grad and of the dtype they travel
        # as: each conversion below is then skipped, not called to return its input (a few µs per argument)
        t = value if not value.requires_grad and value.device.type == "cpu" else value.detach().cpu()
        target = t.dtype
        if t.is_floating_point():
            target = dtype or t.dtype
            wire_dtype = torch.float32 if target == torch.float32 else torch.float64
            if t.dtype is not wire_dtype:
                t = t.to(wire_dtype)
        rec = wire.encode_array(
            (t if t.is_contiguous() else t.contiguous()).numpy(), str(target).replace("torch.", ""), device, blob
        )
        if noncontig:
            rec["noncontig"] = True
        if requires_grad and t.is_floating_point():
            rec["requires_grad"] = True
        return rec
    if isinstance(value, ModuleHandle):  # an object the learner's process built earlier (a cache passed to forward)
        return {"__handle__": value.handle}
    if isinstance(value, tuple):
        return {
            "__tuple__": [
                encode_args(v, blob, device=device, dtype=dtype, noncontig=noncontig, requires_grad=requires_grad)
                for v in value
            ]
        }
    if isinstance(value, list):
        return [
            encode_args(v, blob, device=device, dtype=dtype, noncontig=noncontig, requires_grad=requires_grad)
            for v in value
        ]
    if isinstance(value, dict):
        return {
            k: encode_args(v, blob, device=device, dtype=dtype, noncontig=noncontig, requires_grad=requires_grad)
            for k, v in value.items()
        }
    if isinstance(value, torch.dtype):
        return {"__dtype__": str(value).replace("torch.", "")}
    return value


# ───────────────────────────── the proxy graders talk to ─────────────────────────────


def call_text(name: str, args, kwargs, *, cast=None, to="cpu", noncontig=False) -> str:
    """A call as the learner's function received it: ``name(<tensor (2, 5, 3) float32>, dim=0)``."""
    import torch

    def one(value) -> str:
        if isinstance(value, torch.Tensor):
            dtype = cast if cast is not None and value.is_floating_point() else value.dtype
            where = f" on {to}" if str(to) != "cpu" else ""
            return (
                f"<tensor {tuple(value.shape)} {str(dtype).removeprefix('torch.')}{where}"
                f"{', non-contiguous' if noncontig and value.dim() > 1 else ''}>"
            )
        text = repr(value)
        return text if len(text) <= 40 else f"<{type(value).__name__}>"

    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def _name_the_call(exc: StudentCodeError, call: str) -> None:
    """The learner's error, said with the call that raised it (as the learner's code received it). A missing name
    or a file that failed to load is not the call's doing: it is said as it is."""
    if isinstance(exc, (MissingName, SubmissionLoadError)):
        return
    exc.call = call
    exc.args = (f"{call}: {exc}",)


@dataclass
class StudentProxy:
    """Calls into one learner file, in its own child process. Every method returns plain values."""

    sandbox: Sandbox | None  # None: a LocalStudent, which answers in-process
    source: str
    filename: str
    by_hand: bool = False  # the stage must be written by hand: fused attention is switched off in the child
    restarts: int = 0
    sock: socket.socket | None = None
    load_error: wire.ErrorInfo | None = None
    names: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    last_exit: wire.Exited | dict | None = None
    key: bytes | None = None
    memo: dict = field(default_factory=dict)  # what this stage's checks share (one output examined by two checks)
    timed_out: str | None = None  # the timeout's message, once a call ran out of time: the stage is over
    waited: float = 0.0  # wall-clock seconds this stage's calls have taken (its children's, restarts included)

    # -- connection ---------------------------------------------------------------------------------------
    def _ensure(self) -> None:
        if self.sock is not None:
            return
        if self.timed_out is not None:
            # a hang costs one timeout per stage: the next check would most likely hang again
            raise StudentTimeout(
                "skipped: an earlier check of this stage did not finish in time ("
                + self.timed_out
                + "); the remaining checks were not run"
            )
        if self.restarts > self._host().limits.max_restarts:
            raise StudentCrashed(
                "skipped: this stage's code already crashed or hung "
                f"{self.restarts} times; the remaining checks were not run"
            )
        self.sock = self._host().fork_child()
        self.key = secrets.token_bytes(32)
        # the key travels in the load request, read by the worker before the learner's module exists
        reply, _ = self._roundtrip(
            {
                "op": "load",
                "source": self.source,
                "filename": self.filename,
                "key": self.key.hex(),
                "by_hand": self.by_hand,
            },
            b"",
        )
        if not reply.get("ok"):
            self.load_error = reply.get("error")
        else:
            self.names = reply.get("names") or []

    def _host(self) -> Sandbox:
        if self.sandbox is None:
            raise SandboxError("this proxy has no sandbox")
        return self.sandbox

    def _roundtrip(self, req: wire.Request, blob: bytes) -> tuple[wire.Reply, bytes]:
        return next(self._exchange([req], blob))

    def _exchange(self, reqs: list, blob: bytes) -> Generator[tuple[wire.Reply, bytes], None, None]:
        """The replies to ``reqs``, in order, as they are read: one request travels as it is, several in one batch
        frame (:class:`~autograder.runtime.wire.BatchRequest`). Each reply has the call timeout to arrive, counted
        from when it is asked for, so a call that hangs costs one timeout, and no more than what is left of the
        stage's budget, so calls that each end just before their timeout cost one budget. After a reply that is
        not ok no other comes: the caller stops there."""
        limits = self._host().limits
        timeout, budget = limits.call_timeout, limits.stage_budget
        sock = self.sock
        if sock is None:
            raise SandboxError("no child to call: _ensure() starts one")
        for req in reqs:
            req["id"] = secrets.randbits(62)
        started = time.monotonic()
        pending = len(reqs)  # replies the child still owes
        allowed = timeout
        try:
            sock.settimeout(timeout)
            wire.send_frame(sock, reqs[0] if len(reqs) == 1 else {"op": "batch", "requests": reqs}, blob)
            for i, req in enumerate(reqs):
                allowed = min(timeout, budget - self.waited)
                try:
                    reply, out = wire.recv_frame(
                        sock,
                        deadline=started + allowed,
                        json_limit=wire.REPLY_JSON_LIMIT,
                        key=self.key,
                        reply=i == len(reqs) - 1,  # the last reply: nothing may follow it
                    )
                finally:
                    self.waited += time.monotonic() - started
                pending = 0 if not reply.get("ok") else pending - 1  # after an error, none follows
                if reply.get("id") != req["id"]:
                    raise ProtocolViolation("the reply answers another request")
                yield _check_reply(reply), out
                started = time.monotonic()
        except socket.timeout:
            self._drop(kill=True)
            if allowed < timeout:
                self.timed_out = f"{budget:g} s for the stage's calls together"
                raise StudentTimeout(
                    f"this stage's calls into your code took more than {budget:g} s together (each call may take "
                    f"{timeout:g} s, the stage {budget:g} s): a slow loop, or waiting on purpose?"
                ) from None
            self.timed_out = f"{timeout:g} s"
            raise StudentTimeout(
                f"your code did not finish within {timeout:g} s (an endless loop, or a "
                "Python loop over a large tensor?)"
            ) from None
        except (ProtocolViolation, wire.ForgedFrame) as exc:
            self._drop(kill=True)
            raise StudentCrashed(
                "your code's process sent back something that is not a valid answer "
                f"({exc}): the grading channel is not for your code to write to"
            ) from None
        except (EOFError, OSError, ValueError, RecursionError, UnicodeDecodeError) as exc:
            info = self._drop(kill=True)
            raise StudentCrashed(_describe_exit(info, time.monotonic() - started, exc)) from None
        finally:
            if pending and self.sock is sock:
                # the judge stopped reading (its own error while handling an earlier reply): the replies still on
                # their way would answer the next requests, so this child ends, and the learner is not blamed
                self._drop(kill=True, learners=False)

    def _drop(self, kill: bool, learners: bool = True) -> wire.Exited | dict:
        """End the child (``learners``: for something its code did, which counts towards the stage's restarts)."""
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None
        self.restarts += learners
        info = self._host().end_child(kill=kill)
        self.last_exit = info
        return info

    def close(self) -> None:
        """End this stage's child (a later stage, or submission, gets a fresh one)."""
        if self.sock is not None:
            try:
                self.sock.settimeout(1.0)
                wire.send_frame(self.sock, {"op": "bye"})
            except OSError:
                pass
            self.sock.close()
            self.sock = None
            self.last_exit = self._host().end_child(kill=False)

    # -- requests -----------------------------------------------------------------------------------------
    def _ready(self) -> None:
        """A child that loaded the learner's file (started if need be); the load's error raised."""
        self._ensure()
        if self.load_error is not None:
            raise load_failure(self.load_error)

    def request(self, req: wire.Request, blob: bytes = b"") -> Answer:
        self._ready()
        return self._answer(*self._roundtrip(req, blob))

    def _answer(self, reply: wire.Reply, out: bytes) -> Answer:
        """A checked reply, decoded; the learner's error raised."""
        if not reply.get("ok"):
            raise learner_error(reply.get("error") or {})
        answer = cast(Answer, reply)  # decoded in place, below
        try:
            left = [len(out)]  # the value and the gradients share the reply's bytes
            answer["value"] = _decode_reply_value(reply.get("value"), out, left=left)
            grads = reply.get("grads")
            if grads:
                answer["grads"] = {str(k): _decode_reply_value(v, out, left=left) for k, v in grads.items()}
            if "graph" in reply:
                answer["graph_blob"] = out  # the graph's constants (read by autograder.sandbox.evidence)
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            self._drop(kill=True)
            raise StudentCrashed(
                f"your code's process sent back something that is not a valid answer ({exc})"
            ) from None
        return answer

    def call_all(self, calls: Iterable[Call]) -> Answers:
        """Make ``calls`` (see :class:`~autograder.sandbox.values.Call`) in one round trip to the child instead of
        one each: the same requests, values and errors as making them one after the other. The calls after one that
        fails are not made; reading its answer, or a later one, raises its error (as that call would have raised)."""
        calls = list(calls)
        answers: list = []
        try:
            for start in range(0, len(calls), wire.BATCH_LIMIT):
                self._ready()
                chunk = calls[start : start + wire.BATCH_LIMIT]
                blob = wire.Blob()
                reqs = [_call_request(self, c, blob) for c in chunk]
                replies = self._exchange(reqs, blob.bytes())
                with contextlib.closing(replies):  # an error of the judge's below ends the exchange at once
                    for c, (reply, out) in zip(chunk, replies):
                        try:
                            answer = self._answer(reply, out)
                        except StudentCodeError as exc:
                            if isinstance(c.target, str):  # a module's error says where it was raised
                                _name_the_call(
                                    exc,
                                    call_text(c.target, c.args, c.kwargs, cast=c.cast, to=c.to, noncontig=c.noncontig),
                                )
                            raise
                        _mark_asked(answer.get("value"), asked_dtype(c.args, c.kwargs, c.cast))
                        answers.append(answer if c.full else answer["value"])
        except StudentFailure as exc:
            return Answers(answers, exc)
        return Answers(answers, None)

    def loaded(self) -> bool:
        """True when the file imported cleanly (raises nothing: the error is kept in ``load_error``)."""
        try:
            self._ensure()
        except StudentFailure:
            return False
        return self.load_error is None

    def _pack(
        self,
        req: wire.CallRequest | wire.NewRequest | wire.MethodRequest,
        args,
        kwargs,
        *,
        to="cpu",
        cast=None,
        noncontig=False,
        grad_inputs=False,
        upstream=None,
        seed=None,
        record=False,
        return_inputs=False,
        blob: wire.Blob | None = None,
    ) -> wire.Blob:
        """Fill in the call fields of ``req`` (only those that are set travel); the blob (``blob``, or a new one)
        holds the arrays."""
        blob = wire.Blob() if blob is None else blob
        req["args"] = encode_args(
            list(args), blob, device=to, dtype=cast, noncontig=noncontig, requires_grad=grad_inputs
        )
        req["kwargs"] = encode_args(dict(kwargs), blob, device=to, dtype=cast, noncontig=False, requires_grad=False)
        if upstream is not None:
            req["grad"] = {
                "upstream": encode_args(upstream, blob, device=to, dtype=cast, noncontig=False, requires_grad=False)
            }
        if seed is not None:
            req["seed"] = seed
        if record:
            req["record"] = True
        if return_inputs:
            req["return_inputs"] = True
        return blob

    def invoke(
        self,
        target: Callable[[], wire.CallRequest | wire.MethodRequest],
        args,
        kwargs,
        *,
        to,
        cast,
        noncontig,
        record,
        return_inputs,
        upstream,
        grad_inputs,
        seed,
        full,
    ):
        """A call of a function or a module (``target()`` makes its request's first fields); see :meth:`call`."""
        req = target()
        blob = self._pack(
            req,
            args,
            kwargs,
            to=to,
            cast=cast,
            noncontig=noncontig,
            grad_inputs=grad_inputs,
            upstream=upstream,
            seed=seed,
            record=bool(record),
            return_inputs=return_inputs,
        )
        reply = self.request(req, blob.bytes())
        _mark_asked(reply.get("value"), asked_dtype(args, kwargs, cast))
        if record:

            def again(fresh_args, fresh_kwargs):
                req = target()
                blob = self._pack(req, fresh_args, fresh_kwargs, to=to, cast=cast, noncontig=noncontig, seed=seed)
                return self.request(req, blob.bytes())["value"]

            reply["record"] = recorded(reply, args, kwargs, cast, again, record)
        return reply if full else reply["value"]

    def call(
        self,
        name: str,
        *args,
        to="cpu",
        cast=None,
        noncontig=False,
        record=False,
        return_inputs=False,
        upstream=None,
        grad_inputs=False,
        seed=None,
        full=False,
        **kwargs,
    ):
        """Call ``name(*args, **kwargs)`` in the learner's file. Float tensors are cast to ``cast`` and put
        on device ``to`` (non-contiguous views when ``noncontig``); other keyword arguments (``device=``,
        ``dtype=``, ``dim=``...) go to the learner's function. ``full=True`` returns the whole reply
        (``value``, ``record``, ``inputs_changed``, ``grads``); otherwise just the value."""
        try:
            return self.invoke(
                lambda: {"op": "call", "name": name},
                args,
                kwargs,
                to=to,
                cast=cast,
                noncontig=noncontig,
                record=record,
                return_inputs=return_inputs,
                upstream=upstream,
                grad_inputs=grad_inputs,
                seed=seed,
                full=full,
            )
        except StudentCodeError as exc:
            _name_the_call(exc, call_text(name, args, kwargs, cast=cast, to=to, noncontig=noncontig))
            raise

    def new(
        self, cls: str, *args, seed=None, training=None, module_dtype=None, weights=None, **kwargs
    ) -> "ModuleHandle":
        """Construct ``cls(*args, **kwargs)`` in the learner's file (after ``torch.manual_seed(seed)``).

        ``training``, ``module_dtype`` and ``weights`` save the round trips a grader would make next, in one
        request: ``.train(training)`` and ``.to(dtype=module_dtype)`` (their errors are raised here, as those
        calls would raise them), then the state
        read and the weights loaded as :func:`autograder.graders.attention.load_weights` does; that function
        still checks names and shapes and raises a load error, so verdicts and messages do not change."""
        req: wire.NewRequest = {"op": "new", "name": cls}
        blob = self._pack(req, args, kwargs, seed=seed)
        if training is not None:
            req["training"] = bool(training)
        if module_dtype is not None:
            req["module_dtype"] = str(module_dtype).replace("torch.", "")
        if weights is not None:
            req["weights"] = encode_args(
                dict(weights), blob, device="cpu", dtype=None, noncontig=False, requires_grad=False
            )
        try:
            reply = self.request(req, blob.bytes())
        except StudentCodeError as exc:  # the constructor's own error, with the arguments it was given (which
            # n_heads it refused, say); an error of the .to() this request also made is raised as that call raises it
            where = exc.error.get("where") or {}
            if where.get("function") == "__init__":
                _name_the_call(exc, call_text(cls, args, kwargs))
            raise
        info = reply["value"]
        if not isinstance(info, dict) or "handle" not in info:
            raise StudentCodeError({"type": "TypeError", "message": f"{cls}(...) did not construct an object"})
        handle = ModuleHandle(self, info["handle"], info)
        prepared = reply.get("prepared")
        if weights is not None and isinstance(prepared, dict):
            # the worker loads weights only when they fit exactly; "loaded" is believed only when they do fit
            # the state it reports (the same rule, here): otherwise the judge loads them itself
            state = prepared.get("state")
            if isinstance(state, dict):
                shapes = dict(state)
            else:
                shapes = {n: p.get("shape") for n, p in (info.get("params") or {}).items() if isinstance(p, dict)}
            fits = wire.weights_fit(shapes, weights, info.get("params") or {})
            prepared["loaded"] = prepared.get("loaded") is True and fits
            if not fits:
                prepared.pop("load_error", None)  # no load was asked for: an error of one is not the learner's
            handle.prepared, handle.prepared_for = prepared, weights
        return handle

    def has(self, *names: str) -> dict:
        return self.request({"op": "has", "names": list(names)})["value"]


class LocalStudent(StudentProxy):
    """In-process learner code (a notebook kernel, where the code already runs): same interface and verdicts,
    no isolation. Requests still go through the executor's encode/decode path, so values are identical."""

    def __init__(self, namespace: dict, filename: str = "<notebook>"):
        super().__init__(sandbox=None, source="", filename=filename)
        self.executor = Executor()
        self.executor.use_namespace(namespace, filename)

    def _ensure(self) -> None:
        return None

    def _roundtrip(self, req: wire.Request, blob: bytes) -> tuple[wire.Reply, bytes]:
        return self.executor.handle(req, blob)

    def _exchange(self, reqs: list, blob: bytes) -> Generator[tuple[wire.Reply, bytes], None, None]:
        for req in reqs:  # one at a time, each as this class (or a subclass, with its time limit) makes one
            yield self._roundtrip(req, blob)

    def _drop(self, kill: bool, learners: bool = True) -> wire.Exited | dict:
        return {}

    def close(self) -> None:
        return None


def _call_request(proxy: StudentProxy, call: Call, blob: wire.Blob) -> wire.CallRequest | wire.MethodRequest:
    """The request of one :class:`~autograder.sandbox.values.Call` of :meth:`StudentProxy.call_all`, its arrays
    added to ``blob``."""
    req: wire.CallRequest | wire.MethodRequest
    if isinstance(call.target, ModuleHandle):
        if call.target.proxy is not proxy:
            raise ValueError("Call(module, ...): the module belongs to another learner file")
        req = {"op": "method", "handle": call.target.handle, "method": "__call__"}
    elif isinstance(call.target, str):
        req = {"op": "call", "name": call.target}
    else:
        raise TypeError("Call(target, ...): the target is a function's name or a module")
    proxy._pack(
        req,
        call.args,
        call.kwargs,
        to=call.to,
        cast=call.cast,
        noncontig=call.noncontig,
        seed=call.seed,
        return_inputs=call.return_inputs,
        blob=blob,
    )
    return req


class Answers(Sequence):
    """The answers of :meth:`StudentProxy.call_all`, in the order of its calls. Reading an answer raises the
    error of the call that failed, when it failed at or before that one (the calls after it were never made)."""

    def __init__(self, values: list, error: StudentFailure | None):
        self.values, self.error = values, error

    def __len__(self) -> int:
        return len(self.values) + (self.error is not None)

    def __getitem__(self, i):  # type: ignore[override]  # an int: graders read answers one at a time
        if not isinstance(i, int):
            raise TypeError("answers are read one at a time")
        if 0 <= i < len(self.values):
            return self.values[i]
        if self.error is not None and i >= len(self.values):
            raise self.error
        raise IndexError(i)

    def __iter__(self):
        yield from self.values
        if self.error is not None:
            raise self.error


@dataclass
class ModuleHandle:
    proxy: StudentProxy
    handle: int
    info: dict
    prepared: wire.Prepared | None = None  # what ``new(..., weights=w)`` did with ``w`` (state shapes, load error)
    prepared_for: dict | None = None  # that ``w``
    held: dict | None = None  # the weights the module holds once loaded (autograder.graders.attention.load_weights)

    def __call__(
        self,
        *args,
        to="cpu",
        cast=None,
        noncontig=False,
        record=False,
        return_inputs=False,
        upstream=None,
        seed=None,
        full=False,
        **kwargs,
    ):
        """Call the module (its ``forward``): as :meth:`StudentProxy.call`."""
        return self.proxy.invoke(
            lambda: {"op": "method", "handle": self.handle, "method": "__call__"},
            args,
            kwargs,
            to=to,
            cast=cast,
            noncontig=noncontig,
            record=record,
            return_inputs=return_inputs,
            upstream=upstream,
            grad_inputs=False,
            seed=seed,
            full=full,
        )

    def method(self, name: str, *args, cast=None, full=False, **kwargs):
        """Call the object's method ``name(*args, **kwargs)`` (``append``, ``reset``, ``__len__`` of an object
        that is not a module); like ``__call__`` otherwise, without a record."""
        req: wire.MethodRequest = {"op": "method", "handle": self.handle, "method": name}
        blob = self.proxy._pack(req, args, kwargs, cast=cast)
        reply = self.proxy.request(req, blob.bytes())
        _mark_asked(reply.get("value"), asked_dtype(args, kwargs, cast))
        return reply if full else reply["value"]

    def state(self) -> dict:
        return self.proxy.request({"op": "state", "handle": self.handle})["value"]

    def load_state(self, state: dict) -> None:
        blob = wire.Blob()
        enc = {
            k: encode_args(v, blob, device="cpu", dtype=None, noncontig=False, requires_grad=False)
            for k, v in state.items()
        }
        self.proxy.request({"op": "load_state", "handle": self.handle, "state": enc}, blob.bytes())

    def to(self, device: str | None = None, dtype=None) -> None:
        self.proxy.request(
            {
                "op": "to",
                "handle": self.handle,
                "device": device,
                "dtype": str(dtype).replace("torch.", "") if dtype is not None else None,
            }
        )

    def train(self, mode: bool) -> None:
        self.proxy.request({"op": "train", "handle": self.handle, "mode": bool(mode)})

    def describe(self) -> dict:
        return self.proxy.request({"op": "describe", "handle": self.handle})["value"]


def asked_dtype(args, kwargs, cast) -> str | None:
    """The dtype a call asks for: ``cast``, else its ``dtype=`` argument, else its first floating-point tensor's
    (None when it names none). Values that come back are judged at this dtype's tolerance, whatever dtype they
    come back in."""
    import torch

    from .evidence import flatten_tensors

    dtype = cast if cast is not None else kwargs.get("dtype")
    if not isinstance(dtype, torch.dtype):
        dtype = next((x.dtype for x in flatten_tensors([list(args), dict(kwargs)]) if x.is_floating_point()), None)
    return str(dtype).replace("torch.", "") if dtype is not None else None


def _mark_asked(value, asked: str | None, depth: int = 0) -> None:
    if isinstance(value, Out):
        value.asked = asked
    elif depth < 12 and isinstance(value, (tuple, list)):
        for v in value:
            _mark_asked(v, asked, depth + 1)
    elif depth < 12 and isinstance(value, dict):
        for v in value.values():
            _mark_asked(v, asked, depth + 1)


def recorded(reply: Answer, args, kwargs, cast, again, record) -> dict:
    """The record of a call made with ``record=``, decided here from the graph the child traced
    (:func:`autograder.sandbox.evidence.verify`): ``{"n_ops": int | None, "forbidden": [...]}``. ``args``/``kwargs``: the
    judge's own arguments of that call, sent cast to ``cast``; ``record``: True, or the grader's reference
    function, called with the call's positional arguments (fresh ones, which the child never sees);
    ``again(fresh_args, fresh_kwargs)``: the same call, untraced, with other tensors of the same shapes, returning
    its decoded value (used only without a reference)."""
    import torch

    from . import evidence

    def as_sent(x):
        x = x.detach().cpu()
        return x.to(cast) if cast is not None and x.is_floating_point() else x

    inputs = [as_sent(x) for x in evidence.flatten_tensors([list(args), dict(kwargs)])]
    floats = [x.dtype for x in inputs if x.is_floating_point()]
    dtype = cast or (floats[0] if floats else torch.float32)

    def fresh_call(fresh):
        it = iter(fresh)
        fresh_args, fresh_kwargs = _replace_tensors([list(args), dict(kwargs)], it)
        return again(fresh_args, fresh_kwargs)

    reference = record if callable(record) else None

    def reference_args(flat):
        return _replace_tensors([list(args), dict(kwargs)], iter(flat))[0]

    # given objects the learner's process built (a cache), a second call would find them changed
    stateful = bool(evidence.flatten_tensors([list(args), dict(kwargs)], ModuleHandle))
    return evidence.verify(
        reply, reply.pop("graph_blob", b""), inputs, dtype, None if stateful else fresh_call, reference, reference_args
    )


def _replace_tensors(value, it, depth: int = 0):
    """``value`` with its tensors replaced, in order, by those ``it`` yields (see evidence.flatten_tensors)."""
    import torch

    if isinstance(value, torch.Tensor):
        return next(it)
    if depth < 6 and isinstance(value, (list, tuple)):
        return type(value)(_replace_tensors(v, it, depth + 1) for v in value)
    if depth < 6 and isinstance(value, dict):
        return {k: _replace_tensors(v, it, depth + 1) for k, v in value.items()}
    return value


def _describe_exit(info: wire.Exited | dict, elapsed: float, exc: BaseException) -> str:
    import signal as _signal

    if info.get("lost"):
        return "the grading worker was lost while running your code"
    if info.get("reason") == "memory":
        return "your code's process was killed: together with the processes it started it used more memory than allowed"
    if info.get("reason") == "files":
        return "your code's process was killed: it made more files, folders or links in /tmp than allowed"
    if isinstance(exc, EOFError) and info.get("killed") and info.get("signal") == 9:
        return "your code's process closed its connection to the grader (and was stopped)"
    if "signal" in info:
        sig = info["signal"]
        name = _signal.Signals(sig).name if sig in _signal.Signals._value2member_map_ else str(sig)
        why = {
            "SIGSEGV": "a segmentation fault",
            "SIGKILL": "it was killed (memory or time limit?)",
            "SIGXCPU": "it used up its CPU time",
            "SIGABRT": "it aborted",
        }.get(name, name)
        return f"your code's process died: {why}"
    if info.get("code") in (fused.EXIT_CODE, fused.MHA_EXIT_CODE):
        what = fused.MESSAGE if info["code"] == fused.EXIT_CODE else fused.MHA_MESSAGE
        return f"your code reached {what}: it must be written by hand (scores, mask, softmax, weights @ v)"
    if "code" in info:
        return f"your code ended its process (exit code {info['code']}): don't call sys.exit/os._exit in a stage"
    return f"your code's process stopped answering ({exc})"
