"""MISTAKE: none

Builds the causal mask in forward and has no nn.Dropout: the outputs are right (dropout=0.0), but the module
lacks the mask buffer and the dropout the docstring asks for.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        self.dropout = nn.Dropout(dropout)\n'
        '        mask = torch.ones(context_length, context_length, dtype=torch.bool).tril()\n'
        '        self.register_buffer("mask", mask)  # (context_length, context_length)\n',
        '        self.context_length = context_length\n',
    ),
    (
        '        if T > self.mask.shape[0]:\n'
        '            raise ValueError(f"sequence length {T} exceeds context_length {self.mask.shape[0]}")\n',
        '        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()\n',
    ),
    (
        '        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n'
        '        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)\n',
        '        scores = scores.masked_fill(~mask, float("-inf"))\n'
        '        weights = torch.softmax(scores, dim=-1)  # (B, nh, T, T)\n',
    ),
]
