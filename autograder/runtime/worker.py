"""The student side of grading: runs untrusted learner code and answers with plain arrays.

This package (:mod:`autograder.runtime`) is the only part of the autograder that ever executes student code; this
script starts it (``python -I worker.py``) inside the sandbox, where the graders, the solutions and the reference
values are not even on the filesystem: it imports only the standard library, ``numpy`` and ``torch``.

Shape of a grading session::

    judge (trusted, decides scores)              sandbox (bubblewrap, no network, rlimits)
    ───────────────────────────────              ─────────────────────────────────────────
    Sandbox.open(stage source) ──control fd──▶   zygote (PID 1 of the sandbox): torch imported and
                                                   warmed once, originals captured, guards installed
                                                   └─ fork ─▶ child: exec student source,
    StudentProxy.call("fn", x) ◀──rpc socket──▶               serve requests, reply arrays

Every message is a frame: ``>II`` (json length, blob length), a JSON header, then a blob of raw array bytes.
Each message's fields are listed once, in the types of :mod:`.wire` (:data:`Request`, :class:`Reply`, and the
zygote's :class:`ForkOrder`, :class:`Ready`, :class:`Exited`).
Arrays travel as ``{"__nd__": [offset, size], "np", "dtype", "shape", "device"}`` records pointing into the
blob. Nothing is pickled, in either direction, so a hostile child can send back only numbers, strings and
arrays: the judge compares them with values it computed itself. Each request carries a random ``id`` that the
reply must echo, so bytes written straight into the socket by learner code are not taken for a reply.

Learner code shares the child process with this package, so everything the worker still needs after the
learner's module has run is captured beforehand: builtins (imported by each module as its globals), the JSON codec
(the C encoder and scanner), socket and struct methods, and the torch functions used to encode values (:mod:`.torchrefs`).
Patching ``json``, ``builtins`` or ``torch.Tensor`` from learner code therefore changes nothing the worker
relies on. What a call did (the "written by hand" and "vectorised" verdicts) is not reported by this process:
it sends the traced graph of a recorded call (:func:`.recorder.capture_graph`), and the judge checks and replays it.

The same :class:`.executor.Executor` also runs in-process for notebooks (nbgrader cells, self-learner notebooks), where
the learner's code already lives in the kernel and there is nothing to isolate.
"""

import os
import sys

if __name__ == "__main__":
    # run as a script (``python -I .../runtime/worker.py``, where -I leaves this folder off sys.path): the
    # package is imported from the folder that holds it, which then leaves sys.path again. Without bubblewrap that
    # folder also holds the children's working folders: nothing imported later (lazily, by the zygote or by
    # learner code) may be looked up there.
    holder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, holder)
    from runtime.zygote import main  # imports every module of the package

    sys.path.remove(holder)
    main(sys.argv[1:])
