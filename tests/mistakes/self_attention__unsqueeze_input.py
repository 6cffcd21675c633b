"""MISTAKE: none

Gives one sequence (T, d_in) a batch dim with ``x.unsqueeze_(0)``: the answer is right, but the caller's tensor
now has shape (1, T, d_in).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        queries = x @ self.W_query  # (B, T, d_in) @ (d_in, d_out) -> (B, T, d_out)\n",
        "        one = x.dim() == 2\n"
        "        if one:\n"
        "            x.unsqueeze_(0)  # (1, T, d_in), in place\n"
        "        queries = x @ self.W_query  # (B, T, d_in) @ (d_in, d_out) -> (B, T, d_out)\n",
    ),
    (
        "        return weights @ values  # (B, T, T) @ (B, T, d_out) -> (B, T, d_out)\n",
        "        out = weights @ values  # (B, T, T) @ (B, T, d_out) -> (B, T, d_out)\n"
        "        return out[0] if one else out\n",
    ),
]
