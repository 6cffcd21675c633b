"""The code that runs inside the sandbox: the wire format, the executor that answers the judge's requests, and the
zygote that forks a fresh child for every stage (:mod:`autograder.runtime.worker`).

It imports only the standard library, numpy and torch, never the rest of the autograder: the sandbox mounts a
read-only copy of this package and nothing else of the judge's. The judge imports it too, for the message types
and the framing.
"""
