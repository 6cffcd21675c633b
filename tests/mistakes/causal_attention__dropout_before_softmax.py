"""MISTAKE: none

Dropout applied to the masked scores before the softmax (zeroed scores are not removed links, the others are
scaled by 1 / (1 - p) before exp): right in eval mode, wrong in training mode.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n'
        '        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, T, T)\n',
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n'
        '        weights = torch.softmax(self.dropout(scores), dim=-1)  # (B, T, T)\n',
    ),
]
