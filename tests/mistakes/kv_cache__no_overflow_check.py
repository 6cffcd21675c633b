"""MISTAKE: no ValueError past max_len

Never checks max_len: the cache grows past the length the model was built for.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        if len(self) + T_new > self.max_len:\n            raise ValueError(f"the cache holds {len(self)} positions of at most {self.max_len}: "\n                             f"{T_new} more do not fit")\n',
        '',
    ),
]
