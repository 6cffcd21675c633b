"""Self-attention from scratch: the course autograder."""

__version__ = "0.1.0"
