"""MISTAKE: divided per block instead of once at the end

Divides each block's contribution by the denominator known so far instead of dividing the accumulator once,
after the last block.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            acc = acc * rescale + p @ v_blk\n',
        '            acc = acc * rescale + p @ v_blk / denom\n',
    ),
    (
        '        outputs.append(acc / denom)  # divided once, when the denominator is complete\n',
        '        outputs.append(acc)\n',
    ),
]
