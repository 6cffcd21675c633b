"""MISTAKE: causal mask aligned bottom-right (query t sees keys 0..t + T_k - T_q); PyTorch's is_causal aligns it top-left: query t sees keys 0..t

Aligns the causal mask with the last keys, tril(diagonal=T_k - T_q), as some decoders do: query t sees keys
0..t + T_k - T_q. The same as the top-left mask where T_q == T_k; scaled_dot_product_attention(is_causal=True)
aligns it top-left, which the stub asks for.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()  # (T_q, T_k)\n',
        '    visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril(T_k - T_q)  # (T_q, T_k)\n',
    ),
]
