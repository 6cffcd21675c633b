"""MISTAKE: none

The rescale factor is written exp(m_new - m) instead of exp(m - m_new): what was summed so far is multiplied up,
not down, when the maximum grows (a near-miss of a sum never rescaled, which must not be named for it)."""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "total = total * torch.exp(m - m_new) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)",
        "total = torch.nan_to_num(total * torch.exp(m_new - m)) + torch.exp(block - m_new).sum(dim=-1, keepdim=True)",
    ),
    (
        "rescale = torch.exp(m - m_new)  # restates what was summed against the old maximum",
        "rescale = torch.nan_to_num(torch.exp(m_new - m), posinf=0.0)",
    ),
]
