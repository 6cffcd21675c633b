"""MISTAKE: causal mask aligned bottom-right (query t sees keys 0..t + T_k - T_q); PyTorch's is_causal aligns it top-left: query t sees keys 0..t

Shifts the causal diagonal by T_k - T_q, the convention of some decoding kernels, instead of aligning it top-left.
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        '        visible = visible.tril()  # top-left: query t sees keys 0..t\n',
        '        visible = visible.tril(T_k - T_q)  # bottom-right: the last query sees every key\n',
    ),
]
