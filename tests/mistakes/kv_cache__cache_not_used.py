"""MISTAKE: the cache not used (new tokens attend only to each other: forward ignores the cache, or append returns only the new keys and values)

Appends the new keys and values to the cache but attends with the new ones only.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '            k, v = cache.append(k, v)  # (B, nh, T_total, hs): only the new positions were projected\n',
        '            cache.append(k, v)\n',
    ),
]
