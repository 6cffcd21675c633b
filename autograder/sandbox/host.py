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
  copy of the :mod:`autograder.runtime` package, all read-only: no repository, graders, oracles, solutions, results folder or other
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
  timeout (the import included), after which the child and everything it started are killed; per stage, a
  wall-clock budget for all its calls together (``Limits.stage_budget``, three call timeouts unless set), so that
  calls that each end just before their timeout still cost one stage at most that. For the whole
  sandbox: the zygote sums the private memory of every process the child started, ten times a second, and kills
  them all beyond ~1.25 x ``memory_mb``, so a fork bomb that allocates cannot multiply the per-process limit.
- **What the zygote reads from a child's folder** (its output file) is opened without following links, without
  blocking, only when it is a regular file, and read with a bound (:func:`autograder.runtime.zygote.read_tail`).
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

- **A seccomp filter** in every child, before any learner code: no program can be started (a fresh interpreter
  would have none of the stage's guards), no memory held that no process maps (SysV IPC, socket and pipe
  buffers, and a memfd; except where torch is built for an accelerator, whose driver needs a memfd: memfds,
  sockets and pipes are then allowed, a reported loss), which the whole-sandbox memory budget (private and shared
  pages of every process of the child) could not see, and no namespace of its own (a user namespace would make
  the learner root over a tmpfs of any size).
- **Fused attention off** in a stage that must be written by hand (``open(by_hand=True)``): the child switches
  every fused attention kernel off before the learner's file runs (:mod:`autograder.runtime.fused`); reaching one
  ends the child with an exit status the zygote reports, which the judge names.
- **Verdict evidence** (``record=``, the "written by hand" and "vectorised" verdicts): nothing the child says
  about how it computed is believed. The child traces the call (the ATen ops it calls, at the dispatcher's
  PreDispatch key: :func:`autograder.runtime.recorder.capture_graph`) and sends the
  graph as plain data; the judge (:mod:`autograder.sandbox.evidence`) names the fused attention ops in it, counts its
  operations, and replays it with its own torch (allowed pure-math ops only, its memory bounded before anything is
  allocated): on the inputs it sent, where the replay must give the learner's own answer, and on fresh inputs the
  child never sees, where it must give the grader's reference (when the learner's answer was right). Work that
  escapes the trace and graphs forged by learner code fail as unverifiable. ``SECURITY.md`` says what holds.

What it does not cover:

- ``F.multi_head_attention_forward`` (nn.MultiheadAttention's slow path) and the forward of torch.ao's
  quantizable MultiheadAttention decompose into ordinary ops; the worker wraps them so that they leave a marked
  node in a trace, which code reaching an original (a wrapper's closure) avoids; that, like copying torch's own Python code, is a plagiarism question, not a sandbox one.
- CPU time and memory within the limits; timing side channels; kernel exploits (the children's seccomp filter,
  :mod:`autograder.runtime.seccomp`, refuses only starting programs, namespaces and holding memory no process
  maps); the GPU driver (``/dev/nvidia*`` is passed through when present, and the
  data segment is then limited instead of the address space, which CUDA's reservations would exhaust; tested
  only on machines that have a GPU: ``tests/test_devices.py``).
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
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ..runtime import wire
from ..runtime.zygote import _alive
from .errors import SandboxError, SandboxWarning
from .proxy import StudentProxy

RUNTIME_DIR = Path(wire.__file__).resolve().parent  # the package that runs in the sandbox, and only it
SANDBOX_RUNTIME = "/opt/autograder/runtime"  # where the sandbox sees it
SANDBOX_WORKER = SANDBOX_RUNTIME + "/worker.py"
UID_BASE = 60000  # sandbox uids (when the judge is root): UID_BASE + slot


@dataclass
class Limits:
    call_timeout: float = 10.0  # wall-clock seconds for one call into learner code (the import included)
    stage_timeout: float | None = None  # wall-clock seconds for all calls of one stage together (None: 3 calls' worth)
    memory_mb: int = 2048  # address space on top of what the warm worker maps; ~1.25x for the whole sandbox
    cpu_s: int = 60  # CPU seconds for one child
    file_mb: int = 8  # largest file the learner may write (prints included)
    nproc: int = 64  # processes and threads of the sandbox's uid
    max_restarts: int = 2  # fresh children after a crash within one stage (never after a timeout)
    tmp_mb: int = 256  # size of the sandbox's private /tmp (a tmpfs, in memory)
    tmp_files: int = 10000  # files, folders and links one child may make there (each is kernel memory)

    @property
    def stage_budget(self) -> float:
        """Seconds that one stage's calls may take together, so that calls which each end just before the call
        timeout cannot make a stage (or a class) last for hours."""
        return self.stage_timeout if self.stage_timeout is not None else 3 * self.call_timeout

    def for_child(self) -> wire.ChildLimits:
        return {
            "memory_mb": self.memory_mb,
            "cpu_s": self.cpu_s,
            "file_mb": self.file_mb,
            "nproc": self.nproc,
            "tmp_files": self.tmp_files,
            "cuda": bool(_nvidia_devices()),
        }


def _count_uid_processes(uid: int) -> int:
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                n += os.stat(f"/proc/{name}").st_uid == uid
            except OSError:
                pass
    return n


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
    package = Path(__file__).resolve().parents[1]
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


def bwrap_command(
    bwrap: str,
    control_fd: int,
    python: str,
    tmp_mb: int = 256,
    runtime: str | Path = RUNTIME_DIR,
    uid: int | None = None,
) -> list[str]:
    """The bubblewrap command line for the worker (a pure function, so tests can read it).

    ``uid`` (a root judge): bubblewrap is started as real root WITHOUT a user namespace (root may create the
    mount, PID, network, IPC and UTS namespaces itself), the zygote keeps only :data:`ZYGOTE_CAPS`, and every
    child becomes ``uid`` before learner code runs, a uid that is then the child's outside the sandbox too, so
    RLIMIT_NPROC holds. (In a user namespace made by root, "uid N" inside is still root outside.) Without
    ``uid`` (a judge that is not root), a user namespace maps the judge's uid, which the children keep."""
    if uid is None:
        cmd = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    else:
        cmd = [
            bwrap,
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-drop",
            "ALL",
        ]
        for cap in ZYGOTE_CAPS:
            cmd += ["--cap-add", cap]
    cmd += [
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--hostname",
        "sandbox",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "OMP_NUM_THREADS",
        "1",
        "--setenv",
        "MKL_NUM_THREADS",
        "1",
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
        "--perms",
        "1777",
        "--size",
        str(int(tmp_mb) * 1024 * 1024),
        "--tmpfs",
        "/tmp",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for top in ("/lib", "/lib64", "/bin", "/sbin", "/lib32"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    bound = _runtime_paths()
    # the folders above each mount point are made here, open to every uid (0755), whatever the host's are (an
    # interpreter in root's 0700 home, a clone in a 0700 temporary folder): the host's are never changed
    for parent in _parents(bound + [SANDBOX_RUNTIME, "/etc/ld.so.cache"]):
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
    cmd += [
        "--ro-bind",
        str(runtime),
        SANDBOX_RUNTIME,
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        "/tmp",
        "--",
        python,
        "-I",
        SANDBOX_WORKER,
        "--control-fd",
        str(control_fd),
        "--pid-namespace",
        "--tmp",
        "/tmp",
    ]
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
                    if os.stat(f"/proc/{name}").st_uid != uid or not _alive(int(name)):
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
        self._fd: int | None
        try:
            self._fd = os.pidfd_open(pid)
        except OSError:  # already gone (and collected)
            self._fd, self.returncode = None, -1

    def _ended(self, timeout: float | None) -> bool:
        import select

        if self._fd is not None and select.select([self._fd], [], [], timeout)[0]:
            self.returncode = -1
            os.close(self._fd)
            self._fd = None
        return self.returncode is not None

    def poll(self):
        self._ended(0)
        return self.returncode

    def wait(self, timeout: float | None = None):
        if not self._ended(timeout):
            raise subprocess.TimeoutExpired("worker", timeout or 0.0)
        return self.returncode


class Sandbox:
    """A warm worker process (inside bubblewrap when available) that forks a fresh child for every stage of every
    submission.

    One child runs at a time: a stage's proxy must be closed before the next one calls in (the runner works
    that way). A lost zygote (killed, crashed) is replaced on the next fork."""

    def __init__(self, limits: Limits | None = None, slot: int | None = None):
        self.limits = limits or Limits()
        self.slot = slot if slot is not None else _free_slot()
        self.proc: subprocess.Popen | _Adopted | None = None
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
            except (OSError, SandboxError, ValueError):
                self.close()
            return self

    def start(self) -> "Sandbox":
        with self._lock:
            if self._launched:  # started by launch(): wait for it
                self._launched = False
                try:
                    self._await_ready()
                    return self._started([])
                except (OSError, SandboxError, EOFError, ValueError):
                    self.close()
            if self.proc is not None and self.proc.poll() is None:
                return self
            attempts, bwrap = self._attempts()
            errors = []
            for kind, uid in attempts:
                try:
                    self._launch(kind, uid, bwrap)
                    break
                except (OSError, SandboxError, EOFError, ValueError) as exc:
                    errors.append(f"{kind}{'/uid ' + str(uid) if uid else ''}: {exc}")
                    self.close()
            else:
                raise SandboxError("could not start the grading worker: " + "; ".join(errors))
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
        env = {
            "PATH": "/usr/bin:/bin",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "HOME": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        self.kind, self.uid = kind, uid
        import tempfile

        # the worker runs from a read-only copy of the runtime package in a folder of its own (made here, so its
        # mode is ours to choose), so the judge's code can stay closed to the sandbox
        self.tmp = tempfile.mkdtemp(prefix="autograder-")
        runtime = os.path.join(self.tmp, "runtime")
        os.mkdir(runtime)
        for source in sorted(RUNTIME_DIR.glob("*.py")):
            shutil.copyfile(source, os.path.join(runtime, source.name))
            os.chmod(os.path.join(runtime, source.name), 0o444)
        worker = os.path.join(runtime, "worker.py")
        if kind == "bwrap" and bwrap is not None:
            cmd = bwrap_command(bwrap, fd, sys.executable, self.limits.tmp_mb, runtime, uid=uid)
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
        self.proc = subprocess.Popen(
            cmd,
            pass_fds=(fd,),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("AUTOGRADER_DEBUG") else subprocess.PIPE,
            start_new_session=True,
        )
        child.close()
        self.control = parent

    def _await_ready(self) -> None:
        parent, proc = self.control, self.proc
        if parent is None or proc is None:
            raise SandboxError("the worker was not started")
        parent.settimeout(120)
        try:
            msg = parent.recv(1 << 16)
        except socket.timeout as exc:
            raise SandboxError("the worker did not start within 120 s") from exc
        if not msg:
            err = proc.stderr.read().decode(errors="replace")[-800:] if proc.stderr else ""
            proc.wait(timeout=5)
            raise SandboxError(f"the worker exited at start: {err.strip() or proc.returncode}")
        ready = wire.loads(msg)
        if ready.get("op") != "ready":
            raise SandboxError("the worker did not say it was ready")
        if self.uid is not None and (ready.get("uid") != self.uid or ready.get("zygote_uid") != 0):
            raise SandboxError("the worker would not run learner code under the sandbox's own uid")
        self.info, self.isolation = _describe(self.kind, self.uid, ready)
        parent.settimeout(None)
        self.active = False
        if proc.stderr is not None:
            threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()

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
                raise SandboxError("the sandbox runs one child at a time: close the previous StudentProxy first")
            if self.proc is None or self.proc.poll() is not None:
                self.close()
                self.start()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            limits = self.limits.for_child()
            if self.kind == "plain" and self.uid is None and limits.get("nproc"):
                # no user namespace and no uid of its own: RLIMIT_NPROC counts all of this user's processes
                limits["nproc"] = _count_uid_processes(os.getuid()) + limits["nproc"]
            order: wire.ForkOrder = {"op": "fork", "limits": limits}
            msg = wire.dumps(order).encode()
            try:
                socket.send_fds(self._control(), [msg], [theirs.fileno()])
            except OSError:
                self.close()
                self.start()
                socket.send_fds(self._control(), [msg], [theirs.fileno()])
            theirs.close()
            self.active = True
            self.forks += 1
            return ours

    def end_child(self, kill: bool, grace: float = 2.0) -> wire.Exited:
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
            return cast(wire.Exited, info)  # the zygote's own report (learner code cannot signal or write to it)

    def _control(self) -> socket.socket:
        if self.control is None:
            raise SandboxError("the worker is not running")
        return self.control

    def open(self, source: str, filename: str, by_hand: bool = False) -> StudentProxy:
        """A proxy for one learner file (one stage of one submission): a fresh child of its own; ``by_hand``: the
        stage must be written by hand, and the child switches fused attention off before the file runs."""
        return StudentProxy(self, source, filename, by_hand=by_hand)


def _describe(kind: str, uid: int | None, ready: wire.Ready) -> tuple[dict, str]:
    """What isolation holds for this sandbox, field by field and in words; ``lost`` lists what is less than the
    full sandbox, each said loudly (a :class:`SandboxWarning`, the notes of results.json)."""
    bubblewrap = kind == "bwrap"
    judge_uid = os.getuid()
    child_uid = uid if uid is not None else judge_uid
    namespaces = ["mount", "pid", "network", "ipc", "uts"] if bubblewrap else []
    if bubblewrap and uid is None:
        namespaces.insert(0, "user")
    info: dict[str, Any] = {
        "level": "bubblewrap" if bubblewrap else "reduced",
        "bubblewrap": bubblewrap,
        "learner_uid": child_uid,
        "own_uid": uid is not None,
        "judge_is_root": judge_uid == 0,
        "namespaces": namespaces,
        "ipc_namespace_per_process": bool(ready.get("ipc")),
        "seccomp_refuses": list(ready.get("seccomp") or []),
        "fresh_process_per_stage": True,
        "lost": [],
    }
    who = (
        f"learner code runs under its own uid {uid}, not root"
        if uid is not None
        else f"learner code runs under the judge's own uid {judge_uid} (no uid of its own: the judge is not root)"
    )
    ipc = (
        "a SysV IPC namespace per process"
        if ready.get("ipc")
        else "SysV IPC objects shared between this sandbox's processes"
    )
    filtered = (
        "a seccomp filter (no programs started, no namespaces, no kernel keyrings; no memfd, SysV IPC, sockets or "
        "pipes)"
        if ready.get("seccomp") and "socketpair" in ready["seccomp"]
        else "a seccomp filter (no programs started, no namespaces, no kernel keyrings, no SysV IPC)"
        if ready.get("seccomp")
        else "NO seccomp filter"
    )
    if bubblewrap:
        text = (
            f"bubblewrap: own {', '.join(namespaces)} namespaces; {who}; {ipc}; {filtered}; a fresh process for "
            "every stage"
        )
    else:
        text = (
            f"REDUCED, no bubblewrap: a plain subprocess with rlimits, no filesystem, network or PID "
            f"isolation; {who}; {ipc}; {filtered}; a fresh process for every stage"
        )
        info["lost"].append(
            "bubblewrap is not available: learner code runs in a plain subprocess with rlimits only (no "
            "filesystem, network or PID isolation"
            + (f"; it runs under uid {uid}, not root" if uid is not None else "")
            + "). Install bubblewrap before grading untrusted code."
        )
    if uid is None:
        info["lost"].append(
            f"the judge is not root, so learner code runs under the judge's own uid {judge_uid}"
            + (
                " (mapped inside bubblewrap's user namespace)"
                if bubblewrap
                else ": it can read whatever this user can read and signal every process of this user"
            )
        )
    if not ready.get("seccomp"):
        info["lost"].append(
            "no seccomp filter could be installed here (Linux on x86-64 or aarch64 is needed): learner code can start "
            "programs, in which the stage's guards do not hold, make namespaces of its own, and hold memory (memfd, "
            "SysV IPC, socket and pipe buffers) that the sandbox's memory budget does not see"
        )
    elif "memfd_create" not in (ready.get("seccomp") or []):
        info["lost"].append(
            "memfd_create, sockets and pipes stay allowed (torch here is built for an accelerator, whose driver "
            "needs a memfd): memory learner code holds in a memfd or in socket and pipe buffers is not counted by "
            "the sandbox's memory budget"
        )
    if not ready.get("ipc"):
        info["lost"].append(
            "each child cannot have a SysV IPC namespace of its own here: shared memory and "
            "message queues are shared between the children of one sandbox"
        )
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
