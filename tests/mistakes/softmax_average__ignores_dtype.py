"""MISTAKE: none

A copy of the stage 3 solution with one bug: masked_uniform_weights ignores dtype= (always float32),
so float64 weights come back as float32 and causal_mean_softmax fails on a float64 input (dtype mismatch in @).
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    scores = torch.zeros(T, T, device=device, dtype=dtype)  # (T, T), no preference yet\n',
        '    scores = torch.zeros(T, T, device=device)  # (T, T), no preference yet\n',
    ),
]
