import math

import torch


def scaled_scores(q, k):
    for i in range(2000):
        print('debug', i, q.shape, q)
    big = torch.empty(50_000_000_000, dtype=torch.uint8)  # oops
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
