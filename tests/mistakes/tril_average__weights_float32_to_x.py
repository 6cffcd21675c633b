"""MISTAKE: none
causal_mean_matmul builds the weights without device= and dtype= (float32 on the CPU) and moves them with .to(x):
the dtype is right, but 1/3, 1/6, ... were rounded to float32 first, so float64 inputs lose the precision check.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    weights = causal_mean_weights(T, device=x.device, dtype=x.dtype)  # (T, T)\n',
        '    weights = causal_mean_weights(T).to(x)  # (T, T)\n',
    ),
]
