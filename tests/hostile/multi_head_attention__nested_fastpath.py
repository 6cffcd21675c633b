"""Hostile: nn.MultiheadAttention's fused kernel reached through a nested tensor, below autograd
(torch._C._AutoDispatchBelowAutograd skips the Autograd kernel): the NestedTensorCPU kernel of
aten::_native_multi_head_attention is a whole fused attention. The file is the reference solution plus that call at
import. The switch-off replaces the kernel on every dispatch key it has, so the call ends the child.

control: multi_head_attention__mha_forward.py
expect: zero
"""

# The stage's solution with the edit below (old -> new), the call at import; see autograder/instructor/catalogue.py.
EDITS = [
    (
        "from torch import nn\n\n\n",
        "from torch import nn\n"
        "\n"
        "\n"
        "def _fused_kernel_runs():\n"
        "    E, nh, T = 8, 2, 5\n"
        "    g = torch.Generator().manual_seed(0)\n"
        "    x = torch.randn(2, T, E, generator=g)\n"
        "    w, b = torch.randn(3 * E, E, generator=g) * 0.3, torch.randn(3 * E, generator=g) * 0.1\n"
        "    pw, pb = torch.randn(E, E, generator=g) * 0.3, torch.randn(E, generator=g) * 0.1\n"
        "    nt = torch.nested.nested_tensor([x[0], x[1]])\n"
        "    with torch.no_grad(), torch._C._AutoDispatchBelowAutograd():\n"
        "        out, _ = torch._native_multi_head_attention(nt, nt, nt, E, nh, w, b, pw, pb, None, False)\n"
        "    out = out.to_padded_tensor(0.0)\n"
        "    q, k, v = (x @ w.chunk(3)[i].T + b.chunk(3)[i] for i in range(3))\n"
        "    sh = lambda z: z.reshape(2, T, nh, E // nh).transpose(1, 2)\n"
        "    a = torch.softmax(sh(q) @ sh(k).transpose(-2, -1) / (E // nh) ** 0.5, -1) @ sh(v)\n"
        "    ref = a.transpose(1, 2).reshape(2, T, E) @ pw.T + pb\n"
        '    assert (out - ref).abs().max() < 1e-5, "fused kernel gave a different answer"\n'
        "\n"
        "\n"
        "_fused_kernel_runs()\n"
        "\n"
        "\n",
    ),
]
