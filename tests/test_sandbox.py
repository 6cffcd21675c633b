"""The sandbox and the worker, piece by piece: the wire format, the isolation a child sees, the evidence of a
recorded call (its traced graph, checked by the judge), and what happens when a child or the zygote misbehaves. (End-to-end attacks graded by the real
runner are in test_hostile.py.)"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from autograder.runtime import wire, zygote
from autograder.sandbox.errors import (
    NotImplementedYet,
    SandboxWarning,
    StudentCodeError,
    StudentCrashed,
    StudentFailure,
    StudentTimeout,
    SubmissionLoadError,
)
from autograder.sandbox.proxy import LocalStudent
from autograder.sandbox.host import RUNTIME_DIR, SANDBOX_RUNTIME, SANDBOX_WORKER, Limits, Sandbox, bwrap_command
from autograder.sandbox.values import Call, Out

ROOT = Path(__file__).resolve().parent.parent
Q = torch.randn(1, 2, 4, 8, dtype=torch.float64)


# ───────────────────────────── pure pieces ─────────────────────────────


@pytest.mark.parametrize("uid", [None, 60123])
def test_bwrap_command_isolates_and_mounts_nothing_of_the_judge(uid):
    cmd = bwrap_command("/usr/bin/bwrap", 5, sys.executable, tmp_mb=64, uid=uid)
    for flag in ("--die-with-parent", "--new-session", "--as-pid-1", "--clearenv"):
        assert flag in cmd
    if uid is None:  # a judge that is not root: a user namespace maps its uid
        for flag in ("--unshare-all", "--unshare-user", "--disable-userns"):
            assert flag in cmd
    else:  # root: no user namespace (its "uid N" would still be root outside); each child becomes uid N itself
        assert "--unshare-user" not in cmd and "--unshare-all" not in cmd
        for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"):
            assert flag in cmd
        assert cmd[-2:] == ["--uid", str(uid)]
        added = {cmd[i + 1] for i, a in enumerate(cmd) if a == "--cap-add"}
        assert added == {
            "CAP_SETUID",
            "CAP_SETGID",
            "CAP_SYS_ADMIN",
            "CAP_KILL",
            "CAP_CHOWN",
            "CAP_DAC_OVERRIDE",
            "CAP_FOWNER",
        }
    assert cmd[cmd.index("--cap-drop") + 1] == "ALL"
    # the folders above each mount point are made open to every uid inside, the host's left as they are
    dirs = [cmd[i + 3] for i, a in enumerate(cmd) if a == "--perms" and cmd[i + 1] == "0755" and cmd[i + 2] == "--dir"]
    for path in [cmd[i + 2] for i, a in enumerate(cmd) if a == "--ro-bind" and not cmd[i + 2].startswith("/usr")]:
        for parent in list(Path(path).parents)[:-1]:
            assert str(parent) in dirs or str(parent) in ("/usr", "/tmp") or str(parent).startswith("/usr/")
    assert cmd[cmd.index("--size") + 1 : cmd.index("--size") + 4] == [str(64 * 2**20), "--tmpfs", "/tmp"]
    assert ["--remount-ro", "/"] == cmd[cmd.index("--chdir") - 2 : cmd.index("--chdir")]
    assert "--bind" not in cmd  # every mount is read-only
    binds = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--ro-bind"]
    for private in (ROOT, ROOT / "solutions", ROOT / "autograder", ROOT / "autograder" / "graders"):
        assert str(private) not in binds
    # of the autograder, only the runtime package (what runs in the sandbox) is mounted
    where = cmd.index(SANDBOX_RUNTIME)
    assert cmd[where - 2 : where] == ["--ro-bind", str(RUNTIME_DIR)]
    assert [b for b in binds if b.startswith(str(ROOT / "autograder"))] == [str(RUNTIME_DIR)]
    assert cmd[cmd.index("--") + 1 : cmd.index("--") + 4] == [sys.executable, "-I", SANDBOX_WORKER]


def test_wire_codec_does_not_use_the_patchable_json_module(monkeypatch):
    import json.decoder
    import json.encoder

    monkeypatch.setattr(json, "dumps", lambda *a, **k: '{"forged": true}')
    monkeypatch.setattr(json, "loads", lambda *a, **k: {"forged": True})
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    monkeypatch.setattr(json.JSONEncoder, "encode", lambda self, o: '{"forged": true}')
    value = {"ok": True, "n": [1, 2.5, float("inf"), None, "é"], "nested": {"a": False}}
    text = wire.dumps(value)
    assert wire.loads(text.encode()) == value
    with pytest.raises(ValueError):
        wire.loads(b'{"a": 1} trailing')
    with pytest.raises(ValueError):
        wire.loads(b"{nope")


@pytest.mark.parametrize(
    "change, strict",
    [
        ({"np": "|O"}, True),
        ({"np": "<U4"}, True),
        ({"dtype": "float64"}, True),
        ({"dtype": "complex64"}, False),
        ({"shape": [3, -1]}, True),
        ({"shape": [5]}, True),
        ({"__nd__": [8, 16]}, True),
        ({"__nd__": [-4, 16]}, True),
        ({"__nd__": "0:16"}, True),
        ({"shape": "big"}, True),
    ],
)
def test_decode_array_refuses_inconsistent_records(change, strict):
    blob = wire.Blob()
    rec = wire.encode_array(np.arange(4, dtype=np.float32), "float32", "cpu", blob)
    data = blob.bytes()
    assert wire.decode_array(rec, data).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        wire.decode_array({**rec, **change}, data, strict=strict)


def test_frames_are_signed_bounded_and_time_limited():
    a, b = socket.socketpair()
    key = os.urandom(32)
    wire.send_frame(a, {"ok": True, "id": 3}, b"\x01\x02", key=key)
    assert wire.recv_frame(b, key=key) == ({"ok": True, "id": 3}, b"\x01\x02")
    wire.send_frame(a, {"ok": True}, b"", key=os.urandom(32))  # signed with another key
    with pytest.raises(wire.ForgedFrame):
        wire.recv_frame(b, key=key)
    a.sendall(wire._HEADER.pack(10, 0) + b'{"ok":true}')  # unsigned: the MAC read swallows nothing valid
    with pytest.raises((wire.ForgedFrame, ValueError, socket.timeout)):
        wire.recv_frame(b, key=key, deadline=time.monotonic() + 0.5)
    a2, b2 = socket.socketpair()
    a2.sendall(wire._HEADER.pack(wire.REPLY_JSON_LIMIT + 1, 0))
    with pytest.raises(ValueError, match="too large"):
        wire.recv_frame(b2, json_limit=wire.REPLY_JSON_LIMIT)
    a3, b3 = socket.socketpair()
    a3.sendall(wire._HEADER.pack(100, 0) + b"{")  # then nothing: a trickle must not hold the reader
    started = time.monotonic()
    with pytest.raises(socket.timeout):
        wire.recv_frame(b3, deadline=time.monotonic() + 0.3)
    assert time.monotonic() - started < 5
    for s in (a, b, a2, b2, a3, b3):
        s.close()


def test_a_reply_is_read_whole_and_nothing_may_follow_it():
    """The judge reads a reply in one go (up to 64 KB at once): a reply split over several writes, or larger
    than the first read, arrives intact; bytes after it (a frame nobody asked for) are refused as forged."""
    key = os.urandom(32)
    a, b = socket.socketpair()
    big = os.urandom(200_000)
    wire.send_frame(a, {"ok": True, "id": 1}, big, key=key)
    assert wire.recv_frame(b, key=key, reply=True) == ({"ok": True, "id": 1}, big)
    frame = wire._HEADER.pack(9, 2) + b'{"id": 2}' + b"\x05\x06"
    frame += wire._hmac_digest(key, b'{"id": 2}\x05\x06', "sha256")
    for cut in (3, 8, 12, len(frame) - 1):  # the header itself split, the body split, the MAC split
        a.sendall(frame[:cut])
        threading.Timer(0.05, a.sendall, args=(frame[cut:],)).start()
        assert wire.recv_frame(b, key=key, reply=True, deadline=time.monotonic() + 5) == ({"id": 2}, b"\x05\x06")
    a.sendall(frame + b"\x00")
    with pytest.raises(wire.ForgedFrame):
        wire.recv_frame(b, key=key, reply=True)
    a.close()
    b.close()


def test_local_student_uses_the_same_executor_in_process():
    namespace = {"torch": torch}
    exec("def double(x):\n    return x * 2\n", namespace)
    student = LocalStudent(namespace)
    reply = student.call("double", torch.ones(3), record=True, full=True)
    assert reply["value"].t.tolist() == [2.0, 2.0, 2.0]
    assert reply["record"]["forbidden"] == [] and reply["record"]["n_ops"] >= 1


# ───────────────────────────── a real sandbox ─────────────────────────────


# a learner function that starts sleeping processes until a fork is refused (or 500 of them), and says how many
FORK_LOOP = textwrap.dedent("""
    import os, time

    def fork_until_refused(x):
        n = 0
        while n < 500:
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            n += 1
        return n
""")


PROBES = FORK_LOOP + textwrap.dedent("""
    import os, resource, signal, socket, sys, time
    import torch
    import torch.nn.functional as F

    def echo(x):
        return x

    def inside(x):
        def can_read(path):
            try:
                open(path, "rb").close()
                return True
            except OSError:
                return False
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=0.5)
            net = "connected"
        except OSError as exc:
            net = type(exc).__name__
        return {"ppid": os.getppid(), "uid": os.getuid(), "root": sorted(os.listdir("/")), "cwd": os.getcwd(),
                "hostname": socket.gethostname(), "net": net,
                "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0],
                "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
                "as": resource.getrlimit(resource.RLIMIT_AS)[0],
                "data": resource.getrlimit(resource.RLIMIT_DATA)[0],
                "reads_repo": can_read("REPO/course.yml") or can_read("REPO/solutions/01_loop_average.py"),
                "repo": sorted(os.listdir("REPO")) if os.path.isdir("REPO") else [],
                "main": type(sys.modules.get("__main__")).__name__ + ":" + str(getattr(sys.modules.get("__main__"), "__file__", None)),
                "path": list(sys.path)}

    def leave_file(x):
        open("/tmp/left_behind", "w").write("x")
        os.environ["LEFT"] = "1"
        return 1

    def find_file(x):
        return [os.path.exists("/tmp/left_behind"), os.environ.get("LEFT"), sorted(os.listdir("/tmp"))]

    def _keyctl():
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        nr = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
        return libc, nr

    def leave_key(x):
        import ctypes
        libc, (add_key, _) = _keyctl()
        serial = libc.syscall(ctypes.c_long(add_key), b"user", b"note", b"left by student A", ctypes.c_long(17),
                              ctypes.c_long(-4))
        return True if serial > 0 else ctypes.get_errno()  # stored, or why not

    def _persistent_keyring(libc, keyctl):
        import ctypes
        libc.syscall.restype = ctypes.c_long
        # KEYCTL_GET_PERSISTENT of the caller's uid, linked into its session keyring (-3)
        return libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(22), ctypes.c_long(-1), ctypes.c_long(-3))

    def leave_persistent_key(x):
        import ctypes
        libc, (add_key, keyctl) = _keyctl()
        ring = _persistent_keyring(libc, keyctl)
        if ring <= 0:
            return ctypes.get_errno()  # refused (EPERM), or this kernel has no persistent keyrings (EOPNOTSUPP)
        serial = libc.syscall(ctypes.c_long(add_key), b"user", b"kept", b"left by student A", ctypes.c_long(17),
                              ctypes.c_long(ring))
        return serial > 0

    def find_persistent_key(x):
        import ctypes
        libc, (_, keyctl) = _keyctl()
        ring = _persistent_keyring(libc, keyctl)
        found = libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(10), ctypes.c_long(ring), b"user", b"kept",
                             ctypes.c_long(0))  # KEYCTL_SEARCH in the persistent keyring
        return found > 0

    def find_key(x):
        import ctypes
        libc, (_, keyctl) = _keyctl()
        found = libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(10), ctypes.c_long(-4), b"user", b"note",
                             ctypes.c_long(0))  # KEYCTL_SEARCH in the user keyring
        return found > 0

    def leave_deep_tree(x):
        os.chdir("/tmp")
        os.mkdir("deep")
        os.chdir("deep")
        for _ in range(3000):  # deeper than Python's recursion limit, and than PATH_MAX as one path
            os.mkdir("d")
            os.chdir("d")
        open("bottom", "w").write("x")
        return 1

    def kill_parents(x):
        for target in (os.getppid(), -1):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.3)
        return "alive"

    def forge_if_small(x):
        if x.numel() == 1:
            for fd in range(3, 30):
                try:
                    os.write(fd, b"\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x00{}")
                except OSError:
                    pass
            time.sleep(0.5)
        return x + 1

    def sdpa(q):
        return F.scaled_dot_product_attention(q, q, q, is_causal=True)
    def sdpa_aten(q):
        return torch.ops.aten.scaled_dot_product_attention(q, q, q, is_causal=True)
    def sdpa_c(q):
        return torch._C._nn.scaled_dot_product_attention(q, q, q, is_causal=True)
    def sdpa_getattr(q):
        return getattr(F, "scaled_dot_" + "product_attention")(q, q, q)
    def sdpa_exec(q):
        ns = {"F": F, "q": q}
        exec("out = F.scaled_dot_product_attention(q, q, q)", ns)
        return ns["out"]
    def sdpa_math(q):
        return torch.ops.aten._scaled_dot_product_attention_math(q, q, q)[0]
    def sdpa_thread(q):
        import threading
        box = []
        t = threading.Thread(target=lambda: box.append(F.scaled_dot_product_attention(q, q, q)))
        t.start(); t.join()
        return box[0]
    def _mha_input(q):
        return q[0].transpose(0, 1).reshape(4, 1, 16).float()
    def native_mha(q):
        x, m = _mha_input(q), torch.nn.MultiheadAttention(16, 2).eval()
        with torch.no_grad():
            return torch._native_multi_head_attention(x, x, x, 16, 2, m.in_proj_weight, m.in_proj_bias,
                                                      m.out_proj.weight, m.out_proj.bias)[0]
    def mha_module(q):
        x = _mha_input(q)
        return torch.nn.MultiheadAttention(16, 2)(x, x, x)[0]
    def mha_no_torch_function(q):
        x = _mha_input(q)
        with torch._C.DisableTorchFunction():
            return torch.nn.MultiheadAttention(16, 2)(x, x, x)[0]
    def mha_quantizable(q):  # torch.ao's subclass: its forward is plain Python, not multi_head_attention_forward
        from torch.ao.nn.quantizable import MultiheadAttention
        x = _mha_input(q)
        return MultiheadAttention(16, 2)(x, x, x)[0]
    def by_hand(q):
        s = q @ q.transpose(-2, -1) / q.shape[-1] ** 0.5
        keep = torch.ones(4, 4, dtype=torch.bool).tril()
        return s.masked_fill(~keep, float("-inf")).softmax(-1) @ q

    def gc_walk(q):
        import gc
        try:
            return len(gc.get_objects())
        except RuntimeError as exc:
            return str(exc)
    def frames(q):
        return sys._getframe(1).f_code.co_name
    def forks(q):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        return by_hand(q)
    def proc_mem(q):
        try:
            open("/proc/self/mem", "rb")
            return "opened"
        except OSError as exc:
            return type(exc).__name__

    _kept = []
    def exec_map(q):
        import mmap
        with open("code.bin", "wb") as fh:
            fh.write(bytes(4096))
        with open("code.bin", "rb") as fh:
            try:
                _kept.append(mmap.mmap(fh.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC))
            except OSError as exc:
                return "refused: " + type(exc).__name__
        return by_hand(q)

    class Liar(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") in ("detach", "cpu", "numpy", "tolist", "clone", "contiguous", "to"):
                return torch.full((2, 2), 7.0)
            return super().__torch_function__(func, types, args, kwargs or {})
    def liar(x):
        return torch.zeros(3).as_subclass(Liar)
""").replace("REPO", str(ROOT))

PATCHES = textwrap.dedent("""
    import json
    import torch
    import torch.autograd.profiler
    import torch.nn.functional as F
    import torch.overrides

    torch.autograd.profiler.profile = object
    torch.overrides.TorchFunctionMode = object
    torch.Tensor.__matmul__ = lambda a, b: torch.matmul(a, b)
    F.softmax = lambda x, dim=-1, **kw: torch.softmax(x, dim)
    json.dumps = lambda *a, **k: "{}"

    def sdpa(q):
        return F.scaled_dot_product_attention(q, q, q, is_causal=True)
""")


UID_SOURCE = "import os\n\n\ndef uid(x):\n    return list(os.getresuid())\n"


@pytest.fixture(scope="module")
def sb():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = Sandbox(Limits(call_timeout=5, memory_mb=384, cpu_s=20, max_restarts=1)).start()
    yield box
    box.close()


@pytest.fixture
def bwrap_sb(sb):
    if sb.kind != "bwrap":
        pytest.skip("needs bubblewrap")
    return sb


def _call(sb, name, *args, source=PROBES, **kw):
    proxy = sb.open(source, "/submission/probe.py")
    try:
        return proxy.call(name, *args, **kw)
    finally:
        proxy.close()


def test_a_child_sees_only_the_sandbox(bwrap_sb):
    info = _call(bwrap_sb, "inside", 0)
    assert info["ppid"] == 1  # the zygote is PID 1 of the sandbox's own PID namespace
    assert info["hostname"] == "sandbox"
    assert info["net"] != "connected"
    assert info["reads_repo"] is False
    assert set(info["repo"]) <= {".venv"}  # at most the virtual environment, when it lives in the repository
    assert info["cwd"].startswith("/tmp/")
    assert info["nproc"] == 64 and info["fsize"] == 8 * 2**20
    # the memory limit: the address space, or with a GPU (whose driver reserves huge ranges) the data segment
    memory = info["data"] if Limits().for_child()["cuda"] else info["as"]
    assert 0 < memory < 2**40
    assert info["main"].startswith("module:None")  # a blank __main__, not the worker's entry script
    assert "/opt/autograder" not in info["path"]  # the runtime's folder left sys.path once it was imported
    if os.geteuid() == 0:
        assert info["uid"] == bwrap_sb.uid >= 60000  # a uid of its own, so RLIMIT_NPROC holds


def test_nothing_one_child_leaves_reaches_the_next(bwrap_sb):
    assert _call(bwrap_sb, "leave_file", 0) == 1
    assert _call(bwrap_sb, "find_file", 0)[:2] == [False, None]


def _keyrings_refused(sb) -> bool:
    return {"add_key", "keyctl"} <= set(sb.info["seccomp_refuses"])


def test_a_key_one_child_stores_in_its_user_keyring_is_gone_for_the_next(bwrap_sb):
    """Where the seccomp filter refuses the keyring calls, no child can store a key; without it, each child of a uid
    of its own starts with that uid's keyrings emptied."""
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("keyctl's syscall number is known here for x86_64 and aarch64 only")
    if _keyrings_refused(bwrap_sb):
        assert _call(bwrap_sb, "leave_key", 0) == errno.EPERM
        return
    if bwrap_sb.uid is None:
        pytest.skip("the children have no uid of their own (not root): their user keyring is the judge's")
    assert _call(bwrap_sb, "leave_key", 0) is True
    assert _call(bwrap_sb, "find_key", 0) is False


def test_a_key_one_child_stores_in_its_persistent_keyring_is_gone_for_the_next(bwrap_sb):
    """The persistent keyring of a uid outlives its processes for days (persistent_keyring_expiry)."""
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("keyctl's syscall number is known here for x86_64 and aarch64 only")
    if _keyrings_refused(bwrap_sb):
        assert _call(bwrap_sb, "leave_persistent_key", 0) == errno.EPERM
        return
    if bwrap_sb.uid is None:
        pytest.skip("the children have no uid of their own (not root): their keyrings are the judge's")
    left = _call(bwrap_sb, "leave_persistent_key", 0)
    if left == errno.EOPNOTSUPP:
        pytest.skip("this kernel has no persistent keyrings")
    assert left is True
    assert _call(bwrap_sb, "find_persistent_key", 0) is False


def _keys_of(uid: int) -> int:
    """How many keys the kernel holds for ``uid`` (/proc/key-users: ``uid: usage nkeys/nikeys ...``)."""
    for line in Path("/proc/key-users").read_text().splitlines():
        name, _, rest = line.partition(":")
        if int(name) == uid:
            return int(rest.split()[1].split("/")[0])
    return 0


def test_a_child_leaves_no_key_of_its_uid_in_the_kernel():
    """As root, each sandbox's children run under a uid of their own; grading must not leave the kernel keys of
    that uid (a persistent keyring is kept for three days, a user keyring until reboot, and every key ending later
    costs the kernel's key collector a walk over them all). The sandbox is given a slot whose uid holds no key."""
    if os.geteuid() != 0 or not Path("/proc/key-users").exists():
        pytest.skip("needs root (a uid of the children's own) and /proc/key-users")
    from autograder.sandbox import host

    free = (s for s in range(3999, 1000, -1) if s not in host._SLOTS_TAKEN and not host._uid_in_use(host.UID_BASE + s))
    slot = next((s for s in free if _keys_of(host.UID_BASE + s) == 0), None)
    if slot is None:
        pytest.skip("every free slot's uid already holds keys on this machine (left by an earlier version)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = Sandbox(Limits(call_timeout=5, memory_mb=384, cpu_s=20, max_restarts=1), slot=slot).start()
    try:
        if box.uid is None:
            pytest.skip("this sandbox gives its children no uid of their own")
        assert _call(box, "inside", 0)["uid"] == box.uid == host.UID_BASE + slot
        if _keyrings_refused(box):
            assert _call(box, "leave_key", 0) == errno.EPERM
        assert _keys_of(box.uid) == 0
    finally:
        box.close()


def test_a_tree_deeper_than_any_recursion_is_wiped_and_the_zygote_lives_on(bwrap_sb):
    zygote_before = bwrap_sb.proc.pid
    assert _call(bwrap_sb, "leave_deep_tree", 0) == 1
    assert "deep" not in _call(bwrap_sb, "find_file", 0)[2]
    assert bwrap_sb.proc.pid == zygote_before  # the same sandbox: its zygote did not die wiping the tree


@pytest.mark.parametrize(
    "name, expected",
    [
        ("sdpa", "aten.scaled_dot_product_attention.default"),
        ("sdpa_aten", "aten.scaled_dot_product_attention.default"),
        ("sdpa_c", "aten.scaled_dot_product_attention.default"),
        ("sdpa_getattr", "aten.scaled_dot_product_attention.default"),
        ("sdpa_exec", "aten.scaled_dot_product_attention.default"),
        ("sdpa_math", "aten._scaled_dot_product_attention_math.default"),
        ("native_mha", "aten._native_multi_head_attention.default"),
        ("mha_module", "autograder.multi_head_attention_forward.default"),
        ("mha_no_torch_function", "autograder.multi_head_attention_forward.default"),
        ("mha_quantizable", "autograder.multi_head_attention_forward.default"),
    ],
)
def test_every_alias_of_a_fused_kernel_is_in_the_graph(sb, name, expected):
    reply = _call(sb, name, Q, record=True, full=True)
    assert expected in reply["record"]["forbidden"]


WORKER_THREAD = textwrap.dedent("""
    import queue, threading
    import torch.nn.functional as F
    _jobs, _done = queue.Queue(), queue.Queue()

    def _serve():
        while True:
            q = _jobs.get()
            _done.put(F.scaled_dot_product_attention(q, q, q, is_causal=True))

    threading.Thread(target=_serve, daemon=True).start()  # started at import, before any recorded call

    def sdpa_elsewhere(q):
        _jobs.put(q)
        return _done.get()

    def by_hand(q):
        w = (q @ q.transpose(-2, -1)).softmax(-1)
        return w @ q
""")


@pytest.mark.parametrize("source, name", [(WORKER_THREAD, "sdpa_elsewhere"), (PROBES, "sdpa_thread")])
def test_work_done_by_another_thread_is_not_verified(sb, source, name):
    """What another thread computes is not in the call's graph: the graph then misses the answer on fresh inputs,
    and the call is refused as unverifiable (no n_ops, no credit)."""
    record = _call(sb, name, Q, source=source, record=True, full=True)["record"]
    assert record["n_ops"] is None and record["forbidden"][0].startswith("unverifiable: ")


def test_honest_code_beside_a_thread_is_verified(sb):
    record = _call(sb, "by_hand", Q, source=WORKER_THREAD, record=True, full=True)["record"]
    assert record["forbidden"] == [] and record["n_ops"] > 3


def test_hand_written_code_is_recorded_clean(sb):
    reply = _call(sb, "by_hand", Q, record=True, full=True)
    assert reply["record"]["forbidden"] == []
    assert reply["record"]["n_ops"] > 5
    expected = torch.nn.functional.scaled_dot_product_attention(Q, Q, Q, is_causal=True)
    assert torch.allclose(reply["value"].t, expected)


def test_patching_torch_hides_nothing_from_the_graph(sb):
    reply = _call(sb, "sdpa", Q, source=PATCHES, record=True, full=True)
    assert "aten.scaled_dot_product_attention.default" in reply["record"]["forbidden"]


def test_a_lying_tensor_subclass_sends_its_real_data(sb):
    out = _call(sb, "liar", 0)
    assert isinstance(out, Out) and out.shape == (3,) and out.t.tolist() == [0.0, 0.0, 0.0]


def test_the_zygote_survives_its_children_killing_it(bwrap_sb):
    starts = bwrap_sb.starts
    assert _call(bwrap_sb, "kill_parents", 0) == "alive"
    assert _call(bwrap_sb, "find_file", 0)[0] is False
    assert bwrap_sb.starts == starts  # no restart was needed


def test_a_forged_reply_costs_only_that_call(sb):
    proxy = sb.open(PROBES, "/submission/probe.py")
    try:
        with pytest.raises(StudentCrashed, match="not a valid answer|closed its connection|process"):
            proxy.call("forge_if_small", torch.ones(1))
        assert proxy.call("forge_if_small", torch.ones(3)).t.tolist() == [2.0, 2.0, 2.0]  # a fresh child
    finally:
        proxy.close()


BATCHED = """
import time

import torch

made = []


def f(x):
    made.append(x.shape[0])
    if x.shape[0] == 3:
        raise ValueError("three")
    if x.shape[0] == 5:
        time.sleep(60)
    return x * 2


def made_so_far():
    return list(made)


class Plus(torch.nn.Module):
    def forward(self, x):
        return x + 1
"""


@pytest.mark.parametrize("where", ["sandbox", "in-process"])
def test_calls_in_one_round_trip_answer_as_calls_made_one_by_one(sb, where):
    """``student.call_all``: the values of the calls, in order, each judged at the dtype it asked for; the calls
    after one that raises are never made, and reading its answer or a later one raises its error, said with its
    call. A module built earlier can be called too."""
    if where == "sandbox":
        proxy = sb.open(BATCHED, "/submission/probe.py")
    else:
        namespace: dict = {}
        exec(BATCHED, namespace)
        proxy = LocalStudent(namespace)
    try:
        xs = [torch.ones(n, 2) for n in (1, 2, 3, 4)]
        answers = proxy.call_all(Call("f", x, cast=torch.float64) for x in xs)
        assert answers[0].t.tolist() == [[2.0, 2.0]] and answers[1].t.tolist() == [[2.0, 2.0]] * 2
        assert answers[1].asked == "float64"
        for i in (2, 3):
            with pytest.raises(StudentCodeError, match=r"^f\(<tensor \(3, 2\) float64>\): .*three"):
                answers[i]
        with pytest.raises(StudentCodeError, match="three"):
            list(answers)
        assert proxy.call("made_so_far") == [1, 2, 3]  # the fourth call was never made
        module = proxy.new("Plus")
        both = proxy.call_all([Call(module, torch.zeros(2), cast=torch.float32), Call("f", torch.ones(1))])
        assert [a.t.tolist() for a in both] == [[1.0, 1.0], [2.0]]
        assert [a.asked for a in both] == ["float32", "float32"]
    finally:
        proxy.close()


def test_a_call_that_hangs_in_one_round_trip_costs_one_timeout(sb):
    """Each answer of ``call_all`` has the call timeout to arrive: a hang in the second of three calls costs one
    timeout, the first answer is kept, and the stage is over (as after a call made alone)."""
    proxy = sb.open(BATCHED, "/submission/probe.py")
    try:
        started = time.monotonic()
        answers = proxy.call_all(Call("f", torch.ones(n, 1)) for n in (1, 5, 2))
        elapsed = time.monotonic() - started
        timeout = sb.limits.call_timeout
        assert timeout <= elapsed < timeout + 3, f"{elapsed:.1f} s"
        assert answers[0].t.tolist() == [[2.0]]
        with pytest.raises(StudentTimeout, match="did not finish"):
            answers[1]
        with pytest.raises(StudentTimeout, match="skipped"):
            proxy.call("f", torch.ones(1, 1))
    finally:
        proxy.close()


def test_learner_failures_are_told_apart_by_type(sb):
    """A file that cannot be imported raises SubmissionLoadError (the runner marks its stage as an error by that
    type), a stub's NotImplementedError raises NotImplementedYet; an error raised by a call is neither, whatever
    its message says."""
    cases = [
        ("def f(x:\n", SubmissionLoadError, "your file could not be imported: SyntaxError"),
        ("raise ValueError('no')\n", SubmissionLoadError, "your file could not be imported: ValueError: no"),
        ("raise NotImplementedError('todo')\n", NotImplementedYet, "todo"),
        (
            "def f(x):\n    raise ValueError('your file could not be imported')\n",
            StudentCodeError,
            "your code raised ValueError: your file could not be imported",
        ),
    ]
    for source, kind, message in cases:
        proxy = sb.open(source, "/submission/probe.py")
        try:
            with pytest.raises(StudentFailure) as info:
                proxy.call("f", torch.ones(1))
        finally:
            proxy.close()
        assert type(info.value) is kind and message in str(info.value), (source, info.value)


def _uid_processes(uid):
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and zygote._alive(int(name)):
                    found.append(int(name))
            except OSError:
                pass
    return found


def test_a_fork_bomb_is_bounded_and_cleaned_up(bwrap_sb):
    if bwrap_sb.uid is None:
        pytest.skip("needs the sandbox's own uid (a root judge)")
    before = len(_uid_processes(bwrap_sb.uid))  # bubblewrap's monitor and the zygote
    n = _call(bwrap_sb, "fork_until_refused", 0)
    assert 0 < n < 64
    assert len(_uid_processes(bwrap_sb.uid)) == before


def test_a_lost_zygote_is_replaced_and_the_stage_fails_cleanly(sb):
    proxy = sb.open(PROBES + "\nimport time\ndef slow(x):\n    time.sleep(8)\n    return 1\n", "/submission/p.py")
    try:
        assert proxy.loaded()
        starts = sb.starts
        os.killpg(sb.proc.pid, 9)  # the zygote dies while a child works for the judge
        with pytest.raises((StudentCrashed, StudentTimeout)):
            proxy.call("slow", 0)
    finally:
        proxy.close()
    assert _call(sb, "by_hand", Q).shape == Q.shape
    assert sb.starts == starts + 1


@pytest.mark.slow
def test_the_plain_fallback_warns_and_still_cleans_up(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_NO_BWRAP", "1")
    with pytest.warns(SandboxWarning, match="bubblewrap is not available"):
        plain = Sandbox(Limits(call_timeout=5, memory_mb=384, max_restarts=1)).start()
    try:
        assert plain.isolation.startswith("REDUCED, no bubblewrap") and plain.info["level"] == "reduced"
        if os.geteuid() == 0:  # still graded, and still never as root
            assert plain.info["learner_uid"] == plain.uid >= 60000
            assert _call(plain, "uid", 0, source=UID_SOURCE) == [plain.uid] * 3
        marker = "plain" + os.urandom(3).hex()
        source = PROBES + textwrap.dedent(f'''
            def daemon(x):
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        os.execv("/usr/bin/sleep", ["sleep", "300", "{marker}"])
                    os._exit(0)
                return 1
        ''')
        assert _call(plain, "daemon", 0, source=source) == 1
        assert _call(plain, "by_hand", Q).shape == Q.shape
        # without bubblewrap the runtime's folder holds the children's folders too: it is not on their sys.path
        path = _call(plain, "path", 0, source=PROBES + "\n\ndef path(x):\n    return list(sys.path)\n")
        assert path and not any(p.startswith(plain.tmp) for p in path)
        left = [p for p in os.listdir("/proc") if p.isdigit() and marker.encode() in _cmdline(p)]
        assert left == []
    finally:
        plain.close()


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_the_written_by_hand_rule_refuses_unverifiable_evidence():
    from autograder.checks import CheckFailed
    from autograder.graders.attention import forbidden_apis, require_by_hand

    reply = {"record": {"n_ops": None, "forbidden": ["unverifiable: the graph calls aten.from_file.default"]}}
    apis, mistake, unverified = forbidden_apis(reply)
    assert apis == [] and mistake is None and unverified == ["the graph calls aten.from_file.default"]
    with pytest.raises(CheckFailed, match="could not verify how f computed its answer") as info:
        require_by_hand(reply, "f")
    assert info.value.forfeit
    assert forbidden_apis({"record": {"n_ops": 3, "forbidden": []}}) == ([], None, [])


def test_the_cpu_time_limit_ends_a_busy_child(sb):
    saved = sb.limits.cpu_s, sb.limits.call_timeout
    sb.limits.cpu_s, sb.limits.call_timeout = 1, 20  # the CPU limit must act before the wall clock does
    try:
        with pytest.raises(StudentCrashed, match="CPU time|killed"):
            _call(sb, "spin", 0, source="def spin(x):\n    while True:\n        x += 1\n")
    finally:
        sb.limits.cpu_s, sb.limits.call_timeout = saved


# ───────────────────────────── modules built in one request ─────────────────────────────


MODULES = textwrap.dedent("""
    import torch
    from torch import nn

    class Good(nn.Module):
        def __init__(self, d, mask=True):
            super().__init__()
            self.W_query = nn.Linear(d, d, bias=False)
            if mask:
                self.register_buffer("mask", torch.ones(3, 3).tril())

        def forward(self, x):
            return self.W_query(x)

    class BadTo(Good):
        def _apply(self, fn, recurse=True):
            raise RuntimeError("no moving me")

    class BadState(Good):
        def state_dict(self, *args, **kwargs):
            raise RuntimeError("no state for you")

    class BadLoad(Good):
        def _load_from_state_dict(self, *args, **kwargs):
            raise RuntimeError("no loading either")

    class WrongName(nn.Module):
        def __init__(self, d, mask=True):
            super().__init__()
            self.W_q = nn.Linear(d, d, bias=False)

    class WrongShape(Good):
        def __init__(self, d, mask=True):
            super().__init__(d + 1, mask)

    class Extra(Good):
        def __init__(self, d, mask=True):
            super().__init__(d, mask)
            self.extra = nn.Parameter(torch.zeros(2))
""")


def _outcome(fn):
    """What building and loading gave: the exception (type and message), else the module's weights as loaded."""
    try:
        handle = fn()
    except Exception as exc:  # noqa: BLE001 - the outcome, whatever it is, is what is compared
        return type(exc).__name__, str(exc)
    module = handle.proxy.executor.handles[handle.handle]  # in-process (LocalStudent): the module itself
    return "ok", {name: p.detach().flatten().tolist() for name, p in module.named_parameters()}


@pytest.mark.parametrize("cls", ["Good", "BadTo", "BadState", "BadLoad", "WrongName", "WrongShape", "Extra"])
@pytest.mark.parametrize("mask", [True, False])
def test_a_module_built_in_one_request_fails_or_loads_as_the_separate_calls_do(cls, mask):
    """new_module (new + cast + state + load in one request) against new, .to, load_weights made separately:
    the same exception with the same message, or the same state."""
    from autograder.graders.attention import load_weights, new_module

    namespace: dict = {}
    exec(MODULES, namespace)
    weights = {"W_query.weight": torch.arange(9, dtype=torch.float64).reshape(3, 3) / 10}

    def separate():
        student = LocalStudent(dict(namespace))
        handle = student.new(cls, 3, mask=mask, seed=123)
        handle.to(dtype=torch.float64)
        load_weights(handle, weights, f"{cls}(3)")
        return handle

    def together():
        student = LocalStudent(dict(namespace))
        return new_module(student, cls, 3, mask=mask, weights=weights, what=f"{cls}(3)", dtype=torch.float64)

    expected = _outcome(separate)
    assert _outcome(together) == expected
    if cls == "Good" or (cls == "BadState" and not mask):  # without buffers the state is never read
        assert expected[0] == "ok" and expected[1]["W_query.weight"][3:6] == [0.3, 0.4, 0.5]
    else:
        assert expected[0] != "ok"


def test_a_module_built_in_one_request_in_the_sandbox(sb):
    from autograder.graders.attention import new_module

    weights = {"W_query.weight": torch.eye(3, dtype=torch.float64) * 2}
    proxy = sb.open(MODULES, "/submission/modules.py")
    try:
        handle = new_module(proxy, "Good", 3, weights=weights, what="Good(3)", dtype=torch.float64)
        state = handle.state()
        assert state["W_query.weight"].t.tolist() == (torch.eye(3) * 2).tolist()
        assert state["W_query.weight"].dtype == "float64" and state["mask"].t.tolist()[0] == [1.0, 0.0, 0.0]
        with pytest.raises(StudentCodeError, match="no loading either"):
            new_module(proxy, "BadLoad", 3, weights=weights, what="BadLoad(3)", dtype=torch.float64)
    finally:
        proxy.close()


# ───────────────────────────── a grade of record: uid, limits, IPC, signals, the child's area, timeouts ──────

ISOLATION = FORK_LOOP + textwrap.dedent("""
    import ctypes, errno, os, signal, time

    def who(x):
        status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
        return {"res": list(os.getresuid()), "gids": list(os.getresgid()), "groups": os.getgroups(),
                "cap_eff": status["CapEff"].strip(), "cap_prm": status["CapPrm"].strip(),
                "no_new_privs": status["NoNewPrivs"].strip()}

    KEY = 0x5EC2E7
    def _libc():
        return ctypes.CDLL(None, use_errno=True)
    def leave_ipc(x):
        libc = _libc()
        made = [libc.msgget(KEY, 0o1666), libc.semget(KEY, 1, 0o1666)]
        return [m >= 0 for m in made]
    def find_ipc(x):
        libc = _libc()
        return [libc.msgget(KEY, 0o666) >= 0, libc.semget(KEY, 0, 0o666) >= 0]
    def leave_and_find_ipc(x):
        return leave_ipc(x) + find_ipc(x)

    def refused_calls(x):
        import subprocess, sys
        out = {}
        try:
            os.close(os.memfd_create("held"))
            out["memfd_create"] = "allowed"
        except OSError as exc:
            out["memfd_create"] = exc.errno
        libc = _libc()
        out["shmget"] = "allowed" if libc.shmget(KEY + 1, 4096, 0o1666) >= 0 else ctypes.get_errno()
        out["msgget"] = "allowed" if libc.msgget(KEY + 2, 0o1666) >= 0 else ctypes.get_errno()
        out["semget"] = "allowed" if libc.semget(KEY + 3, 1, 0o1666) >= 0 else ctypes.get_errno()
        out["unshare"] = "allowed" if libc.unshare(0x10000000) == 0 else ctypes.get_errno()  # CLONE_NEWUSER
        add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
        libc.syscall.restype = ctypes.c_long
        made = libc.syscall(ctypes.c_long(add_key), b"user", b"probe", b"x", ctypes.c_long(1), ctypes.c_long(-3))
        out["add_key"] = "allowed" if made > 0 else ctypes.get_errno()
        # KEYCTL_GET_KEYRING_ID of the session keyring: answered for any process that may call keyctl
        out["keyctl"] = "allowed" if libc.syscall(ctypes.c_long(keyctl), 0, -3, 0) > 0 else ctypes.get_errno()
        import threading
        ran = []
        thread = threading.Thread(target=ran.append, args=(1,))  # clone3 refused: the C library falls back to clone
        thread.start()
        thread.join()
        out["thread"] = ran == [1]
        import socket
        for name, make in (("socketpair", socket.socketpair), ("pipe", os.pipe)):
            try:
                ends = make()
                out[name] = "allowed"
                for end in ends:
                    end.close() if hasattr(end, "close") else os.close(end)
            except OSError as exc:
                out[name] = exc.errno
        try:
            subprocess.run([sys.executable, "-c", "0"], check=False)
            out["execve"] = "allowed"
        except OSError as exc:
            out["execve"] = exc.errno
        pid = os.fork()  # a process of its own may still be started: a fork runs no new program
        if pid == 0:
            os._exit(7)
        out["fork"] = os.WEXITSTATUS(os.waitpid(pid, 0)[1])
        return out

    def hold_shared(mb):
        import mmap
        pids = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                block = mmap.mmap(-1, mb << 20, flags=mmap.MAP_SHARED)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(30)
                os._exit(0)
            pids.append(pid)
        time.sleep(2.5)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        return mb

    def make_entries(kind, n):
        base = f"/tmp/{kind}"
        os.mkdir(base)
        if kind in ("hardlinks", "xattrs"):
            os.close(os.open(base + "/target", os.O_CREAT | os.O_WRONLY, 0o600))
        helper = os.fork() if kind == "forked" else None
        if helper:
            os.waitpid(helper, 0)
            return len(os.listdir(base))
        made, started = 0, time.monotonic()
        while made < n and time.monotonic() - started < 4:
            path = f"{base}/e{made}"
            if kind == "folders":
                os.mkdir(path)
            elif kind == "symlinks":
                os.symlink("/tmp", path)
            elif kind == "hardlinks":
                os.link(base + "/target", path)
            elif kind == "xattrs":  # tmpfs (Linux 6.6 on) counts their bytes against its inodes
                try:
                    os.setxattr(base + "/target", f"user.e{made}", b"x" * 60000)
                except OSError as exc:
                    if exc.errno == errno.EOPNOTSUPP:
                        return -1
                    raise
            else:
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
            made += 1
        if helper == 0:
            os._exit(0)
        return made

    def interrupt_pid_1(x):
        sent = []
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGQUIT, signal.SIGALRM):
            try:
                os.kill(1, sig)
                sent.append(sig.name)
            except OSError:
                pass
        time.sleep(0.3)
        return sent
    def pid_1_ignores(x):
        status = open("/proc/1/status").read()
        ignored = int(status.split("SigIgn:")[1].split()[0], 16)
        return [bool(ignored >> (s - 1) & 1) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1)]
    def my_signals(x):
        return [signal.getsignal(s) == signal.SIG_DFL for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]

    def output_fifo(x):
        os.unlink(".output")
        os.mkfifo(".output")
        return 1
    def output_zero(x):
        os.unlink(".output")
        os.symlink("/dev/zero", ".output")
        return 1
    def output_honest(x):
        print("hello from the learner", flush=True)
        return 1
""")


def _last_exit(sb, name, source=ISOLATION):
    proxy = sb.open(source, "/submission/isolation.py")
    try:
        value = proxy.call(name, 0)
    finally:
        proxy.close()
    return value, proxy.last_exit


@pytest.mark.skipif(os.geteuid() != 0, reason="a judge that is not root has no other uid to give")
def test_learner_code_never_runs_as_root(sb):
    """As root (the interpreter in root's 0700 home, as on this machine), learner code runs under the sandbox's
    own uid, with no capability and no way to gain one, bubblewrap or not."""
    me = _call(sb, "who", 0, source=ISOLATION)
    assert sb.uid is not None and sb.uid >= 60000 and sb.info["learner_uid"] == sb.uid
    assert me["res"] == [sb.uid] * 3 and me["gids"] == [sb.uid] * 3 and me["groups"] == []
    assert int(me["cap_eff"], 16) == 0 and int(me["cap_prm"], 16) == 0 and me["no_new_privs"] == "1"


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds only a uid of the sandbox's own")
def test_rlimit_nproc_holds_for_learner_code():
    """A spawn loop is stopped near Limits.nproc (the child itself counts); the control, a sandbox with a larger
    limit, goes further, so the limit (not something else) stopped it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = Sandbox(Limits(call_timeout=10, nproc=20)).start()
    try:
        stopped = _call(small, "fork_until_refused", 0, source=ISOLATION)
        again = _call(small, "fork_until_refused", 0, source=ISOLATION)  # every process of the last child is gone
    finally:
        small.close()
    assert 15 <= stopped < 20 and again == stopped


def test_each_child_has_its_own_sysv_ipc_namespace(sb):
    """Message queues and semaphores one student's process makes are not there for the next one. The control: the
    same process does find what it made. Where the seccomp filter refuses SysV IPC altogether (tested below), no
    child can make any, and the namespace of its own (which the zygote checked it can give) is what would hold
    without the filter. (A namespace's inode cannot tell two children apart: the kernel reuses the number.)"""
    if not sb.info["ipc_namespace_per_process"]:
        pytest.skip("this sandbox cannot give each child an IPC namespace (reported in its isolation)")
    if {"msgget", "semget"} <= set(sb.info["seccomp_refuses"]):
        assert _call(sb, "leave_and_find_ipc", 0, source=ISOLATION) == [False] * 4  # refused: none is made
        return
    assert _call(sb, "leave_and_find_ipc", 0, source=ISOLATION) == [True] * 4  # control
    assert _call(sb, "leave_ipc", 0, source=ISOLATION) == [True] * 2
    assert _call(sb, "find_ipc", 0, source=ISOLATION) == [False] * 2


def test_learner_code_can_start_no_program_and_hold_no_unmapped_memory(sb):
    """The children's seccomp filter: starting a program (a fresh interpreter would not have the stage's guards),
    a memfd, SysV shared memory, message queues and semaphores, a socket pair and a pipe (memory no process maps,
    which no memory budget sees: the buffers of the socket pairs one process may open held 46 MB, the message
    queues of one IPC namespace 500 MB), a user namespace of its own (root over new mount and IPC namespaces: a
    tmpfs of any size) and kernel keyrings (keys outlive the child) are refused with EPERM; a fork and a thread are
    not. The control: a memfd, a socket pair, a
    pipe and a program in the judge's own process."""
    if not sb.info["seccomp_refuses"]:
        pytest.skip("no seccomp filter here (reported loudly in the sandbox's isolation)")
    assert {"execve", "execveat", "shmget", "add_key", "keyctl"} <= set(sb.info["seccomp_refuses"])
    assert "a seccomp filter" in sb.isolation and "no kernel keyrings" in sb.isolation
    os.close(os.memfd_create("control"))
    for end in socket.socketpair():
        end.close()
    for end in os.pipe():
        os.close(end)
    assert subprocess.run([sys.executable, "-c", "0"]).returncode == 0
    refused = _call(sb, "refused_calls", 0, source=ISOLATION)
    # with torch built for an accelerator, memfd_create, sockets and pipes stay allowed (its driver needs a memfd),
    # and the loss is reported
    driver = "allowed" if "memfd_create" not in sb.info["seccomp_refuses"] else errno.EPERM
    assert driver == errno.EPERM or any(
        "memfd_create, sockets and pipes stay allowed" in lost for lost in sb.info["lost"]
    )
    assert refused == {
        "memfd_create": driver,
        "shmget": errno.EPERM,
        "msgget": errno.EPERM,
        "semget": errno.EPERM,
        "unshare": errno.EPERM,
        "add_key": errno.EPERM,
        "keyctl": errno.EPERM,
        "thread": True,
        "socketpair": driver,
        "pipe": driver,
        "execve": errno.EPERM,
        "fork": 7,
    }


def test_shared_memory_counts_towards_the_memory_budget(sb):
    """Pages mapped MAP_SHARED | MAP_ANONYMOUS are resident but not private: the budget counts them. Two processes
    of a child holding 300 MB each (past the 544 MB budget of memory_mb=384) end the child for memory; the control,
    100 MB each, comes back."""
    assert _call(sb, "hold_shared", 100, source=ISOLATION) == 100
    proxy = sb.open(ISOLATION, "/submission/isolation.py")
    try:
        with pytest.raises(StudentCrashed, match="more memory than allowed"):
            proxy.call("hold_shared", 300)
    finally:
        proxy.close()


@pytest.mark.parametrize("kind", ["files", "folders", "symlinks", "hardlinks", "forked", "xattrs"])
def test_a_child_that_floods_tmp_with_entries_is_stopped(bwrap_sb, kind):
    """Each file, folder or link in /tmp holds kernel memory that neither the tmpfs's byte size nor the memory
    budget counts (711,000 empty files in 5 s held 700 MB), and so do extended attributes (120 MB on one file),
    which tmpfs counts against its inodes, a kilobyte each. Past ``Limits.tmp_files`` (10,000) entries, made by
    the child or by a process it started, the child is ended; the control, 3,000 entries (100 attributes of 60 KB),
    comes back, and the next child starts with an empty /tmp."""
    sb = bwrap_sb
    control = 100 if kind == "xattrs" else 3000
    made = _call(sb, "make_entries", kind, control, source=ISOLATION)
    if made == -1:
        pytest.skip("this kernel's tmpfs has no user extended attributes (Linux 6.6 on)")
    assert made == control
    proxy = sb.open(ISOLATION, "/submission/isolation.py")
    try:
        with pytest.raises(StudentCrashed, match="more files, folders or links in /tmp than allowed"):
            proxy.call("make_entries", kind, 10**8)
    finally:
        proxy.close()
    assert _call(sb, "make_entries", kind, control, source=ISOLATION) == control


def test_no_learner_signal_stops_the_zygote(sb):
    """os.kill(1, SIGINT) raised KeyboardInterrupt in the zygote (Python's handler), which restarted it: the
    zygote now ignores every signal it does not need, and its children get the defaults back."""
    starts = sb.starts
    if sb.kind == "bwrap":
        assert _call(sb, "pid_1_ignores", 0, source=ISOLATION) == [True] * 4
    _call(sb, "interrupt_pid_1", 0, source=ISOLATION)
    assert _call(sb, "my_signals", 0, source=ISOLATION) == [True] * 3
    assert sb.starts == starts and sb.proc.poll() is None


@pytest.mark.parametrize("trick", ["output_fifo", "output_zero"])
def test_what_a_child_leaves_in_its_area_is_read_safely(sb, trick):
    """The zygote reads a child's output file without following links, without blocking, only when it is a
    regular file and at most 2000 bytes: a FIFO stalled each child's end by 32 s, a link to /dev/zero grew the
    zygote without limit. The control prints, and its output comes back."""
    started = time.monotonic()
    value, info = _last_exit(sb, "output_honest")
    honest = time.monotonic() - started
    assert value == 1 and "hello from the learner" in info["output_tail"]
    started = time.monotonic()
    value, info = _last_exit(sb, trick)
    assert value == 1 and info["output_tail"] == "" and not info.get("lost")
    assert time.monotonic() - started < honest + 2.0
    assert _call(sb, "by_hand", Q).shape == Q.shape


def test_read_tail_refuses_links_fifos_and_bounds_the_read(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 10_000 + b"END")
    assert zygote.read_tail(str(tmp_path), "big") == (b"x" * 10_000 + b"END")[-2000:]
    os.symlink(tmp_path / "big", tmp_path / "link")
    os.symlink("/dev/zero", tmp_path / "zero")
    os.mkfifo(tmp_path / "fifo")
    started = time.monotonic()
    for name in ("link", "zero", "fifo", "missing"):
        assert zygote.read_tail(str(tmp_path), name) == b""
    assert time.monotonic() - started < 1


def test_a_hang_costs_one_timeout_per_stage(course):
    """After a timeout the stage's remaining checks are skipped with a clear message (no restart, no second
    hang): a stage with an endless loop on a 1.5 s timeout ends in about one timeout, not three."""
    from autograder.runner import Submission, grade

    loop = "import torch\n\n\ndef causal_mean_loop(x):\n    while True:\n        pass\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = Sandbox(Limits(call_timeout=1.5, max_restarts=2)).start()
    try:
        started = time.monotonic()
        result = grade(
            course,
            [Submission("hangs", sources={"loop_average": ("01_loop_average.py", loop)})],
            stages=["loop_average"],
            devices=["cpu"],
            seed=3,
            sandbox=box,
        )[0]
        elapsed = time.monotonic() - started
    finally:
        box.close()
    checks = result.stages[0].checks
    assert result.score == 0 and len(checks) > 2
    assert sum("did not finish within 1.5 s" in c.message and not c.message.startswith("skipped") for c in checks) == 1
    assert all("did not finish" in c.message for c in checks)
    assert (
        sum(c.message.startswith("skipped: an earlier check of this stage did not finish in time") for c in checks)
        == len(checks) - 1
    )
    assert elapsed < 1.5 * 2 + 3, f"{elapsed:.1f} s"


def test_a_stage_of_calls_each_under_the_timeout_ends_at_its_budget():
    """Calls that each answer before the call timeout still end the stage once they have taken the stage's budget
    together: the call that exhausts it times out, and the stage's later calls are skipped, not run."""
    slow = "import time\n\n\ndef f(x):\n    time.sleep(0.7)\n    return x\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = Sandbox(Limits(call_timeout=1.0, stage_timeout=2.0)).start()
    try:
        student = box.open(slow, "/slow.py")
        answered = 0
        with pytest.raises(StudentTimeout, match="took more than 2 s together"):
            for _ in range(10):
                student.call("f", 1)
                answered += 1
        assert answered == 2  # 0.7 s each: the third would end past 2 s
        with pytest.raises(StudentTimeout, match="skipped: an earlier check of this stage did not finish in time"):
            student.call("f", 1)
        assert Limits(call_timeout=4).stage_budget == 12  # three call timeouts unless set
    finally:
        box.close()


_WARM_UP_WITH_AN_ACCELERATOR = """
import sys
import torch

def refuse(what):
    def call(*args, **kwargs):
        raise SystemExit(f"the warm-up called {what}")
    return call

# torch built for CUDA: every child is forked from the zygote, and a child whose parent asked the driver for its
# devices (is_available, device_count) or started autograd (its device threads ask the driver) can use neither
# CUDA nor autograd
torch.backends.cuda.is_built = lambda: True
torch.cuda.is_available = refuse("torch.cuda.is_available")
torch.cuda.device_count = refuse("torch.cuda.device_count")
torch._C._cuda_getDeviceCount = refuse("cudaGetDeviceCount")
torch.autograd.backward = refuse("autograd (a backward)")
torch.Tensor.backward = refuse("autograd (a backward)")
from autograder.runtime import zygote, torchrefs
zygote.warm_up()
assert torchrefs.capture_torch().manual_seed is torch.manual_seed, "a CUDA build must seed its devices too"
print("ok")
"""


def test_the_warm_up_never_touches_an_accelerator_before_children_are_forked():
    """With torch built for an accelerator, the zygote's warm-up neither asks the driver anything nor runs
    autograd, and seeds with torch.manual_seed (which also seeds the devices); on a CPU-only build it warms
    autograd too. (On a GPU machine tests/device_parity.py grades every stage on CUDA.)"""
    import subprocess

    run = subprocess.run(
        [sys.executable, "-c", _WARM_UP_WITH_AN_ACCELERATOR], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


_FUSED = """
import torch
import torch.nn.functional as F

def sdpa(q):
    return F.scaled_dot_product_attention(q, q, q, is_causal=True)

def sdpa_on_a_thread(q):
    import threading
    box = {}
    def run():
        try:
            box["out"] = F.scaled_dot_product_attention(q, q, q)
        except BaseException:
            pass
    t = threading.Thread(target=run)
    t.start()
    t.join()
    return box.get("out", q)

def mha(q):
    m = torch.nn.MultiheadAttention(q.shape[-1], 1, batch_first=True)
    return m(q, q, q)[0]
"""


def test_fused_attention_is_off_only_in_a_stage_written_by_hand(sb):
    """A stage written by hand gets a child whose fused attention kernels end it, however they are reached (an
    exception swallowed on a thread included) and whatever the call: the judge reads the exit status and names
    what was reached. Other stages keep the fused kernels, also after such a child (it is switched off in the
    child, never in the zygote they are all forked from)."""
    q = torch.randn(1, 3, 4, dtype=torch.float64)
    expected = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)

    def fused_works():
        proxy = sb.open(_FUSED, "/submission/fused.py")
        try:
            return torch.allclose(proxy.call("sdpa", q).t, expected)
        finally:
            proxy.close()

    assert fused_works()
    for name, what in (
        ("sdpa", "fused attention kernel"),
        ("sdpa_on_a_thread", "fused attention kernel"),
        ("mha", "nn.MultiheadAttention"),
    ):
        proxy = sb.open(_FUSED, "/submission/fused.py", by_hand=True)
        try:
            with pytest.raises(StudentCrashed, match=f"your code reached .*{what}.*switched off in this stage"):
                proxy.call(name, q)
        finally:
            proxy.close()
    assert fused_works()


def test_an_error_of_the_judge_between_replies_of_a_batch_is_not_the_learners(sb, monkeypatch):
    """When the judge fails while reading a batch's answers (its own bug), the replies still on their way must not
    answer its next requests (which then blamed the learner for writing to the grading channel): the child ends,
    without counting against the stage, and the next call gets a fresh one."""
    from autograder.sandbox import proxy as proxy_module
    from autograder.sandbox.values import Call

    calls = {"n": 0}
    real = proxy_module.asked_dtype

    def fails_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise NameError("a bug of the judge's")
        return real(*args, **kwargs)

    student = sb.open(PROBES, "/submission/probe.py")
    try:
        monkeypatch.setattr(proxy_module, "asked_dtype", fails_once)
        with pytest.raises(NameError):
            student.call_all([Call("echo", i) for i in range(4)])
        monkeypatch.setattr(proxy_module, "asked_dtype", real)
        assert student.call("echo", 7) == 7
        assert student.restarts == 0
    finally:
        student.close()
