"""MISTAKE: none

Converts the queries and keys to float32 first: the scores are right to float32's precision and come back in
float32 whatever the inputs' dtype, a mistake that costs one check of the stage, however many checks see the dtype.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    d_k = q.shape[-1]\n',
        '    d_k = q.shape[-1]\n    q, k = q.float(), k.float()\n',
    ),
]
