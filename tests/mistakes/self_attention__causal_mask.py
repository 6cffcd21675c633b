"""MISTAKE: causal mask applied (stage 6 attends to the whole sequence)

Masks the future although stage 6 attends to the whole sequence.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        values = self.W_value(x)  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
        '        values = self.W_value(x)  # (B, T, d_out)\n        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        T = x.shape[-2]\n        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)\n        scores = scores.masked_fill(future, float("-inf"))\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n        return weights @ values  # (B, T, d_out)\n',
    ),
    (
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
        '        scores = queries @ keys.transpose(-2, -1)  # (B, T, T)\n        T = x.shape[-2]\n        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)\n        scores = scores.masked_fill(future, float("-inf"))\n        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)  # (B, T, T)\n',
    ),
]
