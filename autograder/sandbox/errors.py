"""The exceptions of grading, by whose they are.

Learner failures (:class:`StudentFailure` and its subclasses) are raised by the judge's proxy when the learner's
code produced no value; ``str()`` of each is a message written for the learner, and graders and the runner tell
them apart by type, never by their text. The sandbox's own failures (:class:`SandboxError`,
:class:`ProtocolViolation`) are the judge's concern, not the learner's.
"""

from __future__ import annotations

import re
from typing import Any, Mapping


class SandboxError(RuntimeError):
    """The sandbox could not do its work (its worker did not start, or is used the wrong way): nothing the
    learner did."""


class SandboxWarning(UserWarning):
    """Isolation weaker than the full sandbox (said loudly: terminal, results.json, report)."""


class ProtocolViolation(ValueError):
    """A reply that the worker's own code cannot have sent (forged, truncated, inconsistent)."""


# ───────────────────────────── what graders see of the learner's code ─────────────────────────────


class StudentFailure(Exception):
    """Base: the learner's code did not produce a value. ``str()`` is a message for the learner."""


class NotImplementedYet(StudentFailure):
    """The learner's code raised ``NotImplementedError`` (the stub's own body): the stage is not started."""


class StudentCodeError(StudentFailure):
    """The learner's code raised an exception; ``error`` is the worker's summary of it (``type``, ``message``,
    ``where``: the line of the learner's file)."""

    call: str | None = None  # the call that raised, as the learner's function received it (set by the proxy)

    def __init__(self, error: Mapping[str, Any]):
        self.error: dict[str, Any] = dict(error)
        super().__init__(f"your code raised {self._summary()}")

    def _summary(self) -> str:
        error = self.error
        where = error.get("where") or {}
        loc = ""
        if where.get("line"):
            loc = f" (line {where['line']}"
            loc += f", in {where['function']}" if where.get("function") not in (None, "<module>") else ""
            loc += f": `{where['code']}`)" if where.get("code") else ")"
        return f"{error.get('type', 'an error')}: {error.get('message', '')}{loc}".rstrip()


class MissingName(StudentCodeError):
    """The file defines no function or class of the name a check calls: nothing was raised by the learner's code,
    and the message says what is missing."""

    def __init__(self, error: Mapping[str, Any]):
        super().__init__(error)
        self.args = (error.get("message") or "a name this stage needs is not defined in your file",)


class SubmissionLoadError(StudentCodeError):
    """The learner's file could not be imported (a syntax error, or an exception while its module ran): every
    check of the stage fails with this, and the stage is marked as an error."""

    def __init__(self, error: Mapping[str, Any]):
        super().__init__(error)
        self.args = (f"your file could not be imported: {self._summary()}",)


class StudentTimeout(StudentFailure):
    """A call into the learner's code ran out of time (or an earlier one did: the stage is over)."""


class StudentCrashed(StudentFailure):
    """The learner's process ended, was killed, or sent back something that is not a valid answer."""


def _raised_by_a_stub(err: Mapping[str, Any]) -> bool:
    """The learner's own file raised it, on a ``raise NotImplementedError`` line (a stub's body): torch's own
    NotImplementedError (an op without a float16 kernel, say) is an error of the code that called it. Where the
    error has no line of the learner's file (code run in a notebook's kernel), it is taken for a stub's."""
    where = err.get("where")
    if not isinstance(where, Mapping):
        return True
    code = where.get("code")
    return isinstance(code, str) and re.match(r"raise\s+NotImplementedError\b", code.strip()) is not None


def raised_a(err: Mapping[str, Any], kind: str) -> bool:
    """Whether the learner's error ``err`` is a ``kind`` (a built-in exception class's name): that class, or one of
    the learner's own derived from it."""
    bases = err.get("bases")
    return err.get("type") == kind or (isinstance(bases, list) and kind in bases)


def learner_error(err: Mapping[str, Any]) -> StudentFailure:
    """The exception for a learner error the worker reported (a reply's ``error``, or one returned inside a
    reply, as ``new(..., weights=)`` returns a load error)."""
    if err.get("type") == "NotImplementedError" and _raised_by_a_stub(err):
        return NotImplementedYet(err.get("message") or "not implemented yet")
    if err.get("type") == "MissingName":
        return MissingName(err)
    return StudentCodeError(err)


def load_failure(err: Mapping[str, Any]) -> StudentFailure:
    """The exception for a file that could not be imported (a stub that raises ``NotImplementedError`` at import
    is a stage not started, as for a call)."""
    if err.get("type") == "NotImplementedError":
        return learner_error(err)
    return SubmissionLoadError(err)
