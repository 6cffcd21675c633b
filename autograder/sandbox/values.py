"""What comes back from learner code, as graders see it: a tensor's values (:class:`Out`), or a description of
something that is not data (:class:`Opaque`). Plain values (numbers, strings, containers) come back as they are.
And what graders send in one round trip: several calls (:class:`Call`, ``student.call_all``).

Made by the judge's proxy (:mod:`autograder.sandbox.proxy`) from the child's reply; graders and :mod:`autograder.checks`
read them. Nothing here starts or talks to a process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@dataclass
class Out:
    """A tensor that came back from learner code: its values (CPU), and where/what it was."""

    t: torch.Tensor  # on CPU, in the dtype the learner returned (float16/bfloat16 restored)
    dtype: str
    device: str
    asked: str | None = None  # the dtype the call asked for (its inputs' or its dtype= argument): the tolerance's

    @property
    def shape(self) -> tuple:
        return tuple(self.t.shape)


@dataclass
class Opaque:
    """Something that is not a tensor, number, string or container (a module, a generator...)."""

    description: str


class Call:
    """One call for ``student.call_all`` (:meth:`autograder.sandbox.proxy.StudentProxy.call_all`), which makes
    several in one round trip to the learner's process: ``Call("softmax_stable", x, cast=torch.float64)`` calls a
    function of the learner's file, ``Call(module, x)`` a module that ``student.new`` built. The options are those of
    ``student.call`` without a record or gradients (``to``, ``cast``, ``noncontig``, ``return_inputs``, ``seed``,
    ``full``); other keyword arguments go to the learner's code."""

    def __init__(
        self,
        target,
        *args,
        to="cpu",
        cast=None,
        noncontig=False,
        return_inputs=False,
        seed=None,
        full=False,
        **kwargs,
    ):
        self.target, self.args, self.kwargs = target, args, kwargs
        self.to, self.cast, self.noncontig = to, cast, noncontig
        self.return_inputs, self.seed, self.full = return_inputs, seed, full
