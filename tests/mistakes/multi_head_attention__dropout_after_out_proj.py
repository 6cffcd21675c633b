"""MISTAKE: dropout on the output (instead of the attention weights)
The dropout moved from the attention weights to the module's output, after out_proj (a residual-dropout habit): in
training mode each output value is dropped or scaled on its own, instead of whole links between positions.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)\n",
        "        weights = torch.softmax(scores, dim=-1)  # (B, nh, T, T)\n",
    ),
    (
        "        return self.out_proj(out)  # (B, T, d_out)\n",
        "        return self.dropout(self.out_proj(out))  # (B, T, d_out)\n",
    ),
]
