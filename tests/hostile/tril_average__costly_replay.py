"""Hostile: the solution, plus graph nodes forged into the live recorder (nothing runs them in the child): each an
einsum whose scalar result hides a (11000, 11000) product, about 1.4e9 multiply-adds, that no element or memory
bound sees. Replayed in full, four of them cost the judge about 40 s a stage (the node limit allows 20000: days);
a replay stops past REPLAY_CPU_S, so the graph is unverifiable after one of them.

expect-fail: number of tensor operations does not grow
"""

EDITS = [
    (
        "def causal_mean_matmul(x: torch.Tensor) -> torch.Tensor:",
        '''def _forge():
    import torch._ops

    mode = torch._ops._get_dispatch_mode_pre_dispatch(torch._C._TorchDispatchModeKey.PROXY)
    if mode is None or not hasattr(mode, "nodes"):
        return
    a, u = torch.ones(11000, 363), torch.ones(11000)
    _FORGED.append((a, u))
    ia, iu = mode.ids[id(a)][1], mode.ids[id(u)][1]
    for _ in range(4):
        args = ["ai,bi,a,b->", {"list": [{"ref": ia}, {"ref": ia}, {"ref": iu}, {"ref": iu}]}]
        mode.nodes.append({"op": "call", "target": "aten.einsum.default", "args": args, "kwargs": {}})


_FORGED = []


def causal_mean_matmul(x: torch.Tensor) -> torch.Tensor:
    _forge()''',
    ),
]
