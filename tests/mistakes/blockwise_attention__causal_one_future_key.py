"""MISTAKE: none

blockwise_attention hides the keys with cols > rows + 1 in the diagonal blocks: each query sees one future key
whenever it lies in the same key block (the blocks wholly in the future are still skipped)."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "scores = scores.masked_fill(cols > rows, float(\"-inf\"))",
        "scores = scores.masked_fill(cols > rows + 1, float(\"-inf\"))",
    ),
]
