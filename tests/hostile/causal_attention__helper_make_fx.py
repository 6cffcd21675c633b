"""Hostile: torch writes the attention in another interpreter. At import the file starts a fresh Python (in
which the stage's switch-off of the fused kernels never ran) and, for each shape, has it trace torch's own math
kernel of scaled_dot_product_attention with make_fx and send back the generated code: plain ops (bmm, softmax,
where) that every call then runs and no graph can tell from code written by hand. The children's seccomp filter
refuses to start a program, so the file does not import.

control: causal_attention__sdpa.py
expect: zero
"""
import io, struct, subprocess, sys, json
import torch
from torch import nn

_HELPER = r'''
import sys, struct, json, torch
from torch.fx.experimental.proxy_tensor import make_fx
inp, out = sys.stdin.buffer, sys.stdout.buffer
def rd(n):
    b = b""
    while len(b) < n:
        c = inp.read(n - len(b))
        if not c: sys.exit(0)
        b += c
    return b
while True:
    (n,) = struct.unpack(">Q", rd(8))
    req = json.loads(rd(n))
    xs = [torch.empty_strided(s, st, dtype=getattr(torch, req["dtype"])).normal_() for s, st in req["t"]]
    p = req["p"]
    def f(q, k, v):
        return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, dropout_p=p, is_causal=True)[0]
    code = make_fx(f)(*xs).code
    b = code.encode()
    out.write(struct.pack(">Q", len(b)) + b); out.flush()
'''
_proc = subprocess.Popen([sys.executable, "-c", _HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
_cache = {}


def _attention(q, k, v, p=0.0):
    key = (tuple((tuple(x.shape), tuple(x.stride())) for x in (q, k, v)), str(q.dtype).replace("torch.", ""), p)
    fn = _cache.get(key)
    if fn is None:
        b = json.dumps({"t": [[list(s), list(st)] for s, st in key[0]], "dtype": key[1], "p": p}).encode()
        _proc.stdin.write(struct.pack(">Q", len(b)) + b)
        _proc.stdin.flush()
        (n,) = struct.unpack(">Q", _proc.stdout.read(8))
        code = _proc.stdout.read(n).decode()
        # the one op of the math kernel the judge does not replay: the same softmax under another name
        code = code.replace("torch.ops.aten._safe_softmax.default(", "torch.softmax(")
        ns = {"torch": torch, "device": torch.device, "inf": float("inf"), "nan": float("nan")}
        exec(code, ns)
        fn = _cache[key] = ns["forward"]
    out = fn(None, q, k, v)
    return out.to(q.device) if out.device != q.device else out


def causal_attention(q, k, v):
    return _attention(q, k, v)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, head_size, context_length, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, head_size, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        p = self.dropout.p if self.training else 0.0
        return _attention(self.W_query(x), self.W_key(x), self.W_value(x), p)
