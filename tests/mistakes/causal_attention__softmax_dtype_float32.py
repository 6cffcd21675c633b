"""MISTAKE: none
torch.softmax(scores, dim=-1, dtype=torch.float32) in the module, without casting back (the mixed-precision idiom
without its .to(scores.dtype)): in float64, float32 weights @ float64 values raises, and the feedback says that two
dtypes met, not only torch's message.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, T, T)\n",
        "        weights = self.dropout(torch.softmax(scores, dim=-1, dtype=torch.float32))  # (B, T, T)\n",
    ),
]
