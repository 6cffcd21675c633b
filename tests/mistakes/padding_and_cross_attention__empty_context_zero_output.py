"""MISTAKE: none

CrossAttention zeroes the output of a query whose context has no real token after out_proj: the docstring asks for
out_proj of zeros (its bias)."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "            weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)\n",
        "            weights = torch.softmax(scores, dim=-1).masked_fill(~has_key, 0.0)\n"
        "            empty = ~has_key.reshape(B, 1, 1)\n",
    ),
    (
        "        return self.out_proj(out)\n",
        "        out = self.out_proj(out)\n"
        "        return out.masked_fill(empty, 0.0) if key_padding_mask is not None else out\n",
    ),
]
