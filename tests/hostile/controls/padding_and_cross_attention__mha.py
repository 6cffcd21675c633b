"""Control: the same code with plain nn.MultiheadAttention (identity projections, kept in a global dict): the
stage earns nothing."""
import torch
from torch import nn

_MHA = {}


def _mha(E, nh):
    """torch's MultiheadAttention (quantizable flavour), projections off; not registered as a submodule."""
    key = (E, nh)
    if key not in _MHA:
        state = torch.random.get_rng_state()
        m = nn.MultiheadAttention(E, nh, bias=False)  # control: the plain torch module
        torch.random.set_rng_state(state)
        with torch.no_grad():
            m.in_proj_weight.copy_(torch.cat([torch.eye(E)] * 3))
            m.out_proj.weight.copy_(torch.eye(E))
        _MHA[key] = m
    return _MHA[key]


def key_padding_mask(lengths, T, *, device=None):
    lengths = torch.as_tensor(lengths, device=device)
    return torch.arange(T, device=lengths.device)[None, :] < lengths[:, None]


def _ignore(kpm, N, T_k):
    """nn.MultiheadAttention's key_padding_mask (True = ignore); a sequence with no real key is left unmasked
    (its rows are zeroed afterwards) so that no NaN appears."""
    if kpm is None:
        return None, None
    empty = ~kpm.any(-1)  # (N,)
    return ~kpm & ~empty[:, None], empty


def masked_attention(q, k, v, *, key_padding_mask=None, causal=False):
    lead = q.shape[:-2]
    T_q, hs = q.shape[-2:]
    T_k, hs_v = k.shape[-2], v.shape[-1]
    q2, k2, v2 = q.reshape(-1, T_q, hs), k.reshape(-1, T_k, hs), v.reshape(-1, T_k, hs_v)
    N = q2.shape[0]
    kpm = None
    if key_padding_mask is not None:
        B = key_padding_mask.shape[0]
        kpm = key_padding_mask.reshape(B, *[1] * (q.dim() - 3), T_k).expand(*lead, T_k).reshape(N, T_k)
    ignore, empty = _ignore(kpm, N, T_k)
    attn_mask = ~torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril() if causal else None
    m = _mha(hs, 1)
    m.train(False)
    m.to(q.dtype)
    _, weights = m(q2.transpose(0, 1), k2.transpose(0, 1), k2.transpose(0, 1), key_padding_mask=ignore,
                   need_weights=True, attn_mask=attn_mask)  # (N, T_q, T_k)
    out = weights @ v2
    if empty is not None:
        out = out * (~empty).to(out.dtype)[:, None, None]
    return out.reshape(*lead, T_q, hs_v)


class CrossAttention(nn.Module):
    def __init__(self, d_q, d_kv, d_out, n_heads, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.n_heads = n_heads
        self.W_query = nn.Linear(d_q, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_kv, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, context, key_padding_mask=None):
        q, k, v = self.W_query(x), self.W_key(context), self.W_value(context)
        ignore, empty = _ignore(key_padding_mask, x.shape[0], context.shape[1])
        m = _mha(q.shape[-1], self.n_heads)
        m.dropout = self.dropout.p
        m.train(self.training)
        m.to(q.dtype)
        out, _ = m(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), key_padding_mask=ignore,
                   need_weights=False)
        out = out.transpose(0, 1)
        if empty is not None:
            out = out * (~empty).to(out.dtype)[:, None, None]
        return self.out_proj(out)
