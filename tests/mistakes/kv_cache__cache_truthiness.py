"""MISTAKE: the cache not used (new tokens attend only to each other: forward ignores the cache, or append returns only the new keys and values)

forward tests `if cache:` instead of `if cache is not None:`: an empty cache has len() 0, so it is taken for no
cache, is never appended to, and stays empty forever."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    ("        if cache is not None:\n            offset = len(cache)", "        if cache:\n            offset = len(cache)"),
]
