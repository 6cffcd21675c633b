"""MISTAKE: none

key_padding_mask compares positions counted from 1 (arange(1, T + 1) < lengths): the last real token of every
sequence is taken for padding. The opposite off-by-one of s <= lengths[b], which must not be named for it."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "positions = torch.arange(T, device=lengths.device)  # (T,)",
        "positions = torch.arange(1, T + 1, device=lengths.device)",
    ),
]
