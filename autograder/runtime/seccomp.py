"""A seccomp filter for learner processes: the system calls no stage needs and that would undo the sandbox's other
promises fail with EPERM, in the child and in everything it starts (a filter is inherited and cannot be removed).

- ``execve`` / ``execveat``: a fresh interpreter started by the learner's code would not have the fused attention
  kernels switched off (:mod:`.fused`), and could run ``make_fx`` over torch's own attention to hand back plain
  ops; nor would any other per-process guard of the child hold there.
- ``memfd_create``, ``memfd_secret``, ``shmget``: memory that no process maps (pages written into a memfd, a
  SysV segment after ``shmdt``) is in no process's resident set, so the zygote's whole-sandbox memory budget
  could not see it; nor does the sandbox's /tmp size bound it.
- ``socket``, ``socketpair``, ``pipe``, ``pipe2``: data written into a socket or a pipe and never read is kernel
  memory of no process (about 46 MB in the socket pairs one process may open, times 64 processes); no stage needs
  either (the child's own channel to the judge is made before the filter). Without bubblewrap's network namespace,
  this is also what keeps learner code off the network.
- ``msgget``, ``semget`` (with ``shmget``, all of SysV IPC): a child's own IPC namespace allows 32,000 message
  queues of 16 KB (about 500 MB of kernel memory, measured) and semaphore sets of kernel memory no budget sees.
- ``unshare``, ``setns``, and ``clone`` with any ``CLONE_NEW*`` flag: a user namespace of the learner's own gives
  it the powers of root over new mount and IPC namespaces (a tmpfs of any size, a fresh 500 MB of message queues
  per nested namespace); ``clone3``, whose flags a filter cannot read, fails with ENOSYS (the C library then starts
  threads and processes with ``clone``, whose flags it can).
- ``io_uring_setup``: io_uring's operations are not system calls, so no filter would see them.
- ``add_key``, ``request_key``, ``keyctl``: kernel keyrings are not files. A key one child stores in its uid's user
  or persistent keyring outlives it (a persistent keyring for days) for the next child of its slot to read, and a
  key is kernel memory of no process. Refused, no child can store or read one, and the keyrings need no reset per
  child (a reset that, as root, itself made each slot's uid a persistent keyring the kernel keeps for three days
  and a user keyring it keeps until reboot).

Where torch is built for an accelerator, ``memfd_create`` and the socket and pipe calls stay allowed (the CUDA driver
needs a memfd to initialise; the others are not refused where a driver's use of them has not been tried): the sandbox
reports that loss.

System calls of another ABI than the interpreter's (x32, or 32-bit calls on x86-64) are refused alike, so the same
call cannot be made under another number. Linux on x86-64 and aarch64 only; :func:`program` is None elsewhere,
and the zygote then says that learner code runs without the filter (:func:`autograder.sandbox.host._describe`)."""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

# (audit arch, syscall numbers refused) per machine; numbers from the kernel's syscall tables
_ARCH = {
    "x86_64": (
        0xC000003E,  # AUDIT_ARCH_X86_64
        {
            "execve": 59,
            "execveat": 322,
            "memfd_create": 319,
            "memfd_secret": 447,
            "shmget": 29,
            "msgget": 68,
            "semget": 64,
            "socket": 41,
            "socketpair": 53,
            "pipe": 22,
            "pipe2": 293,
            "unshare": 272,
            "setns": 308,
            "io_uring_setup": 425,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
        },
    ),
    "aarch64": (
        0xC00000B7,  # AUDIT_ARCH_AARCH64
        {
            "execve": 221,
            "execveat": 281,
            "memfd_create": 279,
            "memfd_secret": 447,
            "shmget": 194,
            "msgget": 186,
            "semget": 190,
            "socket": 198,
            "socketpair": 199,
            "pipe2": 59,  # (no pipe on aarch64)
            "unshare": 97,
            "setns": 268,
            "io_uring_setup": 425,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
        },
    ),
}
_CLONE = {"x86_64": 56, "aarch64": 220}  # refused when its flags (argument 0 on both) ask for a new namespace
_CLONE3 = 435  # the same number on both
# CLONE_NEWTIME, CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET
_CLONE_NEW_ANY = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
# what an accelerator's driver needs in the learner's process, allowed where torch is built for one
DRIVER_NEEDS = frozenset({"memfd_create", "socket", "socketpair", "pipe", "pipe2"})
_X32_BIT = 0x40000000  # x86-64 syscall numbers at or above this are the x32 ABI's
# BPF opcodes: BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_JMP|BPF_JGE|BPF_K, BPF_JMP|BPF_JSET|BPF_K, BPF_RET|BPF_K
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
# SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ERRNO | ENOSYS
_ALLOW, _DENY, _NOSYS = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
_ARG0 = 16  # offset of the low 32 bits of seccomp_data.args[0] (little-endian machines only, as both above are)
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def number(name: str) -> int | None:
    """The syscall number of ``name`` on this machine, from the filter's table (None where it has none)."""
    arch = _ARCH.get(platform.machine())
    return arch[1].get(name) if arch is not None else None


def refused(accelerator: bool = False) -> list[str]:
    """The names of the system calls the filter refuses on this machine (none where there is no filter);
    ``accelerator``: torch is built for one, whose driver needs :data:`DRIVER_NEEDS`."""
    arch = _ARCH.get(platform.machine())
    if arch is None:
        return []
    names = [n for n in arch[1] if not (accelerator and n in DRIVER_NEEDS)]
    return sorted(names + ["clone (new namespaces)", "clone3"])


def program(accelerator: bool = False) -> _Prog | None:
    """The filter as a ``sock_fprog``, built once in the zygote (a child then makes one call to install it), or None
    where this machine has none; it refuses :func:`refused`."""
    arch = _ARCH.get(platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    calls = sorted(numbers[name] for name in refused(accelerator) if name in numbers)
    # (code, jump if true, jump if false, k); a jump is a label, resolved below to the forward offset BPF wants
    ops: list[tuple] = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 0, "deny", audit_arch), (_LD_W_ABS, 0, 0, 0)]
    if platform.machine() == "x86_64":
        ops.append((_JGE_K, "deny", 0, _X32_BIT))
    ops.append((_JEQ_K, "nosys", 0, _CLONE3))
    ops.append((_JEQ_K, "clone", 0, _CLONE[platform.machine()]))
    ops += [(_JEQ_K, "deny", 0, nr) for nr in calls]
    ops.append((_RET_K, 0, 0, _ALLOW))
    labels = {"clone": len(ops)}
    ops += [(_LD_W_ABS, 0, 0, _ARG0), (_JSET_K, "deny", 0, _CLONE_NEW_ANY), (_RET_K, 0, 0, _ALLOW)]
    labels["deny"] = len(ops)
    ops.append((_RET_K, 0, 0, _DENY))
    labels["nosys"] = len(ops)
    ops.append((_RET_K, 0, 0, _NOSYS))

    def offset(at: int, target) -> int:
        return target if isinstance(target, int) else labels[target] - at - 1

    ops = [(code, offset(i, jt), offset(i, jf), k) for i, (code, jt, jf, k) in enumerate(ops)]
    code = b"".join(struct.pack("HBBI", *op) for op in ops)
    return _Prog(len(ops), code)  # the structure keeps ``code`` alive (ctypes holds what a c_char_p field points to)


def install(prog: _Prog, libc) -> None:
    """Install ``prog`` in this process for good (no-new-privileges first, as the kernel asks of a process without
    CAP_SYS_ADMIN); raises OSError when it did not hold."""
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed: no seccomp filter")
