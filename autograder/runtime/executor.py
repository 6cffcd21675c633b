"""The executor: answers the judge's requests (load, call, new, method, state, ...) against one learner module,
with values as arrays and, for a recorded call, its traced graph. Runs in a sandbox child and, for notebooks,
in the learner's own kernel."""

from __future__ import annotations

# Bound as module globals before any learner code exists: a learner who replaces builtins.isinstance (or
# len, sorted, ...) later does not change what the worker's own code calls.
from builtins import (  # noqa: A004 - shadowing on purpose
    BaseException,
    Exception,
    KeyboardInterrupt,
    RuntimeError,
    SyntaxError,
    ValueError,
    bool,
    bytes,
    compile,
    dict,
    enumerate,
    exec,
    float,
    getattr,
    int,
    isinstance,
    len,
    list,
    sorted,
    str,
    tuple,
    type,
    zip,
)

import sys
from typing import Any, Callable, Union, cast

from .recorder import _holds_objects, _trace_inputs, _twin, capture_graph
from .torchrefs import capture_torch
from .wire import (
    ENCODE_BUDGET,
    Prepared,
    Blob,
    CallRequest,
    ErrorInfo,
    HandleRequest,
    HasRequest,
    LoadRequest,
    LoadStateRequest,
    MethodRequest,
    NewRequest,
    Reply,
    Request,
    ToRequest,
    TrainRequest,
    Where,
    decode_array,
    encode_array,
    weights_fit,
)


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
    def load_source(self, source: str, filename: str, by_hand: bool = False) -> Reply:
        import linecache
        import types

        if by_hand:
            from .fused import switch_off

            switch_off()
        self.filename = filename
        self.lines = source.splitlines()
        # the source, where inspect.getsource looks for it (the file is not on this filesystem): code that reads its
        # own source (torch.jit.script, inspect) works as it does when the file is imported
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        module = types.ModuleType("student_stage")
        module.__file__ = filename
        sys.modules["student_stage"] = module
        try:
            code = compile(source, filename, "exec")
            exec(code, module.__dict__)  # noqa: S102 - this is the point: we are the sandboxed side
        except SyntaxError as exc:
            self.load_error = {
                "type": "SyntaxError",
                "message": f"{exc.msg}",
                "where": {"line": exc.lineno, "function": "<module>", "code": (exc.text or "").strip()},
            }
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
        # the built-in exception classes it derives from: a learner's `class CacheFull(ValueError)` is a ValueError
        bases = [str(c.__name__)[:100] for c in type(exc).__mro__[1:16] if getattr(c, "__module__", None) == "builtins"]
        return {"type": type(exc).__name__[:100], "bases": bases, "message": message, "where": where}

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
        x = t.to(x, device=device, dtype=dtype)
        if rec.get("noncontig"):
            x = _scattered(t, x)
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
        if issubclass(type(value), (tuple, list)):
            # a NamedTuple is a tuple: its items read through the built-in type (never a subclass's own methods)
            kind = tuple if issubclass(type(value), tuple) else list
            size = min(kind.__len__(value), 64)
            items = [self.encode(kind.__getitem__(value, i), blob, depth + 1, budget) for i in range(size)]
            return {"__tuple__": items} if kind is tuple else items
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
                return self.load_source(load["source"], load["filename"], bool(load.get("by_hand"))), b""
            if self.namespace is None:
                return {
                    "ok": False,
                    "error": self.load_error or {"type": "RuntimeError", "message": "nothing loaded"},
                }, b""
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
            if "training" in req or req.get("module_dtype") is not None or "weights" in req:
                self._prepare(value, reply["value"], cast(NewRequest, req), blob, reply)
            return reply
        reply["value"] = self.encode(value, out)
        if traced is not None:
            # after the answer is encoded: a value computed lazily, while it is read, is part of the answer
            reply["graph"] = capture_graph(trace_fn, *traced, lambda v: self.encode(v, out))
        if before is not None:
            reply["inputs_changed"] = [
                bool(
                    b is not None
                    and isinstance(a, t.TensorBase)
                    and (a.shape != b.shape or not t.equal(t.as_subclass(t.detach(a), t.Tensor), b))
                )
                for a, b in zip(args, before)
            ]
        grad = req.get("grad")
        if grad:
            # d(sum(out * upstream))/d(params and grad-requiring inputs): the judge compares with its own grads
            upstream = self.decode(grad["upstream"], blob)
            if not isinstance(value, t.TensorBase) or not value.requires_grad or value.shape != upstream.shape:
                reply["grads"] = None  # (an answer of another shape: the judge says so, from the value)
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
        """What the judge would do next with a new module, in the same request: ``module.train(training)`` and
        ``module.to(dtype=...)`` (an error fails the request, as it would fail that call), then read its state and
        load the given weights. The load happens only when the weights fit (:func:`~.wire.weights_fit`, the rule the judge
        applies to the state it gets back, and then takes this load as its own); an error reading the
        state or loading is returned for the judge to raise where the separate call would have raised it."""
        t = self.t
        if "training" in req:
            module.train(bool(req["training"]))  # an error answers the request, as in ``handle``
            if isinstance(module, t.Module):
                info["training"] = bool(module.training)
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
                    str(k): [int(d) for d in v.shape] if isinstance(v, t.TensorBase) else None for k, v in state.items()
                }
            else:
                state = {n: None for n in info.get("params", {})}
                shapes = {n: p["shape"] for n, p in info.get("params", {}).items()}
            if weights_fit(shapes, weights, info.get("params", {})):
                merged = {
                    n: (weights[n] if n in weights else v)
                    for n, v in state.items()
                    if n in weights or isinstance(v, t.TensorBase)
                }
                with t.no_grad():
                    module.load_state_dict(merged, strict=True)
                prepared["loaded"] = True
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            prepared["state_error" if "state" not in prepared and info.get("buffers") else "load_error"] = self._error(
                exc
            )

    def _describe(self, obj) -> dict:
        t = self.t
        if not isinstance(obj, t.Module):
            return {"type": type(obj).__name__[:100], "module": False}
        return {
            "type": type(obj).__name__[:100],
            "module": True,
            "params": {
                str(n): {
                    "shape": [int(s) for s in p.shape],
                    "dtype": str(p.dtype).replace("torch.", ""),
                    "requires_grad": bool(p.requires_grad),
                }
                for n, p in obj.named_parameters()
            },
            "buffers": {
                str(n): {"shape": [int(s) for s in b.shape], "dtype": str(b.dtype).replace("torch.", "")}
                for n, b in obj.named_buffers()
            },
            "modules": {str(n): type(m).__name__[:100] for n, m in obj.named_modules() if n},
            # the torch.nn classes each submodule derives from: a `class Projection(nn.Linear)` is an nn.Linear
            "kinds": {str(n): _torch_kinds(type(m)) for n, m in obj.named_modules() if n},
            "training": bool(obj.training),
        }

    # what each request's op does (after "load", which every child receives first)
    OPS: dict[str, Callable[..., Reply]] = {
        "call": _call,
        "new": _call,
        "method": _call,
        "has": _has,
        "state": _state,
        "load_state": _load_state,
        "describe": _describe_handle,
        "to": _to,
        "train": _train,
    }


def _torch_kinds(cls) -> list[str]:
    """The names of the torch.nn classes in ``cls``'s MRO (below Module), nearest first."""
    kinds = []
    for base in type.__dict__["__mro__"].__get__(cls)[:16]:
        module = getattr(base, "__module__", None)
        if isinstance(module, str) and module.startswith("torch.nn.") and base.__name__ != "Module":
            kinds.append(str(base.__name__)[:100])
    return kinds


def _scattered(t, x):
    """``x``'s values in a layout that no ``view`` merging two dims accepts: its dims stored in reverse order (a
    column-major layout, strides growing from the first dim to the last); a 1-D tensor as every other element of a
    tensor twice its length. Code that assumes contiguous input (``x.view(-1, T, C)``) fails on it; ``reshape``
    works."""
    if x.dim() >= 2:
        order = list(range(x.dim() - 1, -1, -1))
        return t.permute(t.contiguous(t.permute(x, order)), order)
    if x.dim() == 1:
        wide = t.zeros(x.shape[0] * 2, dtype=x.dtype, device=x.device)
        wide[::2] = x
        return wide[::2]
    return x


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
