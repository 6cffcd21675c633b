"""While loops over flattened sequences; the running total kept in float64 and cast back on write."""
import torch


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    T, C = x.shape[-2], x.shape[-1]
    flat = x.reshape(-1, T, C)
    rows = []
    b = 0
    while b < flat.shape[0]:
        total = torch.zeros(C, dtype=torch.float64, device=x.device)
        steps = []
        t = 0
        while t < T:
            total = total + flat[b, t].double()
            steps.append((total / (t + 1)).to(x.dtype))
            t += 1
        rows.append(torch.stack(steps))
        b += 1
    return torch.stack(rows).reshape(x.shape)
