"""MISTAKE: none

The running maximum starts at 0 instead of -inf: right while some score of every row is above about -80, but a row
whose scores are all far below 0 underflows to 0 / 0."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "m = x.new_full((*x.shape[:-1], 1), float(\"-inf\"))  # running maximum of each row",
        "m = x.new_zeros((*x.shape[:-1], 1))",
    ),
    (
        "m = q_blk.new_full((*q_blk.shape[:-1], 1), float(\"-inf\"))  # running maximum per query",
        "m = q_blk.new_zeros((*q_blk.shape[:-1], 1))",
    ),
]
