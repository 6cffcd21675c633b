"""The judge's side of the sandbox: start the warm worker under bubblewrap and talk to learner code.

What the sandbox covers. Each point is exercised by a case in ``tests/test_hostile.py`` (attackers graded by
the real runner next to honest students) or ``tests/test_sandbox.py``; ``SECURITY.md`` names the test for each.

- **A fresh process for every stage of every submission**, forked from a warm zygote that imported torch once.
  No child serves two stages or two submissions. A crash, an exit (``sys.exit``, ``os._exit``), a signal
  (segfault), an exhausted limit or a flood of output ends that child only: the stage's remaining checks get a
  new child (up to ``Limits.max_restarts``, then they are skipped). A timeout ends the stage: its remaining
  checks are skipped with a message, so a hang costs one timeout per stage. Other stages and other students get
  their own children and are graded as if nothing happened.
- **Learner code is never root.** When the judge is root, bubblewrap is started as root without a user
  namespace (a uid mapped in one that root makes is still root outside) and each forked child, before any
  learner code runs, unshares its own SysV IPC namespace, applies its rlimits, drops to the slot's own uid
  (``UID_BASE`` + slot: setgroups, setresgid, setresuid), sets no-new-privileges and clears every capability;
  the zygote keeps only the capabilities it needs for that (:data:`ZYGOTE_CAPS`). The interpreter may live in a
  folder the uid cannot enter (root's 0700 home, a 0700 temporary clone): inside the sandbox the folders above
  each mount point are made 0755; the host's folders are never changed. When the judge is not root, learner
  code runs under the judge's own uid (mapped by bubblewrap's user namespace), and a :class:`SandboxWarning`
  says so.
- **Nothing of the judge's is visible.** The sandbox's filesystem holds the Python runtime, its packages and a
  copy of ``worker.py``, all read-only: no repository, graders, oracles, solutions, results folder or other
  students' files (if the autograder package itself lies inside a mounted runtime folder, an empty tmpfs covers
  it). ``/tmp`` is a private tmpfs of ``Limits.tmp_mb``, emptied after every child, so nothing one student
  writes reaches the next; ``/`` and ``/dev`` are read-only. The learner's file arrives as a string and is
  executed from it (``python -I``, private working directory), so no planted ``conftest.py``,
  ``sitecustomize.py`` or ``torch.py`` is ever on an import path, and the judge's pytest ignores them too.
- **Own namespaces**: mount, PID, network (none at all), IPC and UTS for the sandbox, and a SysV IPC namespace
  per child (shared memory, message queues and semaphores of one student are not there for the next). The
  zygote is PID 1 of the sandbox's PID namespace and ignores every catchable signal it does not need (Python's
  SIGINT handler would otherwise raise in it); as root, the children run under another uid and cannot signal
  it at all. Children get default signal handlers back. It is not dumpable, so children cannot ptrace it or open
  its memory or descriptors. If the zygote is lost anyway, the stage fails cleanly and the next fork starts a
  new one.
- **No survivors.** After each child the zygote kills every other process in the namespace (double-forked,
  ``setsid`` daemons included) and collects them before the next child starts; when the judge closes the
  sandbox or dies, bubblewrap (``--die-with-parent``) takes the whole namespace down, and a root judge finally
  kills whatever still runs under the sandbox's uid.
- **Limits.** Per process: ``RLIMIT_AS`` (``Limits.memory_mb`` beyond what the warm zygote maps),
  ``RLIMIT_CPU``, ``RLIMIT_FSIZE`` (largest file; prints included: stdout and stderr go to a capped file in the
  child's private directory), ``RLIMIT_NOFILE``, and ``RLIMIT_NPROC`` (``Limits.nproc`` processes and threads
  of the child's uid: it binds only an uid of the sandbox's own, i.e. with a root judge). Per call: a wall-clock
  timeout (the import included), after which the child and everything it started are killed. For the whole
  sandbox: the zygote sums the private memory of every process the child started, ten times a second, and kills
  them all beyond ~1.25 x ``memory_mb``, so a fork bomb that allocates cannot multiply the per-process limit.
- **What the zygote reads from a child's folder** (its output file) is opened without following links, without
  blocking, only when it is a regular file, and read with a bound (:func:`autograder.worker.read_tail`).
- **Only data comes back.** Replies are JSON plus raw array bytes (never pickle), checked against a whitelist of
  dtypes and shapes. Each reply is signed (HMAC) with a key the worker received before the learner's module
  ran, so bytes that learner code writes into the socket are rejected; frames are bounded in size and time, so
  garbage, huge or trickled frames, or a closed socket, cost only that stage. Tensor subclasses are unwrapped
  with C-level methods captured before learner code ran, so an overridden ``detach``, ``cpu``, ``numpy`` or
  ``tolist`` cannot lie. The verdict is made here, from values computed here: there are no expected values
  inside the sandbox to find, and patching torch, numpy, pytest or builtins there changes nothing the judge
  decides.
- **The isolation in force is recorded** per sandbox (:attr:`Sandbox.info`, field by field, and
  :attr:`Sandbox.isolation`, in words): it reaches every result (``results.json``'s ``extra_data``,
  ``report.html``, feedback pages), and every loss is a :class:`SandboxWarning`.

- **Verdict evidence** (``record=``, the "written by hand" and "vectorised" verdicts): nothing the child says
  about how it computed is believed. The child traces the call (the ATen ops it calls, at the dispatcher's
  PreDispatch key: :func:`autograder.worker.capture_graph`) and sends the
  graph as plain data; the judge (:mod:`autograder.evidence`) names the fused attention ops in it, counts its
  operations, and replays it with its own torch (allowed pure-math ops only, shapes bounded on the meta device
  first): on the inputs it sent, where the replay must give the learner's own answer, and on fresh inputs the
  child never sees, where it must give the grader's reference (when the learner's answer was right). Work that
  escapes the trace and graphs forged by learner code fail as unverifiable. ``SECURITY.md`` says what holds.

What it does not cover:

- ``F.multi_head_attention_forward`` (nn.MultiheadAttention's slow path) decomposes into ordinary ops; the
  worker wraps it so that it leaves a marked node in a trace, which code reaching the original (the wrapper's
  closure) avoids; that, like copying torch's own Python code, is a plagiarism question, not a sandbox one.
- CPU time and memory within the limits; timing side channels; kernel exploits (no seccomp filter is
  installed; with a root judge no ``--disable-userns`` either, so learner code may create user namespaces where
  the host allows unprivileged ones); the GPU driver (``/dev/nvidia*`` is passed through when present, and the
  data segment is then limited instead of the address space, which CUDA's reservations would exhaust: this path
  is not exercised by the tests on CPU-only machines).
- **Without bubblewrap** (macOS, Windows, containers that forbid namespaces, such as some Gradescope images)
  the worker is a plain subprocess, grading still happens, and a loud ``SandboxWarning`` and the recorded
  isolation (level ``reduced``) say so. What remains: a fresh child per stage, a root judge's children under
  their own uid (and their own IPC namespace), the rlimits (``RLIMIT_NPROC``, without a uid of the sandbox's
  own, then counts all of the user's processes, so it is set relative to their number), timeouts, the memory
  budget, signed array-only replies, and cleanup of everything the child started (the zygote is a child
  subreaper, so daemons are found). What is lost: the filesystem view (learner code reads whatever its uid may
  read, and can import only modules the zygote loaded or that its uid can reach; the Gradescope runner closes
  its own source and submission folders to that uid first), the network, and the PID namespace; without a uid
  of its own, a child can signal the zygote and every process of the judge's user.
- Notebooks (:class:`LocalStudent`) run learner code in the kernel itself: no isolation at all.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
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
UID_BASE = 60000  # sandbox uids (when the judge is root): UID_BASE + slot


class SandboxWarning(UserWarning):
    pass


@dataclass
class Limits:
    call_timeout: float = 10.0  # wall-clock seconds for one call into learner code (the import included)
    memory_mb: int = 2048  # address space on top of what the warm worker maps; ~1.25x for the whole sandbox
    cpu_s: int = 60  # CPU seconds for one child
    file_mb: int = 8  # largest file the learner may write (prints included)
    nproc: int = 64  # processes and threads of the sandbox's uid
    max_restarts: int = 2  # fresh children after a crash within one stage (never after a timeout)
    tmp_mb: int = 256  # size of the sandbox's private /tmp (a tmpfs, in memory)

    def for_child(self) -> dict:
        return {"memory_mb": self.memory_mb, "cpu_s": self.cpu_s, "file_mb": self.file_mb, "nproc": self.nproc,
                "cuda": bool(_nvidia_devices())}


def _count_uid_processes(uid: int) -> int:
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                n += os.stat(f"/proc/{name}").st_uid == uid
            except OSError:
                pass
    return n


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


class ProtocolViolation(ValueError):
    """A reply that the worker's own code cannot have sent (forged, truncated, inconsistent)."""


# ───────────────────────────── values sent back by the learner ─────────────────────────────


@dataclass
class Out:
    """A tensor that came back from learner code: its values (CPU), and where/what it was."""

    t: "object"  # torch.Tensor on CPU, in the dtype the learner returned (float16/bfloat16 restored)
    dtype: str
    device: str
    asked: str | None = None  # the dtype the call asked for (its inputs' or its dtype= argument): the tolerance's

    @property
    def shape(self) -> tuple:
        return tuple(self.t.shape)


@dataclass
class Opaque:
    """Something that is not a tensor, number, string or container (a module, a generator...)."""

    description: str


def _decode_reply_value(value, blob: bytes, depth: int = 0):
    """Records from the child → values. Everything is checked: the child runs untrusted code."""
    kind = type(value)
    if (kind is str or kind is int or kind is float or kind is bool or value is None) and depth <= 12:
        return value  # the common case first (names, shapes, flags in describe() replies)
    import torch

    if depth > 12:
        raise ProtocolViolation("reply nested too deeply")
    if isinstance(value, dict):
        if "__nd__" in value:
            array = wire.decode_array(value, blob)
            t = torch.from_numpy(array.copy())
            if value["dtype"] in ("bfloat16", "float16"):
                t = t.to(getattr(torch, value["dtype"]))
            device = value.get("device", "cpu")
            return Out(t, value["dtype"], device[:40])
        if "__tuple__" in value:
            items = value["__tuple__"]
            if not isinstance(items, list):
                raise ProtocolViolation("bad tuple record")
            return tuple(_decode_reply_value(v, blob, depth + 1) for v in items)
        if "__repr__" in value:
            return Opaque(str(value["__repr__"])[:200])
        if "__dtype__" in value:
            dtype = getattr(torch, str(value["__dtype__"]), None)
            if not isinstance(dtype, torch.dtype):
                raise ProtocolViolation("bad dtype record")
            return dtype
        return {str(k): _decode_reply_value(v, blob, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_reply_value(v, blob, depth + 1) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ProtocolViolation(f"unexpected value of type {type(value).__name__}")


def _check_reply(reply: dict) -> dict:
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
        reply["error"] = {"type": str(err.get("type", "Error"))[:100], "message": str(err.get("message", ""))[:2000],
                          "where": None if where is None else {"line": where.get("line"),
                                                               "function": str(where.get("function", ""))[:100],
                                                               "code": str(where.get("code", ""))[:200]}}
        return reply
    reply.pop("record", None)  # the record is the judge's to make (autograder.evidence), never the child's
    changed = reply.get("inputs_changed")
    if changed is not None and not (isinstance(changed, list) and all(isinstance(c, bool) for c in changed)):
        raise ProtocolViolation("bad inputs_changed")
    names = reply.get("names")
    if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise ProtocolViolation("bad names")
    grads = reply.get("grads")
    if grads is not None and not isinstance(grads, dict):
        raise ProtocolViolation("bad grads")
    return reply


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
        rec = wire.encode_array((t if t.is_contiguous() else t.contiguous()).numpy(),
                                str(target).replace("torch.", ""), device, blob)
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


_NVIDIA: list[str] | None = None


def _nvidia_devices() -> list[str]:
    global _NVIDIA
    if _NVIDIA is None:
        _NVIDIA = [str(d) for d in sorted(Path("/dev").glob("nvidia*"))]
    return _NVIDIA


def _hidden_paths(bound: list[str]) -> list[str]:
    """Directories of the judge's own code (graders, oracles, solutions) that happen to lie inside a bound
    runtime path, e.g. the autograder installed into the venv's site-packages: an empty tmpfs covers them."""
    package = Path(__file__).resolve().parent
    candidates = [package, package.parent / "solutions"]
    hidden = []
    for c in candidates:
        for b in bound:
            try:
                c.relative_to(Path(b).resolve())
            except ValueError:
                continue
            if c.exists():
                hidden.append(str(c))
            break
    return hidden


def _runtime_paths() -> list[str]:
    """Directories the worker needs: the interpreter's prefix, the venv, and where torch/numpy live (found
    without importing them: a sandbox may be launched before this process imports torch)."""
    from importlib.util import find_spec

    paths = {sys.base_prefix, sys.prefix}
    for name in ("torch", "numpy"):
        spec = find_spec(name)
        if spec is not None and spec.origin:
            paths.add(str(Path(spec.origin).parent.parent))
    real = {str(Path(p).resolve()) for p in paths}
    return sorted(p for p in paths | real if p and not p.startswith("/usr/") and p != "/usr" and os.path.isdir(p))


# what a root zygote keeps (inside the sandbox, never in a child): make each child's directory and IPC namespace,
# then change the child's uid; kill and clean up after the child (whose files and processes are another uid's)
ZYGOTE_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SYS_ADMIN", "CAP_KILL", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER")


def _parents(paths: list[str]) -> list[str]:
    """Every proper ancestor of ``paths`` (below ``/``), parents first, once each."""
    found: dict[str, None] = {}
    for path in paths:
        parts = Path(path).parts[1:-1]
        for i in range(1, len(parts) + 1):
            found["/" + "/".join(parts[:i])] = None
    return list(found)


def bwrap_command(bwrap: str, control_fd: int, python: str, tmp_mb: int = 256,
                  worker: str | Path = WORKER_FILE, uid: int | None = None) -> list[str]:
    """The bubblewrap command line for the worker (a pure function, so tests can read it).

    ``uid`` (a root judge): bubblewrap is started as real root WITHOUT a user namespace (root may create the
    mount, PID, network, IPC and UTS namespaces itself), the zygote keeps only :data:`ZYGOTE_CAPS`, and every
    child becomes ``uid`` before learner code runs, a uid that is then the child's outside the sandbox too, so
    RLIMIT_NPROC holds. (In a user namespace made by root, "uid N" inside is still root outside.) Without
    ``uid`` (a judge that is not root), a user namespace maps the judge's uid, which the children keep."""
    if uid is None:
        cmd = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    else:
        cmd = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--cap-drop", "ALL"]
        for cap in ZYGOTE_CAPS:
            cmd += ["--cap-add", cap]
    cmd += ["--die-with-parent", "--new-session", "--as-pid-1", "--hostname", "sandbox", "--clearenv",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "OMP_NUM_THREADS", "1", "--setenv", "MKL_NUM_THREADS", "1",
            "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
            "--perms", "1777", "--size", str(int(tmp_mb) * 1024 * 1024), "--tmpfs", "/tmp",
            "--ro-bind", "/usr", "/usr"]
    for top in ("/lib", "/lib64", "/bin", "/sbin", "/lib32"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    bound = _runtime_paths()
    # the folders above each mount point are made here, open to every uid (0755), whatever the host's are (an
    # interpreter in root's 0700 home, a clone in a 0700 temporary folder): the host's are never changed
    for parent in _parents(bound + [SANDBOX_WORKER, "/etc/ld.so.cache"]):
        if parent not in ("/usr", "/tmp") and not parent.startswith("/usr/"):
            cmd += ["--perms", "0755", "--dir", parent]
    if os.path.exists("/etc/ld.so.cache"):
        cmd += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for path in bound:
        cmd += ["--ro-bind", path, path]
    for path in _hidden_paths(bound + ["/usr"]):
        cmd += ["--tmpfs", path, "--remount-ro", path]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    for dev in _nvidia_devices():  # CUDA devices, when the machine has them
        cmd += ["--dev-bind", dev, dev]
    cmd += ["--ro-bind", str(worker), SANDBOX_WORKER, "--remount-ro", "/dev", "--remount-ro", "/",
            "--chdir", "/tmp", "--",
            python, "-I", SANDBOX_WORKER, "--control-fd", str(control_fd), "--pid-namespace", "--tmp", "/tmp"]
    if uid is not None:
        cmd += ["--uid", str(uid)]
    return cmd


_SLOTS_TAKEN: set[int] = set()
_SLOTS_LOCK = threading.Lock()


def _uid_in_use(uid: int) -> bool:
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    return True
            except OSError:
                pass
    return False


def _free_slot() -> int:
    """A slot (hence a uid, when root) no other sandbox of this process uses and no live process holds."""
    start = (os.getpid() * 7) % 3000 + 1000  # grade.py hands out slots below 4000 itself
    with _SLOTS_LOCK:
        for i in range(3000):
            slot = 1000 + (start - 1000 + i) % 3000
            if slot in _SLOTS_TAKEN:
                continue
            if os.geteuid() == 0 and sys.platform.startswith("linux") and _uid_in_use(UID_BASE + slot):
                continue
            _SLOTS_TAKEN.add(slot)
            return slot
    return start


def _kill_uid(uid: int, patience: float = 10.0) -> None:
    """Kill every process of ``uid`` (only ever a sandbox's dedicated uid, from a root judge) and wait until
    none is alive."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        found = False
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    if os.stat(f"/proc/{name}").st_uid != uid or not wire._alive(int(name)):
                        continue
                    os.kill(int(name), signal.SIGKILL)
                    found = True
                except OSError:
                    pass
        if not found:
            return
        time.sleep(0.02)


class _Adopted:
    """The part of ``subprocess.Popen`` a :class:`Sandbox` uses, for a worker that another process started (and
    will collect): watched through a pidfd, which becomes readable when the process ends. Its exit status
    belongs to its parent, so an ended worker reports -1."""

    def __init__(self, pid: int, stderr):
        self.pid, self.stderr, self.returncode = pid, stderr, None
        try:
            self._fd = os.pidfd_open(pid)
        except OSError:  # already gone (and collected)
            self._fd, self.returncode = None, -1

    def _ended(self, timeout: float | None) -> bool:
        import select

        if self.returncode is None and select.select([self._fd], [], [], timeout)[0]:
            self.returncode = -1
            os.close(self._fd)
            self._fd = None
        return self.returncode is not None

    def poll(self):
        self._ended(0)
        return self.returncode

    def wait(self, timeout: float | None = None):
        if not self._ended(timeout):
            raise subprocess.TimeoutExpired("worker", timeout)
        return self.returncode


class Sandbox:
    """A warm worker process (inside bubblewrap when available) that forks a fresh child for every stage of every
    submission.

    One child runs at a time: a stage's proxy must be closed before the next one calls in (the runner works
    that way). A lost zygote (killed, crashed) is replaced on the next fork."""

    def __init__(self, limits: Limits | None = None, slot: int | None = None):
        self.limits = limits or Limits()
        self.slot = slot if slot is not None else _free_slot()
        self.proc: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.isolation = ""  # what holds, in words (results.json, report.html, feedback)
        self.info: dict = {}  # the same, field by field (see _describe)
        self.kind = ""
        self.uid: int | None = None  # the children's uid, when it is one of their own (a root judge)
        self.tmp: str | None = None
        self.active = False  # a child is running (forked, its end not yet reported)
        self.forks = 0  # children forked
        self.starts = 0
        self._launched = False  # started by launch(), not yet known to be ready
        self._lock = threading.RLock()

    # -- life cycle ---------------------------------------------------------------------------------------
    def _attempts(self) -> tuple[list, str | None]:
        bwrap = _bwrap()
        root = os.geteuid() == 0 and sys.platform.startswith("linux")
        uid = UID_BASE + self.slot if root else None  # as root, learner code never runs as root
        attempts = [("bwrap", uid)] if bwrap else []
        attempts.append(("plain", uid))
        return attempts, bwrap

    def launch(self) -> "Sandbox":
        """Start the worker process and return at once, before it is ready (it imports torch for about a
        second): :meth:`start` waits for it, in this process or in one forked from it after :meth:`hand_over`.
        A worker that fails here is started again, the usual way, by :meth:`start`."""
        with self._lock:
            attempts, bwrap = self._attempts()
            kind, uid = attempts[0]
            try:
                self._spawn(kind, uid, bwrap)
                self._launched = True
            except (OSError, RuntimeError, ValueError):
                self.close()
            return self

    def start(self) -> "Sandbox":
        with self._lock:
            if self._launched:  # started by launch(): wait for it
                self._launched = False
                try:
                    self._await_ready()
                    return self._started([])
                except (OSError, RuntimeError, EOFError, ValueError):
                    self.close()
            if self.proc is not None and self.proc.poll() is None:
                return self
            attempts, bwrap = self._attempts()
            errors = []
            for kind, uid in attempts:
                try:
                    self._launch(kind, uid, bwrap)
                    break
                except (OSError, RuntimeError, EOFError, ValueError) as exc:
                    errors.append(f"{kind}{'/uid ' + str(uid) if uid else ''}: {exc}")
                    self.close()
            else:
                raise RuntimeError("could not start the grading worker: " + "; ".join(errors))
            return self._started(errors)

    def _started(self, errors: list[str]) -> "Sandbox":
        self.starts += 1
        if errors:
            self.info["bubblewrap_error"] = "; ".join(errors)[:500]
            self.isolation += " (bubblewrap failed: " + self.info["bubblewrap_error"] + ")"
        for text in self.info.get("lost", []):
            warnings.warn(text, SandboxWarning, stacklevel=3)
        return self

    def hand_over(self, keep: bool) -> None:
        """After a fork that shares this not-yet-ready sandbox between processes: in the one that keeps it
        (``keep``), its worker, no child of this process, is watched through a pidfd from now on; in every
        other, only the descriptors are closed (no "quit": the worker is not theirs to stop, and the worker
        notices its judge's end by its control socket closing, which needs every copy closed)."""
        with self._lock:
            if keep:
                if self.proc is not None:
                    self.proc = _Adopted(self.proc.pid, self.proc.stderr)
                return
            for fh in (self.control, self.proc.stderr if self.proc is not None else None):
                if fh is not None:
                    try:
                        fh.close()
                    except OSError:
                        pass
            self.control, self.proc, self.tmp, self._launched = None, None, None, False

    def _launch(self, kind: str, uid: int | None, bwrap: str | None) -> None:
        self._spawn(kind, uid, bwrap)
        self._await_ready()

    def _spawn(self, kind: str, uid: int | None, bwrap: str | None) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = child.fileno()
        env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HOME": "/tmp",
               "PYTHONDONTWRITEBYTECODE": "1"}
        self.kind, self.uid = kind, uid
        import tempfile

        # the worker runs from a copy in a folder of its own (made here, so its mode is ours to choose), so the
        # judge's code can stay closed to the sandbox
        self.tmp = tempfile.mkdtemp(prefix="autograder-")
        worker = os.path.join(self.tmp, "worker.py")
        shutil.copyfile(WORKER_FILE, worker)
        os.chmod(worker, 0o444)
        if kind == "bwrap":
            cmd = bwrap_command(bwrap, fd, sys.executable, self.limits.tmp_mb, worker, uid=uid)
        else:
            work = os.path.join(self.tmp, "tmp")
            os.mkdir(work, 0o700)
            if uid is not None:  # the children's uid must reach their folders below it
                os.chmod(self.tmp, 0o711)
                os.chown(work, uid, uid)
            cmd = [sys.executable, "-I", worker, "--control-fd", str(fd), "--tmp", work]
            if uid is not None:
                cmd += ["--uid", str(uid)]
            env["TMPDIR"] = work
        # the zygote starts with the judge's own uid (root: then each child drops to ``uid`` itself)
        self.proc = subprocess.Popen(cmd, pass_fds=(fd,), env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=None if os.environ.get("AUTOGRADER_DEBUG") else subprocess.PIPE,
                                     start_new_session=True)
        child.close()
        self.control = parent

    def _await_ready(self) -> None:
        parent = self.control
        parent.settimeout(120)
        try:
            msg = parent.recv(1 << 16)
        except socket.timeout as exc:
            raise RuntimeError("the worker did not start within 120 s") from exc
        if not msg:
            err = self.proc.stderr.read().decode(errors="replace")[-800:] if self.proc.stderr else ""
            self.proc.wait(timeout=5)
            raise RuntimeError(f"the worker exited at start: {err.strip() or self.proc.returncode}")
        ready = wire.loads(msg)
        if ready.get("op") != "ready":
            raise RuntimeError("the worker did not say it was ready")
        if self.uid is not None and (ready.get("uid") != self.uid or ready.get("zygote_uid") != 0):
            raise RuntimeError("the worker would not run learner code under the sandbox's own uid")
        self.info, self.isolation = _describe(self.kind, self.uid, ready)
        parent.settimeout(None)
        self.active = False
        if self.proc.stderr is not None:
            threading.Thread(target=_drain, args=(self.proc.stderr,), daemon=True).start()

    def close(self, patience: float = 2.0) -> None:
        """Stop the worker: asked to quit, killed after ``patience`` seconds (0: at once, for one that was
        launched and is no longer wanted, still importing torch)."""
        with self._lock:
            if self.control is not None:
                try:
                    self.control.send(wire.dumps({"op": "quit"}).encode())
                except OSError:
                    pass
                self.control.close()
                self.control = None
            if self.proc is not None:
                if self.proc.stderr is not None and self.proc.poll() is not None:
                    self.proc.stderr.close()
                try:
                    self.proc.wait(timeout=patience)  # with 0: TimeoutExpired at once unless it has ended
                except subprocess.TimeoutExpired:
                    try:
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
                    self.proc.wait()
                self.proc = None
            if self.uid is not None:
                # the dedicated uid finds whatever is left: all of it without a PID namespace, and under
                # bubblewrap whatever the kernel has not finished tearing down yet
                _kill_uid(self.uid)
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None
            self.active = False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # -- children -----------------------------------------------------------------------------------------
    def fork_child(self) -> socket.socket:
        """A fresh child process for one stage of one submission; returns the judge's end of its RPC socket."""
        with self._lock:
            if self.active:
                raise RuntimeError("the sandbox runs one child at a time: close the previous StudentProxy first")
            if self.proc is None or self.proc.poll() is not None:
                self.close()
                self.start()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            limits = self.limits.for_child()
            if self.kind == "plain" and self.uid is None and limits.get("nproc"):
                # no user namespace and no uid of its own: RLIMIT_NPROC counts all of this user's processes
                limits["nproc"] = _count_uid_processes(os.getuid()) + limits["nproc"]
            msg = wire.dumps({"op": "fork", "limits": limits}).encode()
            try:
                socket.send_fds(self.control, [msg], [theirs.fileno()])
            except OSError:
                self.close()
                self.start()
                socket.send_fds(self.control, [msg], [theirs.fileno()])
            theirs.close()
            self.active = True
            self.forks += 1
            return ours

    def end_child(self, kill: bool, grace: float = 2.0) -> dict:
        """Wait for the zygote to report the child's end, killing it first when asked (or when it has not
        ended ``grace`` seconds after a goodbye). A zygote that does not answer is replaced."""
        with self._lock:
            if self.control is None or not self.active:
                self.active = False
                return {"op": "exited", "lost": True}
            msg = b""
            try:
                if kill:
                    self.control.send(wire.dumps({"op": "kill"}).encode())
                self.control.settimeout(grace if not kill else 30)
                try:
                    msg = self.control.recv(1 << 16)
                except socket.timeout:
                    if kill:
                        raise
                    self.control.send(wire.dumps({"op": "kill"}).encode())
                    self.control.settimeout(30)
                    msg = self.control.recv(1 << 16)
                self.control.settimeout(None)
            except OSError:
                msg = b""
            self.active = False
            try:
                info = wire.loads(msg) if msg else None
            except ValueError:
                info = None
            if not isinstance(info, dict):
                self.close()
                return {"op": "exited", "lost": True}
            return info

    def open(self, source: str, filename: str) -> "StudentProxy":
        """A proxy for one learner file (one stage of one submission): a fresh child of its own."""
        return StudentProxy(self, source, filename)


def _describe(kind: str, uid: int | None, ready: dict) -> tuple[dict, str]:
    """What isolation holds for this sandbox, field by field and in words; ``lost`` lists what is less than the
    full sandbox, each said loudly (a :class:`SandboxWarning`, the notes of results.json)."""
    bubblewrap = kind == "bwrap"
    judge_uid = os.getuid()
    child_uid = uid if uid is not None else judge_uid
    namespaces = ["mount", "pid", "network", "ipc", "uts"] if bubblewrap else []
    if bubblewrap and uid is None:
        namespaces.insert(0, "user")
    info = {"level": "bubblewrap" if bubblewrap else "reduced", "bubblewrap": bubblewrap,
            "learner_uid": child_uid, "own_uid": uid is not None, "judge_is_root": judge_uid == 0,
            "namespaces": namespaces, "ipc_namespace_per_process": bool(ready.get("ipc")),
            "fresh_process_per_stage": True, "lost": []}
    who = (f"learner code runs under its own uid {uid}, not root" if uid is not None
           else f"learner code runs under the judge's own uid {judge_uid} (no uid of its own: the judge is not root)")
    ipc = ("a SysV IPC namespace per process" if ready.get("ipc")
           else "SysV IPC objects shared between this sandbox's processes")
    if bubblewrap:
        text = (f"bubblewrap: own {', '.join(namespaces)} namespaces; {who}; {ipc}; "
                "a fresh process for every stage")
    else:
        text = (f"REDUCED, no bubblewrap: a plain subprocess with rlimits, no filesystem, network or PID "
                f"isolation; {who}; {ipc}; a fresh process for every stage")
        info["lost"].append(
            "bubblewrap is not available: learner code runs in a plain subprocess with rlimits only (no "
            "filesystem, network or PID isolation" + (f"; it runs under uid {uid}, not root" if uid is not None
                                                       else "") + "). Install bubblewrap before grading untrusted code.")
    if uid is None:
        info["lost"].append(
            f"the judge is not root, so learner code runs under the judge's own uid {judge_uid}"
            + (" (mapped inside bubblewrap's user namespace)" if bubblewrap
               else ": it can read whatever this user can read and signal every process of this user"))
    if not ready.get("ipc"):
        info["lost"].append("each child cannot have a SysV IPC namespace of its own here: shared memory and "
                            "message queues are shared between the children of one sandbox")
    return info, text


def _drain(stream) -> None:
    try:
        while stream.read(65536):
            pass
    except (OSError, ValueError):
        pass
    try:
        stream.close()
    except OSError:
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
    key: bytes | None = None
    memo: dict = field(default_factory=dict)  # what this stage's checks share (one output examined by two checks)
    timed_out: str | None = None  # the timeout's message, once a call ran out of time: the stage is over

    # -- connection ---------------------------------------------------------------------------------------
    def _ensure(self) -> None:
        if self.sock is not None:
            return
        if self.timed_out is not None:
            # a hang costs one timeout per stage: the next check would most likely hang again
            raise StudentTimeout("skipped: an earlier check of this stage did not finish in time ("
                                 + self.timed_out + "); the remaining checks were not run")
        if self.restarts > self.sandbox.limits.max_restarts:
            raise StudentCrashed("skipped: this stage's code already crashed or hung "
                                 f"{self.restarts} times; the remaining checks were not run")
        self.sock = self.sandbox.fork_child()
        self.key = secrets.token_bytes(32)
        # the key travels in the load request, read by the worker before the learner's module exists
        reply, _ = self._roundtrip({"op": "load", "source": self.source, "filename": self.filename,
                                    "key": self.key.hex()}, b"")
        if not reply.get("ok"):
            self.load_error = reply.get("error")
        else:
            self.names = reply.get("names") or []

    def _roundtrip(self, req: dict, blob: bytes) -> tuple[dict, bytes]:
        timeout = self.sandbox.limits.call_timeout
        rid = secrets.randbits(62)
        req = dict(req, id=rid)
        started = time.monotonic()
        try:
            self.sock.settimeout(timeout)
            wire.send_frame(self.sock, req, blob)
            reply, out = wire.recv_frame(self.sock, deadline=started + timeout, json_limit=wire.REPLY_JSON_LIMIT,
                                         key=self.key, reply=True)
            if reply.get("id") != rid:
                raise ProtocolViolation("the reply answers another request")
            return _check_reply(reply), out
        except socket.timeout:
            self._drop(kill=True)
            self.timed_out = f"{timeout:g} s"
            raise StudentTimeout(f"your code did not finish within {timeout:g} s (an endless loop, or a "
                                 "Python loop over a large tensor?)") from None
        except (ProtocolViolation, wire.ForgedFrame) as exc:
            self._drop(kill=True)
            raise StudentCrashed("your code's process sent back something that is not a valid answer "
                                 f"({exc}): the grading channel is not for your code to write to") from None
        except (EOFError, OSError, ValueError, RecursionError, UnicodeDecodeError) as exc:
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
        """End this stage's child (a later stage, or submission, gets a fresh one)."""
        if self.sock is not None:
            try:
                self.sock.settimeout(1.0)
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
            raise learner_error(reply.get("error") or {})
        try:
            reply["value"] = _decode_reply_value(reply.get("value"), out)
            if reply.get("grads"):
                reply["grads"] = {str(k): _decode_reply_value(v, out) for k, v in reply["grads"].items()}
            if "graph" in reply:
                reply["graph_blob"] = out  # the graph's constants (read by autograder.evidence)
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            self._drop(kill=True)
            raise StudentCrashed("your code's process sent back something that is not a valid answer "
                                 f"({exc})") from None
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
            elif key == "weights" and value is not None:
                req["weights"] = encode_args(dict(value), blob, device="cpu", dtype=None, noncontig=False,
                                             requires_grad=False)
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
                               grad_inputs=grad_inputs, name=name, record=bool(record) or None,
                               return_inputs=return_inputs or None, upstream=upstream, seed=seed)
        reply = self.request(req, blob)
        _mark_asked(reply.get("value"), asked_dtype(args, kwargs, cast))
        if record:
            def again(fresh_args, fresh_kwargs):
                req, blob = self._pack("call", fresh_args, fresh_kwargs, to=to, cast=cast, noncontig=noncontig,
                                       name=name, seed=seed)
                return self.request(req, blob)["value"]

            reply["record"] = recorded(reply, args, kwargs, cast, again, record)
        return reply if full else reply["value"]

    def new(self, cls: str, *args, seed=None, module_dtype=None, weights=None, **kwargs) -> "ModuleHandle":
        """Construct ``cls(*args, **kwargs)`` in the learner's file (after ``torch.manual_seed(seed)``).

        ``module_dtype`` and ``weights`` save the round trips a grader would make next, in one request:
        ``.to(dtype=module_dtype)`` (its error is raised here, as that call would raise it), then the state
        read and the weights loaded as :func:`autograder.graders.attention.load_weights` does; that function
        still checks names and shapes and raises a load error, so verdicts and messages do not change."""
        extra = {"module_dtype": str(module_dtype).replace("torch.", "") if module_dtype is not None else None}
        req, blob = self._pack("new", args, kwargs, name=cls, seed=seed, weights=weights, **extra)
        reply = self.request(req, blob)
        info = reply["value"]
        if not isinstance(info, dict) or "handle" not in info:
            raise StudentCodeError({"type": "TypeError", "message": f"{cls}(...) did not construct an object"})
        handle = ModuleHandle(self, info["handle"], info)
        if weights is not None and isinstance(reply.get("prepared"), dict):
            handle.prepared, handle.prepared_for = reply["prepared"], weights
        return handle

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

    def _drop(self, kill: bool) -> dict:
        return {}

    def close(self) -> None:
        return None


@dataclass
class ModuleHandle:
    proxy: StudentProxy
    handle: int
    info: dict
    prepared: dict | None = None  # what ``new(..., weights=w)`` did with ``w`` (state shapes, load error)
    prepared_for: dict | None = None  # that ``w``

    def __call__(self, *args, to="cpu", cast=None, noncontig=False, record=False, return_inputs=False,
                 upstream=None, seed=None, full=False, **kwargs):
        req, blob = self.proxy._pack("method", args, kwargs, to=to, cast=cast, noncontig=noncontig,
                                     handle=self.handle, method="__call__", record=bool(record) or None,
                                     return_inputs=return_inputs or None, upstream=upstream, seed=seed)
        reply = self.proxy.request(req, blob)
        _mark_asked(reply.get("value"), asked_dtype(args, kwargs, cast))
        if record:
            def again(fresh_args, fresh_kwargs):
                req, blob = self.proxy._pack("method", fresh_args, fresh_kwargs, to=to, cast=cast,
                                             noncontig=noncontig, handle=self.handle, method="__call__", seed=seed)
                return self.proxy.request(req, blob)["value"]

            reply["record"] = recorded(reply, args, kwargs, cast, again, record)
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


def recorded(reply: dict, args, kwargs, cast, again, record) -> dict:
    """The record of a call made with ``record=``, decided here from the graph the child traced
    (:func:`autograder.evidence.verify`): ``{"n_ops": int | None, "forbidden": [...]}``. ``args``/``kwargs``: the
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

    return evidence.verify(reply, reply.pop("graph_blob", b""), inputs, dtype, fresh_call, reference, reference_args)


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


def learner_error(err: dict) -> StudentFailure:
    """The exception for a learner error the worker reported (a reply's ``error``, or one returned inside a
    reply, as ``new(..., weights=)`` returns a load error)."""
    if err.get("type") == "NotImplementedError":
        return NotImplementedYet(err.get("message") or "not implemented yet")
    if err.get("type") == "MissingName":
        return MissingName(err)
    return StudentCodeError(err)


def _load_failure(error: dict) -> StudentFailure:
    if error.get("type") == "NotImplementedError":
        return learner_error(error)
    exc = StudentCodeError(error)
    exc.args = ("your file could not be imported: " + str(exc).removeprefix("your code raised "),)
    return exc


def _describe_exit(info: dict, elapsed: float, exc: BaseException) -> str:
    import signal as _signal

    if info.get("lost"):
        return "the grading worker was lost while running your code"
    if info.get("reason") == "memory":
        return ("your code's process was killed: together with the processes it started it used more memory "
                "than allowed")
    if isinstance(exc, EOFError) and info.get("killed") and info.get("signal") == 9:
        return "your code's process closed its connection to the grader (and was stopped)"
    if "signal" in info:
        sig = info["signal"]
        name = _signal.Signals(sig).name if sig in _signal.Signals._value2member_map_ else str(sig)
        why = {"SIGSEGV": "a segmentation fault", "SIGKILL": "it was killed (memory or time limit?)",
               "SIGXCPU": "it used up its CPU time", "SIGABRT": "it aborted"}.get(name, name)
        return f"your code's process died: {why}"
    if "code" in info:
        return f"your code ended its process (exit code {info['code']}): don't call sys.exit/os._exit in a stage"
    return f"your code's process stopped answering ({exc})"
