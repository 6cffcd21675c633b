"""The judge's side of the sandbox: the host that starts and watches the warm worker (:mod:`.host`), the proxy
graders call (:mod:`.proxy`), the values and errors they get back (:mod:`.values`, :mod:`.errors`), and the judge's
verification of a recorded call's graph (:mod:`.evidence`).

Graders import :mod:`.errors` and :mod:`.values` only, never the process manager.
"""
