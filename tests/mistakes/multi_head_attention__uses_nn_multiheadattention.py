"""MISTAKE: calls nn.MultiheadAttention (must be written by hand)

Delegates the heads to torch.nn.MultiheadAttention.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        q = split_heads(self.W_query(x), self.n_heads)  # (B, T, d_out) -> (B, nh, T, hs)\n        k = split_heads(self.W_key(x), self.n_heads)  # (B, nh, T, hs)\n        v = split_heads(self.W_value(x), self.n_heads)  # (B, nh, T, hs)\n        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, nh, T, T)\n        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))\n        weights = self.dropout(torch.softmax(scores, dim=-1))  # (B, nh, T, T)\n        out = merge_heads(weights @ v)  # (B, nh, T, hs) -> (B, T, d_out)\n',
        '        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)  # (B, T, d_out)\n        out, _ = self.heads(q, k, v, attn_mask=~self.mask[:T, :T], need_weights=False)  # (B, T, d_out)\n',
    ),
    (
        '        self.register_buffer("mask", mask)  # (context_length, context_length)\n        ### END SOLUTION\n',
        '        self.register_buffer("mask", mask)  # (context_length, context_length)\n        self.heads = nn.MultiheadAttention(d_out, n_heads, dropout=dropout, batch_first=True)\n        ### END SOLUTION\n',
    ),
]
