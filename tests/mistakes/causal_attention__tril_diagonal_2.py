"""MISTAKE: the future leaks in: no causal mask, or one that hides too little
causal_attention builds its mask with tril(diagonal=2): every step sees two steps of the future. No known mistake
explains the values, so the causality checks name the leak itself, not a missing mask.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()  # (T_q, T_k)\n",
        "    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril(2)  # (T_q, T_k)\n",
    ),
]
