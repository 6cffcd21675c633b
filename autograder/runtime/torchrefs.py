"""The torch callables the executor and the recorder use after learner code has run, captured before it ran:
patching ``torch.Tensor`` or ``torch.nn`` from learner code changes nothing the worker relies on."""

from __future__ import annotations

# Bound as module globals before any learner code exists: a learner who replaces builtins.isinstance (or
# len, sorted, ...) later does not change what the worker's own code calls.
from builtins import (  # noqa: A004 - shadowing on purpose
    Exception,
    bool,
    getattr,
    int,
    tuple,
)

from typing import Any


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
    permute: Any
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
    r.detach, r.cpu, r.numpy, r.contiguous, r.permute = tb.detach, tb.cpu, tb.numpy, tb.contiguous, tb.permute
    r.to, r.clone, r.as_subclass, r.requires_grad_ = tb.to, tb.clone, tb.as_subclass, tb.requires_grad_
    r.is_floating_point, r.is_complex = tb.is_floating_point, tb.is_complex
    r.equal, r.from_numpy, r.zeros = torch.equal, torch.from_numpy, torch.zeros
    r.no_subclass = torch._C.DisableTorchFunctionSubclass
    r.enable_grad, r.no_grad, r.manual_seed = torch.enable_grad, torch.no_grad, torch.manual_seed
    accelerated = may_have_accelerator(torch)
    if not accelerated:
        # torch.manual_seed also queues a lazy seeding of every accelerator backend, each with a formatted
        # stack (about 1 ms per call); with none present only the CPU generator exists to be seeded
        r.manual_seed = _seed_cpu_only(torch.default_generator.manual_seed)
    r.backward = torch.autograd.backward
    r.mul, r.sum = torch.mul, torch.sum
    r.Module = torch.nn.Module
    r.dtype = torch.dtype
    r.numpy_ok = (
        torch.float32,
        torch.float64,
        torch.bool,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
    )
    r.halves = (torch.bfloat16, torch.float16)
    _T = r
    return r


def may_have_accelerator(torch) -> bool:
    """True when a device other than the CPU could ever be used in this process. Decided from how torch was
    built, never by asking a driver: the zygote forks every child after this, and a child whose parent has
    initialised CUDA (``torch.cuda.is_available()`` calls ``cudaGetDeviceCount``) can use neither CUDA nor
    autograd (seen on an H100: "CUDA error: initialization error")."""
    backends = torch.backends
    if backends.cuda.is_built() or (hasattr(backends, "mps") and backends.mps.is_built()):
        return True
    for name in ("xpu", "mtia"):
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
