"""MISTAKE: device argument ignored (the tensor is made on the default device)

A copy of the stage 3 solution with one bug: causal_mask never passes its device= on, so the mask is always
made on the CPU (and masked_uniform_weights, which combines it with scores on the asked device, fails there
on any other device). Caught on any machine by asking for device="meta".
"""

# This wrong file is the stage's solution with the edits below (old -> new); see autograder/instructor/catalogue.py.
EDITS = [
    (
        "    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)\n",
        "    return torch.ones(T, T, dtype=torch.bool).tril()  # (T, T)\n",
    ),
]
