"""The student side of grading: runs untrusted learner code and answers with plain arrays.

This file is the only part of the autograder that ever executes student code. It is written to run on its
own (``python -I worker.py``) inside the sandbox, where the graders, the solutions and the reference values
are not even on the filesystem: it imports only the standard library, ``numpy`` and ``torch``.

Shape of a grading session::

    judge (trusted, decides scores)              sandbox (bubblewrap, no network, rlimits)
    ───────────────────────────────              ─────────────────────────────────────────
    Sandbox.open(stage source) ──control fd──▶   zygote: torch imported and warmed once
                                                   └─ fork ─▶ child: exec student source,
    StudentProxy.call("fn", x) ◀──rpc socket──▶               serve requests, reply arrays

Every message is a frame: ``>II`` (json length, blob length), a JSON header, then a blob of raw array bytes.
Arrays travel as ``{"__nd__": index, "dtype", "shape", "device"}`` records pointing into the blob. Nothing is
pickled, in either direction, so a hostile child can send back only numbers, strings and arrays: the judge
compares them with values it computed itself.

The same :class:`Executor` also runs in-process for notebooks (nbgrader cells, self-learner notebooks), where
the learner's code already lives in the kernel and there is nothing to isolate.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import traceback

MAGIC_LIMIT = 64 * 1024 * 1024  # largest frame either side accepts (bytes of JSON or of arrays)
_HEADER = struct.Struct(">II")

# Names that a hand-written stage may not reach, seen at the ATen dispatcher (profiler events are recorded for
# every dispatched op, composite ones included) and at the Python API level (torch function mode).
FORBIDDEN_ATEN = (
    "aten::scaled_dot_product_attention",
    "aten::_scaled_dot_product_attention_math",
    "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_flash_attention_for_cpu",
    "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_cudnn_attention",
    "aten::_scaled_dot_product_fused_attention_overrideable",
    "aten::_flash_attention_forward",
    "aten::_efficient_attention_forward",
    "aten::_native_multi_head_attention",
    "aten::_transformer_encoder_layer_fwd",
)
FORBIDDEN_PY = ("scaled_dot_product_attention", "multi_head_attention_forward")


# ───────────────────────────── framing ─────────────────────────────


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise EOFError("connection closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def send_frame(sock: socket.socket, header: dict, blob: bytes = b"") -> None:
    data = json.dumps(header, allow_nan=True).encode()
    sock.sendall(_HEADER.pack(len(data), len(blob)) + data + blob)


def recv_frame(sock: socket.socket) -> tuple[dict, bytes]:
    n_json, n_blob = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    if n_json > MAGIC_LIMIT or n_blob > MAGIC_LIMIT:
        raise ValueError(f"frame too large ({n_json} + {n_blob} bytes)")
    header = json.loads(_recv_exact(sock, n_json))
    if not isinstance(header, dict):
        raise ValueError("frame header is not an object")
    return header, _recv_exact(sock, n_blob) if n_blob else b""


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


def encode_array(array, dtype_name: str, device: str, blob: Blob) -> dict:
    """``array`` is a C-contiguous numpy array; ``dtype_name`` the torch dtype it stands for."""
    start, size = blob.add(array.tobytes())
    return {"__nd__": [start, size], "np": array.dtype.str, "dtype": dtype_name,
            "shape": list(array.shape), "device": device}


def decode_array(rec: dict, blob: bytes):
    import numpy as np

    start, size = rec["__nd__"]
    if start < 0 or size < 0 or start + size > len(blob):
        raise ValueError("array record points outside the frame")
    np_dtype = np.dtype(rec["np"])
    if np_dtype.hasobject:
        raise ValueError("object arrays are not accepted")
    shape = [int(s) for s in rec["shape"]]
    array = np.frombuffer(blob, dtype=np_dtype, count=size // max(np_dtype.itemsize, 1), offset=start)
    return array.reshape(shape)


# ───────────────────────────── the executor (student side) ─────────────────────────────


class StudentError(Exception):
    """Raised inside the executor when the learner's code fails; carries a teaching summary."""


def _short_traceback(exc: BaseException, filename: str) -> dict:
    """Where in the learner's own file the error happened, without the autograder's frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = None
    if frames:
        last = frames[-1]
        where = {"line": last.lineno, "function": last.name, "code": (last.line or "").strip()}
    return {"type": type(exc).__name__, "message": str(exc)[:2000], "where": where}


class Executor:
    """Runs requests against one learner module. Trusted code on the outside sends only plain data."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.namespace: dict | None = None
        self.filename = "<student>"
        self.handles: dict[int, object] = {}
        self.load_error: dict | None = None

    # -- loading ------------------------------------------------------------------------------------------
    def load_source(self, source: str, filename: str) -> dict:
        import types

        self.filename = filename
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
            self.load_error = _short_traceback(exc, filename)
            return {"ok": False, "error": self.load_error}
        self.namespace = module.__dict__
        return {"ok": True, "names": sorted(k for k in module.__dict__ if not k.startswith("_"))}

    def use_namespace(self, namespace: dict, filename: str = "<notebook>") -> None:
        """In-process mode: the learner's functions already live in ``namespace``."""
        self.namespace = namespace
        self.filename = filename

    # -- values -------------------------------------------------------------------------------------------
    def _dtype(self, name):
        return None if name is None else getattr(self.torch, name)

    def to_tensor(self, rec: dict, blob: bytes):
        torch = self.torch
        array = decode_array(rec, blob)
        t = torch.from_numpy(array.copy())
        dtype = self._dtype(rec.get("dtype"))
        device = rec.get("device") or "cpu"
        if rec.get("noncontig") and t.dim() >= 1:
            # same values, but a view with a stride of 2 on the last dim: catches code that assumes .view works
            wide = torch.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype)
            wide[..., ::2] = t
            t = wide[..., ::2]
        t = t.to(device=device, dtype=dtype) if not rec.get("noncontig") else t.to(dtype=dtype).to(device)
        if rec.get("noncontig") and device != "cpu":
            wide = torch.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype, device=device)
            wide[..., ::2] = t
            t = wide[..., ::2]
        if rec.get("requires_grad"):
            t.requires_grad_(True)
        return t

    def decode(self, value, blob: bytes):
        if isinstance(value, dict):
            if "__nd__" in value:
                return self.to_tensor(value, blob)
            if "__tuple__" in value:
                return tuple(self.decode(v, blob) for v in value["__tuple__"])
            if "__dtype__" in value:
                return self._dtype(value["__dtype__"])
            return {k: self.decode(v, blob) for k, v in value.items()}
        if isinstance(value, list):
            return [self.decode(v, blob) for v in value]
        return value

    def encode(self, value, blob: Blob, depth: int = 0):
        """Learner values → plain records. Only real tensor data leaves: subclasses are unwrapped first."""
        torch = self.torch
        if depth > 6:
            return {"__repr__": "<nested too deeply>"}
        if isinstance(value, torch.Tensor):
            with torch._C.DisableTorchFunctionSubclass():
                t = torch.Tensor.detach(value)
                if type(t) is not torch.Tensor:
                    t = torch.Tensor.as_subclass(t, torch.Tensor)
                dtype_name = str(t.dtype).replace("torch.", "")
                device = str(t.device)
                t = torch.Tensor.cpu(t)
                if t.dtype in (torch.bfloat16, torch.float16):
                    t = t.to(torch.float32)
                if t.is_complex() or t.dtype not in _NUMPY_OK(torch):
                    return {"__repr__": f"tensor of dtype {dtype_name}"}
                array = torch.Tensor.numpy(t.contiguous()).copy()
            return encode_array(array, dtype_name, device, blob)
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, (int, float)) and type(value) in (int, float):
            return value
        if type(value) is str:
            return value[:1000]
        if type(value) in (tuple, list):
            items = [self.encode(v, blob, depth + 1) for v in value[:64]]
            return {"__tuple__": items} if type(value) is tuple else items
        if type(value) is dict:
            return {str(k)[:100]: self.encode(v, blob, depth + 1) for k, v in list(value.items())[:64]}
        if isinstance(value, torch.dtype):
            return {"__dtype__": str(value).replace("torch.", "")}
        return {"__repr__": f"<{type(value).__name__}>"}

    # -- recording what the learner's code dispatched ------------------------------------------------------
    def _record(self, fn, record: bool):
        """Run ``fn()``; when ``record``, also return the ATen ops and torch API calls it made."""
        if not record:
            return fn(), None
        torch = self.torch
        from torch.overrides import TorchFunctionMode

        py_calls: list[str] = []

        class _Calls(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", "")
                if name in FORBIDDEN_PY:
                    py_calls.append(name)
                return func(*args, **(kwargs or {}))

        with _quiet_stderr(), torch.autograd.profiler.profile() as prof:
            with _Calls():
                out = fn()
        ops = [e.name for e in prof.function_events]
        return out, {"n_ops": len(ops), "forbidden": sorted({o for o in ops if o in FORBIDDEN_ATEN} | set(py_calls))}

    # -- requests -----------------------------------------------------------------------------------------
    def handle(self, req: dict, blob: bytes) -> tuple[dict, bytes]:
        out = Blob()
        try:
            op = req.get("op")
            if op == "load":
                return self.load_source(req["source"], req["filename"]), b""
            if op == "ping":
                return {"ok": True}, b""
            if self.namespace is None:
                return {"ok": False, "error": self.load_error or {"type": "RuntimeError", "message": "nothing loaded"}}, b""
            if op == "has":
                return {"ok": True, "value": {n: n in self.namespace for n in req["names"]}}, b""
            if op in ("call", "new", "method"):
                return self._call(op, req, blob, out), out.bytes()
            if op == "state":
                module = self.handles[req["handle"]]
                state = {k: self.encode(v, out) for k, v in module.state_dict().items()}
                return {"ok": True, "value": state}, out.bytes()
            if op == "load_state":
                module = self.handles[req["handle"]]
                state = {k: self.decode(v, blob) for k, v in req["state"].items()}
                with self.torch.no_grad():
                    module.load_state_dict(state, strict=True)
                return {"ok": True}, b""
            if op == "describe":
                return {"ok": True, "value": self._describe(self.handles[req["handle"]])}, b""
            if op == "to":
                module = self.handles[req["handle"]]
                module.to(device=req.get("device"), dtype=self._dtype(req.get("dtype")))
                return {"ok": True}, b""
            if op == "train":
                self.handles[req["handle"]].train(bool(req["mode"]))
                return {"ok": True}, b""
            return {"ok": False, "error": {"type": "ProtocolError", "message": f"unknown op {op!r}"}}, b""
        except StudentError as exc:
            return {"ok": False, "error": exc.args[0]}, b""
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, (KeyboardInterrupt,)):
                raise
            return {"ok": False, "error": _short_traceback(exc, self.filename)}, b""

    def _lookup(self, name: str):
        if name not in self.namespace:
            raise StudentError({"type": "MissingName", "message": f"{name} is not defined in your file", "where": None})
        return self.namespace[name]

    def _call(self, op: str, req: dict, blob: bytes, out: Blob) -> dict:
        torch = self.torch
        args = self.decode(req.get("args", []), blob)
        kwargs = self.decode(req.get("kwargs", {}), blob)
        if op == "method":
            target = self.handles[req["handle"]]
            method = req.get("method", "__call__")
            fn = target if method == "__call__" else getattr(target, method)
        else:
            fn = self._lookup(req["name"])
        before = None
        if req.get("return_inputs"):
            before = [a.detach().clone() if isinstance(a, torch.Tensor) else None for a in args]
        if req.get("seed") is not None:
            torch.manual_seed(int(req["seed"]))
        grad_mode = torch.enable_grad() if req.get("grad") else torch.no_grad() if req.get("no_grad") else _null()
        try:
            with grad_mode:
                value, rec = self._record(lambda: fn(*args, **kwargs), bool(req.get("record")))
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise StudentError(_short_traceback(exc, self.filename)) from None
        reply: dict = {"ok": True}
        if op == "new":
            handle = len(self.handles) + 1
            self.handles[handle] = value
            reply["value"] = {"handle": handle, **self._describe(value)}
            return reply
        reply["value"] = self.encode(value, out)
        if rec is not None:
            reply["record"] = rec
        if before is not None:
            reply["inputs_changed"] = [
                bool(b is not None and isinstance(a, torch.Tensor)
                     and (a.shape != b.shape or not torch.equal(torch.Tensor.detach(a), b)))
                for a, b in zip(args, before)
            ]
        grad = req.get("grad")
        if grad:
            # d(sum(out * upstream))/d(params and grad-requiring inputs): the judge compares with its own grads
            upstream = self.decode(grad["upstream"], blob)
            if not isinstance(value, torch.Tensor) or not value.requires_grad:
                reply["grads"] = None
            else:
                torch.autograd.backward(value, upstream.to(value.device, value.dtype))
                grads = {}
                if op == "method":
                    for name, p in self.handles[req["handle"]].named_parameters():
                        grads[name] = self.encode(p.grad, out) if p.grad is not None else None
                for i, a in enumerate(args):
                    if isinstance(a, torch.Tensor) and a.requires_grad:
                        grads[f"arg{i}"] = self.encode(a.grad, out) if a.grad is not None else None
                reply["grads"] = grads
        return reply

    def _describe(self, obj) -> dict:
        torch = self.torch
        if not isinstance(obj, torch.nn.Module):
            return {"type": type(obj).__name__, "module": False}
        return {
            "type": type(obj).__name__,
            "module": True,
            "params": {n: {"shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", ""),
                           "requires_grad": bool(p.requires_grad)} for n, p in obj.named_parameters()},
            "buffers": {n: {"shape": list(b.shape), "dtype": str(b.dtype).replace("torch.", "")}
                        for n, b in obj.named_buffers()},
            "modules": {n: type(m).__name__ for n, m in obj.named_modules() if n},
            "training": bool(obj.training),
        }


def _NUMPY_OK(torch):
    return (torch.float32, torch.float64, torch.bool, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _quiet_stderr:
    """The profiler's C++ side prints start/stop lines on fd 2; notebooks must not see them."""

    def __enter__(self):
        try:
            sys.stderr.flush()
            self.saved = os.dup(2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.close(devnull)
        except OSError:
            self.saved = None
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            os.dup2(self.saved, 2)
            os.close(self.saved)
        return False


# ───────────────────────────── child process ─────────────────────────────


def serve(sock: socket.socket) -> None:
    """Answer requests on ``sock`` until the judge says goodbye or hangs up."""
    executor = Executor()
    while True:
        try:
            req, blob = recv_frame(sock)
        except (EOFError, OSError, ValueError):
            return
        if req.get("op") == "bye":
            return
        reply, out = executor.handle(req, blob)
        try:
            if len(out) > MAGIC_LIMIT:
                reply, out = {"ok": False, "error": {"type": "OutputTooLarge", "message": "the result is too large to return"}}, b""
            send_frame(sock, reply, out)
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
        # address space = what the warm zygote already maps + the learner's allowance
        setlim(resource.RLIMIT_AS, _vm_size() + int(limits["memory_mb"]) * 1024 * 1024)
    setlim(resource.RLIMIT_CPU, limits.get("cpu_s"), slack=2)  # SIGXCPU first, SIGKILL 2 s later
    setlim(resource.RLIMIT_FSIZE, limits.get("file_mb", 8) * 1024 * 1024)
    setlim(resource.RLIMIT_CORE, 0)
    setlim(resource.RLIMIT_NOFILE, limits.get("files", 256))
    if limits.get("nproc"):
        setlim(resource.RLIMIT_NPROC, limits["nproc"])


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 4 << 30


def _child(rpc: socket.socket, req: dict, workdir: str) -> None:
    """In the forked child: own session, private directory, output to a capped file, limits, then serve."""
    os.setsid()
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)
    os.environ["HOME"] = workdir
    os.environ["TMPDIR"] = workdir
    fd = os.open(os.path.join(workdir, ".output"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a flood of prints fails the write, not the process
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    _apply_limits(req.get("limits", {}))
    try:
        serve(rpc)
    finally:
        os._exit(0)


def _kill_others(keep: set[int]) -> None:
    """Inside the sandbox's own PID namespace: whatever the last child left running is killed."""
    for _ in range(3):
        found = False
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in keep:
                try:
                    os.kill(int(name), signal.SIGKILL)
                    found = True
                except (ProcessLookupError, PermissionError):
                    pass
        if not found:
            return


def _wipe(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


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
    torch.tril(torch.ones(4, 4)).cumsum(0)
    with _quiet_stderr(), torch.autograd.profiler.profile():
        torch.ones(2) + 1
    torch.nn.functional.dropout(x, 0.1)


def zygote(control: socket.socket, pid_namespace: bool, base_tmp: str) -> None:
    """Serve fork requests from the judge: one fresh child per (submission, stage).

    The control socket is SOCK_SEQPACKET, so each JSON message is one packet; a fork request carries the
    child's RPC socket as an SCM_RIGHTS file descriptor.
    """
    import select

    warm_up()
    control.send(json.dumps({"op": "ready", "pid": os.getpid()}).encode())
    me = os.getpid()
    counter = 0
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(control, 1 << 16, 1)
        except OSError:
            return
        if not msg:
            return
        try:
            req = json.loads(msg)
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
        pid = os.fork()
        if pid == 0:
            control.close()
            _child(rpc, req, workdir)
        rpc.close()
        pidfd = os.pidfd_open(pid)
        killed = False
        while True:
            ready, _, _ = select.select([pidfd, control], [], [])
            if pidfd in ready:
                break
            try:
                kmsg = control.recv(1 << 16)
            except OSError:
                kmsg = b""
            if not kmsg or b'"kill"' in kmsg:
                killed = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                if not kmsg:
                    return
        _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        try:
            os.killpg(pid, signal.SIGKILL)  # the child's own session: helpers it started
        except OSError:
            pass
        if pid_namespace:
            _kill_others({1, me})
        tail = ""
        try:
            with open(os.path.join(workdir, ".output"), "rb") as fh:
                fh.seek(0, 2)
                size = fh.tell()
                fh.seek(max(0, size - 2000))
                tail = fh.read().decode("utf-8", "replace")
        except OSError:
            pass
        _wipe(workdir)
        info = {"op": "exited", "killed": killed, "output_tail": tail}
        if os.WIFSIGNALED(status):
            info["signal"] = os.WTERMSIG(status)
        else:
            info["code"] = os.WEXITSTATUS(status)
        control.send(json.dumps(info).encode())


def main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--pid-namespace", action="store_true")
    parser.add_argument("--tmp", default="/tmp")
    opts = parser.parse_args(argv)
    control = socket.socket(fileno=opts.control_fd)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    zygote(control, opts.pid_namespace, opts.tmp)


if __name__ == "__main__":
    main(sys.argv[1:])
