"""The sandbox's PID 1: imports torch and warms it up once, then forks a fresh child for every stage of every
submission. A child confines itself (session, limits, IPC namespace, its own uid, no privileges) before any
learner code runs, serves one stage's requests, and exits; the zygote then kills whatever it left behind and
empties the sandbox's /tmp."""

from __future__ import annotations

# Bound as module globals before any learner code exists: a learner who replaces builtins.isinstance (or
# len, sorted, ...) later does not change what the worker's own code calls.
from builtins import (  # noqa: A004 - shadowing on purpose
    AttributeError,
    ChildProcessError,
    EOFError,
    IndexError,
    OSError,
    PermissionError,
    RecursionError,
    TypeError,
    ValueError,
    any,
    bool,
    bytes,
    dict,
    float,
    frozenset,
    getattr,
    int,
    isinstance,
    len,
    list,
    max,
    min,
    open,
    range,
    set,
    sorted,
    str,
    tuple,
)

import _signal
import os
import signal
import socket
import sys
import time
from typing import cast

from .executor import Executor
from .recorder import _make_tracer, mark_entry_points
from . import seccomp
from .fused import targets as fused_kernels
from .torchrefs import capture_torch, may_have_accelerator
from .wire import (
    BATCH_LIMIT,
    MAGIC_LIMIT,
    REPLY_JSON_LIMIT,
    Blob,
    Exited,
    Ready,
    Reply,
    Request,
    _hmac_digest,
    _monotonic,
    _os_exit,
    _pack_header,
    _sendall,
    dumps,
    encode_array,
    loads,
    recv_frame,
    send_frame,
)


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
        if req.get("op") == "batch":
            calls = req.get("requests")
            if not isinstance(calls, list) or not 0 < len(calls) <= BATCH_LIMIT:
                calls = [{"op": "batch", "id": req.get("id")}]  # answered as an unknown op
            for call in calls:
                if not isinstance(call, dict):
                    call = {"op": None}
                reply, out = executor.handle(cast(Request, call), blob)  # the judge's (it is not checked here)
                if not _answer(sock, key, call.get("id"), reply, out):
                    break  # an error answered the call (the batch ends there), or the judge is gone
            continue
        reply, out = executor.handle(cast(Request, req), blob)
        if _answer(sock, key, req.get("id"), reply, out) is None:
            return


def _answer(sock: socket.socket, key: bytes | None, rid, reply: Reply, out: bytes) -> bool | None:
    """Send ``reply`` (with the request's id ``rid``) and its blob in one frame, signed with ``key``; a reply too
    large, or that cannot be encoded, is sent as the error that says so. Returns whether what was sent is ok;
    None when the judge is gone."""
    try:
        if len(out) > MAGIC_LIMIT:
            reply, out = (
                {"ok": False, "error": {"type": "OutputTooLarge", "message": "the result is too large to return"}},
                b"",
            )
        reply["id"] = rid
        try:
            data = dumps(reply).encode()
        except (TypeError, ValueError, RecursionError):
            reply, out = (
                {
                    "ok": False,
                    "id": rid,
                    "error": {"type": "ProtocolError", "message": "the reply could not be encoded"},
                },
                b"",
            )
            data = dumps(reply).encode()
        if len(data) > REPLY_JSON_LIMIT:
            reply = {
                "ok": False,
                "id": rid,
                "error": {"type": "OutputTooLarge", "message": "the result is too large to return"},
            }
            data, out = dumps(reply).encode(), b""
        frame = _pack_header(len(data), len(out)) + data + out
        if key:
            frame += _hmac_digest(key, data + out, "sha256")
        _sendall(sock, frame)
        return bool(reply.get("ok"))
    except (OSError, ValueError):
        return None


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
_ZYGOTE_DEFAULT_SIGNALS = frozenset(
    {
        signal.SIGCHLD,
        signal.SIGSEGV,
        signal.SIGBUS,
        signal.SIGFPE,
        signal.SIGILL,
        signal.SIGSYS,
        signal.SIGTRAP,
        signal.SIGABRT,
    }
)
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


def _keyctl(*args: int) -> int:
    """keyctl(2) with ``args`` (glibc has no wrapper); -1 where its number is not known here."""
    import ctypes

    nr = seccomp.number("keyctl")
    if nr is None:
        return -1
    syscall = _libc().syscall
    syscall.restype = ctypes.c_long
    return syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))


def _join_new_session_keyring() -> None:
    """A new, empty, anonymous session keyring for this process (KEYCTL_JOIN_SESSION_KEYRING): the zygote's, which
    every child inherits, so that no child possesses the judge's session keyring."""
    _keyctl(1, 0)


def _fresh_keyrings(own_uid: bool) -> None:
    """Where no seccomp filter refuses the keyring calls (it does wherever there is one): kernel keyrings are not
    files, and what one child stores there (add_key) outlives it. A new, empty session keyring for this child;
    with a uid of the children's own (``own_uid``), also every keyring of that uid that outlives a process emptied
    (its user and user-session keyrings, and its persistent keyring, kept by the kernel for days), which the
    previous child of this slot may have filled (never the judge's own: without a uid of the children's, they are
    left alone). Best effort where keyctl is unavailable (it then fails for the learner too) or a kernel has no
    persistent keyrings."""
    _join_new_session_keyring()
    if own_uid:
        # KEYCTL_GET_PERSISTENT(own uid), linked into the new session keyring so that this process may clear it
        persistent = _keyctl(22, -1, -3)
        rings = (-4, -5) + ((persistent,) if persistent > 0 else ())  # KEY_SPEC_USER(_SESSION)_KEYRING
        for ring in rings:
            _keyctl(7, ring)  # KEYCTL_CLEAR


def _clear_capabilities() -> None:
    """No capability in any set (the inheritable ones bubblewrap gave the zygote included): capset(2) with zeros,
    which any process may do to itself."""
    import ctypes

    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: two 32-bit words each
    if _libc().capset(header, data) != 0:
        raise PermissionError("could not clear capabilities")


def _child(rpc: socket.socket, req: dict, workdir: str, uid: int | None, ipc: bool, sandbox_filter) -> None:
    """In the forked child: own session, default signals, private directory, output to a capped file, limits,
    own IPC namespace, the slot's uid (when the zygote is root), the seccomp filter (``sandbox_filter``, None where
    the zygote found none to be had), then serve. Nothing of the learner's runs before every one of these steps has
    held; a step that fails ends the child (the stage fails)."""
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
        if sandbox_filter is None:  # with the filter, no keyring call can be made: nothing to reset
            _fresh_keyrings(own_uid=uid is not None)
        _set_dumpable(True)  # (changing uid reset it) the child's /proc files are its own again
        if sandbox_filter is not None:
            seccomp.install(sandbox_filter, _libc())
        import types

        # learner code starts from a blank __main__ (the runtime's modules stay in sys.modules: nothing they hold
        # decides a verdict, which the judge makes from what it can check)
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
    """Memory the listed processes hold beyond what each inherited from the zygote (:func:`_held_kb`): private
    pages and shared memory they map (``MAP_SHARED | MAP_ANONYMOUS``: resident, yet not private)."""
    return sum(max(0, _held_kb(str(pid)) - base_kb) for pid in pids) / 1024


def _tmp_entries(folder: str) -> int:
    """Inodes in use on ``folder``'s file system (files, folders, links: each holds kernel memory that neither
    the tmpfs's byte size nor the memory budget counts), or 0 when it cannot be read."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return 0
    return st.f_files - st.f_ffree


def _held_kb(pid: str = "self") -> int:
    """RssAnon + RssShmem of ``pid`` (0 when it is gone). Memory no process maps cannot be had: the system calls
    that make it are refused (:mod:`.seccomp`), and /tmp is a tmpfs of bounded size."""
    held = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(("RssAnon:", "RssShmem:")):
                    held += int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return held


def _wipe(path: str) -> None:
    """Remove ``path`` and everything under it, however deep: a learner's tree may be thousands of folders deep
    (``shutil.rmtree`` recurses, and would raise RecursionError or leave the deep part behind), then ``rm -rf``
    finishes (coreutils walks any depth). Links are removed, never followed."""
    import shutil

    try:
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        return
    except (OSError, RecursionError):
        pass
    import subprocess

    try:
        subprocess.run(["rm", "-rf", "--", path], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pass


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
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for name in entries:
        path = os.path.join(folder, name)
        if any(k.startswith(path.rstrip("/") + "/") for k in keep):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            _wipe(path)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def warm_up() -> None:
    """Touch the kernels grading will use, so each forked child starts hot.

    Nothing here may touch an accelerator's driver, since every child is forked from this process. With torch
    built for an accelerator, autograd is not warmed either: the first backward starts autograd's device threads,
    which asks the driver how many devices it has; a forked child can then use neither CUDA nor autograd."""
    import torch

    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False  # graded values must not depend on TF32
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    backward = not may_have_accelerator(torch)
    x = torch.randn(2, 4, 8, requires_grad=True)
    lin = torch.nn.Linear(8, 8)
    w = (lin(x) @ x.transpose(-2, -1) / 8**0.5).masked_fill(
        ~torch.tril(torch.ones(4, 4, dtype=torch.bool)), float("-inf")
    )
    y = torch.nn.Linear(8, 8)(torch.randn(2, 4, 8)).softmax(-1)
    if backward:
        (torch.softmax(w, -1) @ x).sum().backward()
        torch.sum(torch.mul(y, torch.ones_like(y))).backward()  # the form gradient requests take
    torch.tril(torch.ones(4, 4)).cumsum(0)
    torch.nn.functional.dropout(x, 0.1)
    capture_torch()
    mark_entry_points()
    fused_kernels()  # what a child of a stage written by hand switches off, found once here
    _make_tracer()
    executor = Executor()
    executor.encode(torch.ones(2, dtype=torch.float16), Blob())
    _warm_requests(backward)


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


def _warm_requests(backward: bool) -> None:
    """Serve a short session of the requests grading makes (load, a recorded call, a module built, cast and
    loaded, a call, with gradients when ``backward``, its state) over a socket pair, in the zygote itself: the
    lazily filled caches these paths use (OpenSSL's HMAC method store, JSON, numpy and dispatcher look-ups) are
    then filled once, here, instead of in every forked child, where the first use wrote to shared pages."""
    import numpy as np

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        key = bytes(32)
        x = np.linspace(-1.0, 1.0, 2 * 4 * 3).reshape(2, 4, 3)
        w = np.eye(3)
        send_frame(ours, {"op": "load", "source": _WARM_SOURCE, "filename": "/warm.py", "key": key.hex(), "id": 1})
        blob = Blob()
        send_frame(
            ours,
            {
                "op": "call",
                "name": "f",
                "id": 2,
                "record": True,
                "return_inputs": True,
                "args": [encode_array(x, "float32", "cpu", blob)],
                "kwargs": {},
            },
            blob.bytes(),
        )
        blob = Blob()
        send_frame(
            ours,
            {
                "op": "new",
                "name": "M",
                "id": 3,
                "seed": 123,
                "module_dtype": "float64",
                "args": [3],
                "kwargs": {},
                "weights": {"W_query.weight": encode_array(w, "float64", "cpu", blob)},
            },
            blob.bytes(),
        )
        blob = Blob()
        send_frame(
            ours,
            {
                "op": "method",
                "handle": 1,
                "method": "__call__",
                "id": 4,
                "record": True,
                "args": [encode_array(x, "float64", "cpu", blob)],
                "kwargs": {},
                **(
                    {"grad": {"upstream": encode_array(np.ones((2, 4, 3)), "float64", "cpu", blob)}} if backward else {}
                ),
            },
            blob.bytes(),
        )
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
        _libc().prctl(option, value, 0, 0, 0)
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


def _holds_in_a_fork(check) -> bool:
    """Whether ``check()`` returns True in a throwaway fork (asked once, before any child: what it changes, a
    namespace or a seccomp filter, stays out of the zygote). An exception means no."""
    pid = os.fork()
    if pid == 0:
        try:
            ok = bool(check())
        except BaseException:  # noqa: BLE001 - any failure means: it does not hold
            ok = False
        _os_exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def _refused_a_program(prog) -> bool:
    """Installs the seccomp filter ``prog``; whether starting a program is then refused (ENOENT without it)."""
    seccomp.install(prog, _libc())
    try:
        os.execv("/nonexistent/autograder-probe", ["probe"])
    except PermissionError:
        return True
    return False


def _collapse_heap() -> None:
    """Back the warm zygote's large anonymous regions (torch's C++ heap and the Python heap, about 150 MB) with
    huge pages (MADV_COLLAPSE, Linux 6.1+; a no-op elsewhere): each fork then copies one page-table entry per
    2 MB instead of 512, and each child's exit unmaps as few. A child's write still copies only the 4 KB page it
    touches (the kernel splits a huge page on a copy-on-write fault)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        madvise = _libc().madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        with open("/proc/self/maps") as fh:
            lines = fh.read().splitlines()
    except (OSError, AttributeError):
        return
    huge = 1 << 21
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 5 or parts[1] != "rw-p" or (len(parts) == 6 and parts[5].strip() not in ("", "[heap]")):
            continue
        low, high = (int(x, 16) for x in parts[0].split("-"))
        start, end = (low + huge - 1) & ~(huge - 1), high & ~(huge - 1)
        if end - start >= huge:
            madvise(start, end - start, 25)  # MADV_COLLAPSE; a failure (old kernel, THP off) changes nothing


def zygote(control: socket.socket, pid_namespace: bool, base_tmp: str, uid: int | None = None) -> None:
    """Serve fork requests from the judge: a fresh child for every stage of every submission.

    The control socket is SOCK_SEQPACKET, so each JSON message is one packet; a fork request carries the
    child's RPC socket as an SCM_RIGHTS file descriptor. While a child runs, the zygote watches the memory
    of everything the child started (a whole-sandbox budget that per-process rlimits cannot give) and the
    entries of the sandbox's /tmp (``tmp_files`` of the order's limits: inodes are kernel memory that neither
    budget counts), and kills the lot when either is exceeded. After each child, every process the child left
    behind is killed and the sandbox's /tmp is emptied. ``uid``: the unprivileged uid each child becomes before learner code runs (the
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
    ipc = _holds_in_a_fork(_own_ipc_namespace)
    import torch

    accelerator = may_have_accelerator(torch)
    sandbox_filter = seccomp.program(accelerator)
    if sandbox_filter is None or not _holds_in_a_fork(lambda: _refused_a_program(sandbox_filter)):
        sandbox_filter = None
    _join_new_session_keyring()
    gc.collect()
    gc.freeze()  # the warm heap is never traversed by a child's collections: fewer copy-on-write faults
    gc.enable()
    me = os.getpid()
    base_kb = _held_kb()
    own_tmp = os.path.ismount(base_tmp)
    hello: Ready = {
        "op": "ready",
        "pid": me,
        "ipc": ipc,
        "seccomp": seccomp.refused(accelerator) if sandbox_filter is not None else [],
        "uid": uid,
        "zygote_uid": os.getuid(),
        "pid_namespace": pid_namespace,
    }
    control.send(dumps(hello).encode())
    counter = 0
    collapsed = False
    while True:
        # huge pages (about 0.3 s to make) pay for themselves over many children, not over the few of a learner's
        # check: made before the ninth child (a class run), or while nothing waits (watch, between saves)
        if not collapsed and (counter >= 8 or not select.select([control], [], [], 1.0)[0]):
            _collapse_heap()
            collapsed = True
            base_kb = _held_kb()  # what each child inherits, now in huge pages
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
        # /tmp's entries are counted only where it is the sandbox's own tmpfs (bubblewrap): at the reduced level
        # it is a folder of the host's file system, whose count other processes change
        max_entries = int(limits.get("tmp_files") or 0) if own_tmp else 0
        base_entries = _tmp_entries(base_tmp) if max_entries else 0
        pid = os.fork()
        if pid == 0:
            control.close()
            _child(rpc, req, workdir, uid, ipc, sandbox_filter)
        rpc.close()
        pidfd = os.pidfd_open(pid)

        def tree():
            return _processes(pid_namespace, uid, me)

        def everything(child=pid):  # the child and all it started, the zygote never among them
            return [p for p in tree() + [child] if p != me]

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
                    _kill_all(everything)
                    if not kmsg:
                        return
                continue
            if budget_mb > 64 and _memory_mb(tree(), base_kb) > budget_mb:
                over = "memory"
            elif max_entries and _tmp_entries(base_tmp) - base_entries > max_entries:
                over = "files"
            else:
                continue
            killed, why = True, over
            _kill_all(everything)
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
    parser.add_argument(
        "--uid",
        type=int,
        default=None,
        help="the unprivileged uid every child becomes before learner code runs (zygote: root)",
    )
    parser.add_argument("--tmp", default="/tmp")
    opts = parser.parse_args(argv)
    control = socket.socket(fileno=opts.control_fd)
    zygote(control, opts.pid_namespace, opts.tmp, opts.uid)
    _os_exit(0)  # at once: no interpreter teardown (torch's takes seconds), nothing left to flush


if __name__ == "__main__":
    main(sys.argv[1:])
