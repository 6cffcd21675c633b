"""MISTAKE: none

The loop over query blocks stops at the last whole block (range(0, T_q - T_q % block_size, block_size)): the last
queries get no output when T_q is not a multiple of block_size; the key blocks are all visited."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    for q0 in range(0, T_q, block_size):\n",
        "    for q0 in range(0, T_q - T_q % block_size, block_size):\n",
    ),
]
