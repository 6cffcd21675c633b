"""The judge's side of the sandbox: start the warm worker under bubblewrap and talk to learner code.

What the sandbox covers, on Linux with bubblewrap (the set-up installs it):

- a fresh child process per (submission, stage), forked from a zygote that imported torch once;
- new user, PID, network, IPC, UTS and cgroup namespaces (``--unshare-all``): no network at all, no view of
  the judge's processes; the zygote kills every process the last child left behind before the next fork;
- a filesystem holding only the Python runtime, its packages and ``worker.py``: no repository, graders,
  solutions, expected values or other students' files; ``/tmp`` is a private tmpfs wiped after every child;
- when the judge runs as root, the sandbox runs as an unprivileged uid of its own, so ``RLIMIT_NPROC`` holds;
- rlimits on address space, CPU seconds, file size, open files and processes; a wall-clock timeout per call
  that kills the child's whole session;
- only JSON and raw array bytes come back; the verdict is made here.

Not covered: a learner can still spend the CPU time and memory its limits allow; kernel exploits; side
channels; on machines without bubblewrap (macOS, Windows, containers that forbid user namespaces) the worker
runs as a plain subprocess with the rlimits only, and a loud warning says so.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from . import worker as wire

WORKER_FILE = Path(wire.__file__).resolve()
SANDBOX_WORKER = "/opt/autograder/worker.py"


class SandboxWarning(UserWarning):
    pass


@dataclass
class Limits:
    call_timeout: float = 10.0  # wall-clock seconds for one call into learner code
    memory_mb: int = 2048  # address space on top of what the warm worker maps
    cpu_s: int = 60  # CPU seconds for one (submission, stage) child
    file_mb: int = 8  # largest file the learner may write (prints included)
    nproc: int = 64  # processes and threads of the sandbox's uid
    max_restarts: int = 2  # fresh children after a crash or hang, within one stage

    def for_child(self) -> dict:
        return {"memory_mb": self.memory_mb, "cpu_s": self.cpu_s, "file_mb": self.file_mb, "nproc": self.nproc}


# ───────────────────────────── errors seen by the graders ─────────────────────────────


class StudentFailure(Exception):
    """Base: the learner's code did not produce a value. ``str()`` is a message for the learner."""


class NotImplementedYet(StudentFailure):
    pass


class StudentCodeError(StudentFailure):
    def __init__(self, error: dict):
        self.error = error
        where = error.get("where") or {}
        loc = ""
        if where.get("line"):
            loc = f" (line {where['line']}"
            loc += f", in {where['function']}" if where.get("function") not in (None, "<module>") else ""
            loc += f": `{where['code']}`)" if where.get("code") else ")"
        super().__init__(f"your code raised {error.get('type', 'an error')}: {error.get('message', '')}{loc}".rstrip())


class MissingName(StudentCodeError):
    pass


class StudentTimeout(StudentFailure):
    pass


class StudentCrashed(StudentFailure):
    pass


# ───────────────────────────── values sent back by the learner ─────────────────────────────


@dataclass
class Out:
    """A tensor that came back from learner code: its values (CPU), and where/what it was."""

    t: "object"  # torch.Tensor on CPU, in the dtype the learner returned (float16/bfloat16 restored)
    dtype: str
    device: str

    @property
    def shape(self) -> tuple:
        return tuple(self.t.shape)


@dataclass
class Opaque:
    """Something that is not a tensor, number, string or container (a module, a generator...)."""

    description: str


def _decode_reply_value(value, blob: bytes):
    import torch

    if isinstance(value, dict):
        if "__nd__" in value:
            array = wire.decode_array(value, blob)
            t = torch.from_numpy(array.copy())
            if value["dtype"] in ("bfloat16", "float16"):
                t = t.to(getattr(torch, value["dtype"]))
            return Out(t, value["dtype"], value.get("device", "cpu"))
        if "__tuple__" in value:
            return tuple(_decode_reply_value(v, blob) for v in value["__tuple__"])
        if "__repr__" in value:
            return Opaque(str(value["__repr__"]))
        if "__dtype__" in value:
            return getattr(torch, str(value["__dtype__"]), None)
        return {k: _decode_reply_value(v, blob) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_reply_value(v, blob) for v in value]
    return value


def encode_args(value, blob: wire.Blob, *, device: str, dtype, noncontig: bool, requires_grad: bool):
    """Judge values → records. Float tensors are sent as float64 and cast by the child to ``dtype``."""
    import torch

    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        target = t.dtype
        if t.is_floating_point():
            target = dtype or t.dtype
            t = t.double()
        rec = wire.encode_array(t.contiguous().numpy(), str(target).replace("torch.", ""), device, blob)
        if noncontig:
            rec["noncontig"] = True
        if requires_grad and t.is_floating_point():
            rec["requires_grad"] = True
        return rec
    if isinstance(value, tuple):
        return {"__tuple__": [encode_args(v, blob, device=device, dtype=dtype, noncontig=noncontig,
                                          requires_grad=requires_grad) for v in value]}
    if isinstance(value, list):
        return [encode_args(v, blob, device=device, dtype=dtype, noncontig=noncontig, requires_grad=requires_grad)
                for v in value]
    if isinstance(value, dict):
        return {k: encode_args(v, blob, device=device, dtype=dtype, noncontig=noncontig, requires_grad=requires_grad)
                for k, v in value.items()}
    if isinstance(value, torch.dtype):
        return {"__dtype__": str(value).replace("torch.", "")}
    return value


# ───────────────────────────── the sandbox ─────────────────────────────


def _bwrap() -> str | None:
    if os.environ.get("AUTOGRADER_NO_BWRAP"):
        return None
    return shutil.which("bwrap") if sys.platform.startswith("linux") else None


def _runtime_paths() -> list[str]:
    """Directories the worker needs: the interpreter's prefix, the venv, and where torch/numpy live."""
    import numpy
    import torch

    paths = {sys.base_prefix, sys.prefix, str(Path(torch.__file__).parent.parent),
             str(Path(numpy.__file__).parent.parent)}
    real = {str(Path(p).resolve()) for p in paths}
    return sorted(p for p in paths | real if p and not p.startswith("/usr/") and p != "/usr" and os.path.isdir(p))


def bwrap_command(bwrap: str, control_fd: int, python: str) -> list[str]:
    """The bubblewrap command line for the worker (a pure function, so tests can read it)."""
    cmd = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--hostname", "sandbox", "--clearenv",
           "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
           "--setenv", "OMP_NUM_THREADS", "1", "--setenv", "MKL_NUM_THREADS", "1",
           "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
           "--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr"]
    for top in ("/lib", "/lib64", "/bin", "/sbin", "/lib32"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    if os.path.exists("/etc/ld.so.cache"):
        cmd += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for path in _runtime_paths():
        cmd += ["--ro-bind", path, path]
    for dev in sorted(Path("/dev").glob("nvidia*")):  # CUDA devices, when the machine has them
        cmd += ["--dev-bind", str(dev), str(dev)]
    cmd += ["--proc", "/proc", "--dev", "/dev",
            "--ro-bind", str(WORKER_FILE), SANDBOX_WORKER, "--chdir", "/tmp", "--",
            python, "-I", SANDBOX_WORKER, "--control-fd", str(control_fd), "--pid-namespace", "--tmp", "/tmp"]
    return cmd


class Sandbox:
    """A warm worker process (inside bubblewrap when available) that forks one child per stage."""

    def __init__(self, limits: Limits | None = None, slot: int | None = None):
        self.limits = limits or Limits()
        self.slot = slot if slot is not None else os.getpid() % 4000
        self.proc: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.isolation = ""
        self._lock = threading.Lock()

    # -- life cycle ---------------------------------------------------------------------------------------
    def start(self) -> "Sandbox":
        if self.proc is not None and self.proc.poll() is None:
            return self
        bwrap = _bwrap()
        attempts = []
        if bwrap:
            if os.geteuid() == 0:
                attempts.append(("bwrap", 60000 + self.slot))
            attempts.append(("bwrap", None))
        attempts.append(("plain", None))
        errors = []
        for kind, uid in attempts:
            try:
                self._launch(kind, uid, bwrap)
                break
            except (OSError, RuntimeError, EOFError) as exc:
                errors.append(f"{kind}{'/uid ' + str(uid) if uid else ''}: {exc}")
                self.close()
        else:
            raise RuntimeError("could not start the grading worker: " + "; ".join(errors))
        if kind == "plain":
            warnings.warn(
                "bubblewrap is not available: learner code runs in a plain subprocess with rlimits only "
                "(no network, filesystem or PID isolation). Install bubblewrap before grading untrusted code.",
                SandboxWarning, stacklevel=2)
            if errors:
                self.isolation += " (bubblewrap failed: " + "; ".join(errors) + ")"
        return self

    def _launch(self, kind: str, uid: int | None, bwrap: str | None) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = child.fileno()
        env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"}
        if kind == "bwrap":
            cmd = bwrap_command(bwrap, fd, sys.executable)
            tmp = "/tmp"
            self.isolation = f"bubblewrap ({'uid ' + str(uid) if uid else 'same uid'}, no network, own PID namespace)"
        else:
            import tempfile

            tmp = tempfile.mkdtemp(prefix="autograder-")
            cmd = [sys.executable, "-I", str(WORKER_FILE), "--control-fd", str(fd), "--tmp", tmp]
            self.isolation = "none: plain subprocess with rlimits (bubblewrap unavailable)"
            env["TMPDIR"] = tmp

        def demote():
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)

        self.proc = subprocess.Popen(cmd, pass_fds=(fd,), env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=None if os.environ.get("AUTOGRADER_DEBUG") else subprocess.PIPE,
                                     preexec_fn=demote if uid is not None else None, start_new_session=True)
        child.close()
        self.control = parent
        parent.settimeout(120)
        try:
            msg = parent.recv(1 << 16)
        except socket.timeout as exc:
            raise RuntimeError("the worker did not start within 120 s") from exc
        if not msg:
            err = self.proc.stderr.read().decode(errors="replace")[-800:] if self.proc.stderr else ""
            self.proc.wait(timeout=5)
            raise RuntimeError(f"the worker exited at start: {err.strip() or self.proc.returncode}")
        parent.settimeout(None)
        if self.proc.stderr is not None:
            threading.Thread(target=_drain, args=(self.proc.stderr,), daemon=True).start()

    def close(self) -> None:
        if self.control is not None:
            try:
                self.control.send(json.dumps({"op": "quit"}).encode())
            except OSError:
                pass
            self.control.close()
            self.control = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
            self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # -- children -----------------------------------------------------------------------------------------
    def fork_child(self) -> socket.socket:
        """A fresh child process; returns the judge's end of its RPC socket."""
        with self._lock:
            if self.proc is None or self.proc.poll() is not None:
                self.close()
                self.start()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            msg = json.dumps({"op": "fork", "limits": self.limits.for_child()}).encode()
            try:
                socket.send_fds(self.control, [msg], [theirs.fileno()])
            except OSError:
                self.close()
                self.start()
                socket.send_fds(self.control, [msg], [theirs.fileno()])
            theirs.close()
            return ours

    def end_child(self, kill: bool) -> dict:
        """Wait for the zygote to report the child's end (killing it first when asked)."""
        with self._lock:
            if self.control is None:
                return {"op": "exited", "lost": True}
            try:
                if kill:
                    self.control.send(json.dumps({"op": "kill"}).encode())
                self.control.settimeout(30)
                msg = self.control.recv(1 << 16)
                self.control.settimeout(None)
            except OSError:
                msg = b""
            if not msg:
                self.close()
                return {"op": "exited", "lost": True}
            return json.loads(msg)

    def open(self, source: str, filename: str) -> "StudentProxy":
        return StudentProxy(self, source, filename)


def _drain(stream) -> None:
    try:
        while stream.read(65536):
            pass
    except (OSError, ValueError):
        pass


# ───────────────────────────── the proxy graders talk to ─────────────────────────────


@dataclass
class StudentProxy:
    """Calls into one learner file, in its own child process. Every method returns plain values."""

    sandbox: Sandbox
    source: str
    filename: str
    restarts: int = 0
    sock: socket.socket | None = None
    load_error: dict | None = None
    names: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    last_exit: dict | None = None

    # -- connection ---------------------------------------------------------------------------------------
    def _ensure(self) -> None:
        if self.sock is not None:
            return
        if self.restarts > self.sandbox.limits.max_restarts:
            raise StudentCrashed("skipped: this stage's code already crashed or hung "
                                 f"{self.restarts} times; the remaining checks were not run")
        self.sock = self.sandbox.fork_child()
        reply, _ = self._roundtrip({"op": "load", "source": self.source, "filename": self.filename}, b"")
        if not reply.get("ok"):
            self.load_error = reply.get("error")
        else:
            self.names = reply.get("names", [])

    def _roundtrip(self, req: dict, blob: bytes) -> tuple[dict, bytes]:
        timeout = self.sandbox.limits.call_timeout
        self.sock.settimeout(timeout)
        started = time.monotonic()
        try:
            wire.send_frame(self.sock, req, blob)
            reply, out = wire.recv_frame(self.sock)
            return reply, out
        except socket.timeout:
            self._drop(kill=True)
            raise StudentTimeout(f"your code did not finish within {timeout:g} s (an endless loop, or a "
                                 "Python loop over a large tensor?)") from None
        except (EOFError, OSError, ValueError, json.JSONDecodeError) as exc:
            info = self._drop(kill=True)
            raise StudentCrashed(_describe_exit(info, time.monotonic() - started, exc)) from None

    def _drop(self, kill: bool) -> dict:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None
        self.restarts += 1
        info = self.sandbox.end_child(kill=kill)
        self.last_exit = info
        return info

    def close(self) -> None:
        if self.sock is not None:
            try:
                wire.send_frame(self.sock, {"op": "bye"})
            except OSError:
                pass
            self.sock.close()
            self.sock = None
            self.last_exit = self.sandbox.end_child(kill=False)

    # -- requests -----------------------------------------------------------------------------------------
    def request(self, req: dict, blob: bytes = b""):
        self._ensure()
        if self.load_error is not None:
            raise _load_failure(self.load_error)
        reply, out = self._roundtrip(req, blob)
        if not reply.get("ok"):
            err = reply.get("error") or {}
            if err.get("type") == "NotImplementedError":
                raise NotImplementedYet(err.get("message") or "not implemented yet")
            if err.get("type") == "MissingName":
                raise MissingName(err)
            raise StudentCodeError(err)
        reply["value"] = _decode_reply_value(reply.get("value"), out)
        if reply.get("grads"):
            reply["grads"] = {k: _decode_reply_value(v, out) for k, v in reply["grads"].items()}
        return reply

    def loaded(self) -> bool:
        """True when the file imported cleanly (raises nothing: the error is kept in ``load_error``)."""
        try:
            self._ensure()
        except StudentFailure:
            return False
        return self.load_error is None

    def _pack(self, op: str, args, kwargs, *, to="cpu", cast=None, noncontig=False, grad_inputs=False,
              **extra) -> tuple[dict, bytes]:
        blob = wire.Blob()
        req = {"op": op,
               "args": encode_args(list(args), blob, device=to, dtype=cast, noncontig=noncontig,
                                   requires_grad=grad_inputs),
               "kwargs": encode_args(dict(kwargs), blob, device=to, dtype=cast, noncontig=False,
                                     requires_grad=False)}
        for key, value in extra.items():
            if key == "upstream" and value is not None:
                req["grad"] = {"upstream": encode_args(value, blob, device=to, dtype=cast, noncontig=False,
                                                      requires_grad=False)}
            elif value is not None:
                req[key] = value
        return req, blob.bytes()

    def call(self, name: str, *args, to="cpu", cast=None, noncontig=False, record=False,
             return_inputs=False, upstream=None, grad_inputs=False, seed=None, full=False, **kwargs):
        """Call ``name(*args, **kwargs)`` in the learner's file. Float tensors are cast to ``cast`` and put
        on device ``to`` (non-contiguous views when ``noncontig``); other keyword arguments (``device=``,
        ``dtype=``, ``dim=``...) go to the learner's function. ``full=True`` returns the whole reply
        (``value``, ``record``, ``inputs_changed``, ``grads``); otherwise just the value."""
        req, blob = self._pack("call", args, kwargs, to=to, cast=cast, noncontig=noncontig,
                               grad_inputs=grad_inputs, name=name, record=record or None,
                               return_inputs=return_inputs or None, upstream=upstream, seed=seed)
        reply = self.request(req, blob)
        return reply if full else reply["value"]

    def new(self, cls: str, *args, seed=None, **kwargs) -> "ModuleHandle":
        req, blob = self._pack("new", args, kwargs, name=cls, seed=seed)
        info = self.request(req, blob)["value"]
        if not isinstance(info, dict) or "handle" not in info:
            raise StudentCodeError({"type": "TypeError", "message": f"{cls}(...) did not construct an object"})
        return ModuleHandle(self, info["handle"], info)

    def has(self, *names: str) -> dict:
        return self.request({"op": "has", "names": list(names)})["value"]


class LocalStudent(StudentProxy):
    """In-process learner code (a notebook kernel, where the code already runs): same interface and verdicts,
    no isolation. Requests still go through the executor's encode/decode path, so values are identical."""

    def __init__(self, namespace: dict, filename: str = "<notebook>"):
        super().__init__(sandbox=None, source="", filename=filename)
        self.executor = wire.Executor()
        self.executor.use_namespace(namespace, filename)

    def _ensure(self) -> None:
        return None

    def _roundtrip(self, req: dict, blob: bytes) -> tuple[dict, bytes]:
        return self.executor.handle(req, blob)

    def close(self) -> None:
        return None


@dataclass
class ModuleHandle:
    proxy: StudentProxy
    handle: int
    info: dict

    def __call__(self, *args, to="cpu", cast=None, noncontig=False, record=False, return_inputs=False,
                 upstream=None, seed=None, full=False, **kwargs):
        req, blob = self.proxy._pack("method", args, kwargs, to=to, cast=cast, noncontig=noncontig,
                                     handle=self.handle, method="__call__", record=record or None,
                                     return_inputs=return_inputs or None, upstream=upstream, seed=seed)
        reply = self.proxy.request(req, blob)
        return reply if full else reply["value"]

    def state(self) -> dict:
        return self.proxy.request({"op": "state", "handle": self.handle})["value"]

    def load_state(self, state: dict) -> None:
        blob = wire.Blob()
        enc = {k: encode_args(v, blob, device="cpu", dtype=None, noncontig=False, requires_grad=False)
               for k, v in state.items()}
        self.proxy.request({"op": "load_state", "handle": self.handle, "state": enc}, blob.bytes())

    def to(self, device: str | None = None, dtype=None) -> None:
        self.proxy.request({"op": "to", "handle": self.handle, "device": device,
                            "dtype": str(dtype).replace("torch.", "") if dtype is not None else None})

    def train(self, mode: bool) -> None:
        self.proxy.request({"op": "train", "handle": self.handle, "mode": bool(mode)})

    def describe(self) -> dict:
        return self.proxy.request({"op": "describe", "handle": self.handle})["value"]


def _load_failure(error: dict) -> StudentFailure:
    if error.get("type") == "NotImplementedError":
        return NotImplementedYet(error.get("message") or "not implemented yet")
    exc = StudentCodeError(error)
    exc.args = ("your file could not be imported: " + str(exc).removeprefix("your code raised "),)
    return exc


def _describe_exit(info: dict, elapsed: float, exc: BaseException) -> str:
    import signal as _signal

    if info.get("lost"):
        return "the grading worker was lost while running your code"
    if "signal" in info:
        sig = info["signal"]
        name = _signal.Signals(sig).name if sig in _signal.Signals._value2member_map_ else str(sig)
        why = {"SIGSEGV": "a segmentation fault", "SIGKILL": "it was killed (memory or time limit?)",
               "SIGXCPU": "it used up its CPU time", "SIGABRT": "it aborted"}.get(name, name)
        return f"your code's process died: {why}"
    if "code" in info:
        return f"your code ended its process (exit code {info['code']}): don't call sys.exit/os._exit in a stage"
    return f"your code's process stopped answering ({exc})"
