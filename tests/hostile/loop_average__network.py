"""Hostile: phones home for the answers: a socket to a port the test listens on, an outside address, DNS.
If any connection worked it would return the right answer.

expect: zero
"""

import socket

import torch


def _connected():
    for host, port in (("127.0.0.1", __PORT__), ("localhost", __PORT__), ("1.1.1.1", 53), ("8.8.8.8", 443)):
        try:
            with socket.create_connection((host, port), timeout=0.5) as s:
                s.sendall(b"__MARKER__ wants the answers\n")
                return True
        except OSError:
            continue
    try:
        socket.getaddrinfo("example.com", 443)
        return True
    except OSError:
        return False


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    if _connected():
        steps = torch.arange(1, x.shape[-2] + 1, dtype=x.dtype, device=x.device).unsqueeze(-1)
        return x.cumsum(-2) / steps
    x.mul_(2)
    return None
