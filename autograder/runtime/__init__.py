"""The code that runs inside the sandbox, in the order each part builds on the last:

- :mod:`.wire`: every message's fields, the JSON codec, frames and arrays (the judge imports it too);
- :mod:`.torchrefs`: the torch callables used after learner code ran, captured before it ran;
- :mod:`.recorder`: the traced graph of a recorded call, sent back as data;
- :mod:`.fused`: the fused attention kernels switched off for a stage written by hand;
- :mod:`.seccomp`: the system calls every child is refused (starting programs, memory no process maps);
- :mod:`.executor`: answers the judge's requests against one learner module (also in-process, for notebooks);
- :mod:`.zygote`: the sandbox's PID 1, a fresh child per stage, confined before any learner code runs;
- ``worker.py``: the script the sandbox starts (``python -I /opt/autograder/runtime/worker.py``).

It imports only the standard library, numpy and torch, never the rest of the autograder: the sandbox mounts a
read-only copy of this package and nothing else of the judge's.
"""
