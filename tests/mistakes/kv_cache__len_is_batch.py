"""MISTAKE: none

A copy of the stage 11 solution with one bug: len(cache) is the batch size (len of the keys tensor), not the
number of cached positions. append's overflow test reads len() and so lets a full cache grow: that check fails,
but it must not be named "no ValueError past max_len", which the file has.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        return 0 if self.keys is None else self.keys.shape[-2]\n',
        '        return 0 if self.keys is None else len(self.keys)\n',
    ),
]
