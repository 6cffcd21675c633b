"""MISTAKE: none

The softmax idiom of mixed-precision codebases: F.softmax(scores.float(), dim=-1).type_as(scores). Right in
float32 and half precision, but float64 inputs lose their precision in the softmax.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)\n',
        '        weights = self.dropout(torch.softmax(scores.float(), dim=-1).type_as(scores))  # (B, nh, T, T)\n',
    ),
]
