"""q divided by d_k ** 0.5 before the product (as many codebases do), then @ k.mT."""


def scaled_scores(q, k):
    d_k = k.shape[-1]
    return (q / d_k ** 0.5) @ k.mT
