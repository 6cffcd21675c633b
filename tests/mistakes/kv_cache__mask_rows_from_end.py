"""MISTAKE: no causal mask among the new tokens (none applied when a cache is given, or its rows read after cache.append, T_cached + T_new.., or from the buffer's end, self.mask[-T_new:], which hide nothing): each new token sees the later new ones

forward takes the new tokens' mask rows from the end of the buffer (self.mask[-T_new:, :T_total]): right for a
whole sequence of context_length positions, but the last rows of the buffer hide nothing among the first columns."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "visible = self.mask[offset:offset + T_new, :T_total]  # the mask rows of the new positions",
        "visible = self.mask[-T_new:, :T_total]",
    ),
]
