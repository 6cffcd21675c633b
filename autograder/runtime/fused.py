"""Fused attention kernels switched off in a child, for a stage that must be written by hand.

The graph the judge replays cannot tell code that torch generated at run time from a fused kernel (``make_fx``
with torch's decomposition tables, in a call that is not recorded, or at import) from code written by hand: both
are plain ops. So in such a stage the kernels themselves do not run in the child: every ATen op whose name says
it is an attention kernel (:data:`WORDS`) gets a kernel, on every dispatch key it has one (nested-tensor ones too), that
ends the child at once with :data:`EXIT_CODE` (an exception could be caught, or lost on a thread). The judge reads
that exit status from the zygote, not from anything the learner's process says, and names it (:data:`MESSAGE`).
The registration's handle is leaked (one reference more, then dropped), so no Python object reaches it and
nothing short of writing the process's memory (``ctypes``) can restore the original kernels."""

from __future__ import annotations

import ctypes
import os

# words of the ATen ops switched off, the judge's FORBIDDEN_WORDS too: every ATen op whose name holds "attention"
# is a fused attention kernel or entry point (scaled_dot_product_attention and its flash, efficient, cudnn and
# math kernels, _native_multi_head_attention (nn.MultiheadAttention's fast path), the _triton_ ones, ...), and the
# transformer layer's fused forward runs one inside
WORDS = ("attention", "transformer_encoder_layer")
MESSAGE = (
    "a fused attention kernel (scaled_dot_product_attention, nn.MultiheadAttention's fast path, or one of their "
    "kernels), switched off in this stage"
)
EXIT_CODE = 86  # the child's exit status when its code reached a fused kernel
# F.multi_head_attention_forward (nn.MultiheadAttention) and torch.ao's quantizable MultiheadAttention are plain
# Python; the worker's wrappers of them dispatch a mark op of the autograder namespace first
# (recorder.mark_entry_points), switched off too, so that it is named for what it is
MHA_MESSAGE = (
    "nn.MultiheadAttention (F.multi_head_attention_forward, or torch.ao's quantizable MultiheadAttention), switched "
    "off in this stage"
)
MHA_EXIT_CODE = 87
# the node a recorded graph gets when an op is dispatched from torch's own Python attention code, found by the code
# on the stack (recorder._torch_attention_frames): a forbidden shortcut to the judge (its name holds "attention");
# not an op, never replayed
TORCH_CODE_MARK = "autograder.torch_attention_code"
_exit = os._exit  # bound before any learner code runs


def _refuse(*args, **kwargs):
    _exit(EXIT_CODE)


def _refuse_mha(*args, **kwargs):
    _exit(MHA_EXIT_CODE)


_TARGETS: list[tuple[str, str, str]] = []  # (namespace, op, dispatch key) to switch off; found once per process


def targets() -> list[tuple[str, str, str]]:
    """The kernels :func:`switch_off` replaces, found once (the zygote does it before it forks: listing every op
    costs milliseconds a child need not pay)."""
    import torch

    if not _TARGETS:
        names = torch._C._dispatch_get_all_op_names()
        for full in names:
            if full.startswith("aten::") and any(word in full for word in WORDS):
                for key in _dispatch_keys():
                    if torch._C._dispatch_has_kernel_for_dispatch_key(full, key):
                        _TARGETS.append(("aten", full.split("::", 1)[1], key))
        if "autograder::multi_head_attention_forward" in names:  # the worker's mark (recorder.mark_entry_points)
            _TARGETS.append(("autograder", "multi_head_attention_forward", "CompositeExplicitAutograd"))
    return _TARGETS


def _dispatch_keys() -> list[str]:
    """Every dispatch key a kernel can be registered for: the dense backends, and also the nested-tensor (whose
    CPU kernel of ``_native_multi_head_attention`` is a whole fused attention), sparse, quantized, autocast and
    functorch ones (the range markers, which are not keys a kernel can have, are left out)."""
    import torch

    keys = []
    for key in torch._C.DispatchKey.__members__:
        try:
            torch._C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", key)
        except RuntimeError:
            continue
        keys.append(key)
    return keys


def switch_off() -> int:
    """Switches the fused attention kernels off in this process, for good; returns how many kernels it replaced."""
    import warnings

    import torch

    libraries = {namespace: torch._C._dispatch_library("IMPL", namespace, "") for namespace in ("aten", "autograder")}
    found = targets()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that an existing kernel is overridden: that is the point
        for namespace, op, key in found:
            libraries[namespace].impl(op, key, _refuse_mha if namespace == "autograder" else _refuse)
    for library in libraries.values():  # never freed: the registrations outlive every reference
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(library))
    del libraries
    return len(found)
