"""MISTAKE: accumulator not rescaled when the maximum grows

Rescales the running denominator when the maximum grows, but adds each block's p @ v to an accumulator that still
holds terms computed against the old maximum.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            acc = acc * rescale + p @ v_blk\n',
        '            acc = acc + p @ v_blk\n',
    ),
]
