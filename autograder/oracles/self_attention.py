"""Stage 6: self-attention with learned query, key and value projections.

References take the module's weights explicitly, in the ``state_dict`` layout the learner's module uses:
``{"W_query": (d_in, d_out), ...}`` for ``SelfAttentionParams`` and ``{"W_query.weight": (d_out, d_in),
"W_query.bias": (d_out,), ...}`` for ``SelfAttentionLinear``. The judge loads the same weights into the
learner's module, so both sides compute with identical numbers.
"""

import math

import torch
import torch.nn.functional as F

from autograder.graders import attention as m

QKV = ("W_query", "W_key", "W_value")


def attend(
    q,
    k,
    v,
    *,
    scale=None,
    dim=-1,
    allowed=None,
    fill=float("-inf"),
    mask_after=False,
    scale_after=False,
    floor=False,
    swapped=False,
    times=False,
):
    """softmax(q k^T / scale) v, with an optional (T_q, T_k) bool pattern of the pairs that may attend.

    The keyword arguments exist to write the known mistakes as small changes of the same code: ``floor``, the
    scores floor-divided (``scores // scale``); ``swapped``, the scores of ``k @ q^T`` (their transpose);
    ``times``, the scores multiplied by the scale instead of divided."""
    divisor = math.sqrt(k.shape[-1]) if scale is None else scale
    divisor = 1.0 / divisor if times else divisor
    scores = k @ q.transpose(-2, -1) if swapped else q @ k.transpose(-2, -1)
    if not scale_after:
        scores = torch.div(scores, divisor, rounding_mode="floor") if floor else scores / divisor
    if allowed is not None and not mask_after:
        scores = scores.masked_fill(~allowed, fill)
    weights = torch.softmax(scores, dim=dim)
    if scale_after:
        weights = weights / divisor
    if allowed is not None and mask_after:
        weights = weights.masked_fill(~allowed, 0.0)
    return weights @ v


def project_params(x, state):
    return tuple(x @ state[name] for name in QKV)


def project_linear(x, state):
    return tuple(F.linear(x, state[f"{name}.weight"], state.get(f"{name}.bias")) for name in QKV)


def self_attention_params(x, state):
    return attend(*project_params(x, state))


def self_attention_linear(x, state):
    return attend(*project_linear(x, state))


def reference_grad(forward, which: str, x, upstream, state, *args):
    """d(sum(forward(x, state) * upstream)) / d(state[which]), by autograd in float64.

    One backward pass gives the gradient of every entry of ``state``; graders ask for them one name at a time,
    so the last pass's gradients are kept and reused while the inputs are the same tensors, unchanged (same
    storage, shape, strides, dtype and version counter; the kept references stop the storage being reused)."""
    key = (
        forward,
        _identity(x),
        _identity(upstream),
        tuple((n, _identity(t)) for n, t in state.items()),
        tuple(_identity(a) for a in args),
    )
    if not _LAST_GRADS or _LAST_GRADS[0] != key:
        with torch.enable_grad():
            leaves = {n: t.detach().to(torch.float64).clone().requires_grad_(True) for n, t in state.items()}
            out = forward(x.to(torch.float64), leaves, *args)
            (out * upstream.to(torch.float64)).sum().backward()
        grads = {n: torch.zeros_like(t) if t.grad is None else t.grad.detach() for n, t in leaves.items()}
        _LAST_GRADS[:] = [key, (x, upstream, dict(state), args), grads]
    return _LAST_GRADS[2][which].clone()


_LAST_GRADS: list = []  # [key, the inputs (kept alive), {name: gradient}] of the last backward pass


def _identity(t):
    if not isinstance(t, torch.Tensor):
        return ("value", t)
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device, t._version)


def self_attention_params_grad(which, x, upstream, state):
    return reference_grad(self_attention_params, which, x, upstream, state)


def self_attention_linear_grad(which, x, upstream, state):
    return reference_grad(self_attention_linear, which, x, upstream, state)


def causal(T: int) -> torch.Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()


def without_biases(state):
    """The state of nn.Linear layers whose weights are applied by hand (``x @ W.weight.T``): no bias is added."""
    return {name: t for name, t in state.items() if not name.endswith(".bias")}


def _variants(project):
    def run(**kw):
        return lambda x, state: attend(*project(x, state), **kw)

    return {
        m.MISSING_SCALE: run(scale=1.0),
        m.SCALE_D_IN: lambda x, state: attend(*project(x, state), scale=math.sqrt(x.shape[-1])),
        m.SCALE_NO_SQRT: lambda x, state: attend(*project(x, state), scale=float(project(x, state)[1].shape[-1])),
        m.SCALE_T: lambda x, state: attend(*project(x, state), scale=math.sqrt(x.shape[-2])),
        m.SOFTMAX_DIM: run(dim=-2),
        m.SCALE_AFTER_SOFTMAX: run(scale_after=True),
        m.SCALE_TIMES: run(times=True),
        m.FLOOR_DIVIDED: run(floor=True),
        # with W_query == W_key the scores are symmetric and the swap changes nothing (then it is not named)
        m.QK_SWAPPED: run(swapped=True),
        m.MASK_IN_STAGE_6: lambda x, state: attend(*project(x, state), allowed=causal(x.shape[-2])),
    }


EXPECTED = {
    "self_attention_params": self_attention_params,
    "self_attention_linear": self_attention_linear,
    "self_attention_params_grad": self_attention_params_grad,
    "self_attention_linear_grad": self_attention_linear_grad,
}
MISTAKES = {
    "self_attention_params": _variants(project_params),
    "self_attention_linear": {
        **_variants(project_linear),
        m.BIAS_NOT_ADDED: lambda x, state: self_attention_linear(x, without_biases(state)),
    },
}
