"""MISTAKE: none

``len(cache)`` counts the calls to ``append``, not the positions: right one token at a time, but after a prompt of
several tokens the next chunk's causal offset is wrong. A decoding step's answer then depends on how many appends
came before, so a second call with the same cache answers differently: a wrong answer, not a forged graph.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "        return self.keys, self.values\n        ### END SOLUTION\n",
        "        self.appends = getattr(self, 'appends', 0) + 1\n        return self.keys, self.values\n        ### END SOLUTION\n",
    ),
    (
        "        return 0 if self.keys is None else self.keys.shape[-2]\n",
        "        return 0 if self.keys is None else getattr(self, 'appends', 0)\n",
    ),
]
