"""The judge's side of the "written by hand" and "vectorised" verdicts: a recorded call's graph, checked and replayed.

A call made with ``record=True`` comes back with the graph of the learner's call as the child traced it
(:func:`autograder.runtime.recorder.capture_graph`): ATen ops at the dispatcher's entry, module parameters and buffers as
constants. Nothing the child says is believed as such: the learner's code ran in that process and may have
written the graph itself. The judge

1. parses the graph (bounded size, only known kinds of values: :func:`parse`);
2. names the forbidden ops in it (:func:`forbidden_ops`: any target whose name holds one of
   :data:`FORBIDDEN_WORDS`) and counts its operations (:func:`count_ops`);
3. replays it with its own torch, on the CPU (:func:`replay`): only ops of :data:`ALLOWED` (pure tensor math,
   no I/O, no randomness except dropout, no side effect) are looked up, so a graph naming any other op is refused
   without running anything; its memory is bounded before anything is allocated (the kernel's RLIMIT_DATA, or
   a first pass on the "meta" device where no kernel enforces it) and a graph with an intermediate of more than
   :data:`ELEMENT_LIMIT` elements is refused, and so is one that takes more than :data:`REPLAY_CPU_S` seconds of the
   judge's CPU (an op within those bounds, such as an einsum of many operands, can still hide large work);
4. and requires the replay to give the learner's own answers: on the inputs the judge sent, and on fresh inputs
   of the same shapes and dtype that it draws afterwards and sends in a second call that is not traced
   (:func:`verify`, called by :class:`autograder.sandbox.proxy.StudentProxy`).

A graph that passes is a program made only of allowed ops, without any forbidden one, that computes the learner's
answers, on an input the child had not seen when it sent the graph. Work done outside the trace (numpy, a lazy
tensor subclass, tracing switched off) becomes a constant of the graph, which then misses the fresh answer; a
graph written by the learner passes only if it does the same work as the answer, by hand.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
import time
import types
from functools import cache
from typing import Any, Iterator, Mapping, NamedTuple

import torch

from ..runtime import fused

NODE_LIMIT = 20000
CONSTANT_LIMIT = 1024
ELEMENT_LIMIT = 1 << 22  # elements in any one intermediate of a replay
TOTAL_ELEMENT_LIMIT = 1 << 25  # elements in all of them
# CPU seconds one replay may take in the judge (a learner's honest graph, loops included, takes milliseconds): past
# it the replay stops at its next op, so a graph's cost to the judge is bounded by this plus one op
REPLAY_CPU_S = 2.0
# any op whose name holds one of these is a fused attention kernel or entry point: the ATen ops the worker switches
# off in a stage written by hand, and the worker's mark of torch's Python-level multi-head attention
# (``autograder.multi_head_attention_forward.default``, see recorder.mark_entry_points)
FORBIDDEN_WORDS = fused.WORDS
# pure tensor math the replay may run (ATen op packets; an in-place variant "name_" of one is allowed too)
ALLOWED = frozenset(
    """
abs acos add addbmm addcdiv addcmul addmm addmv alias all amax amin any arange argmax argmin
asin atan atan2 baddbmm bitwise_and bitwise_not bitwise_or bitwise_xor bmm broadcast_tensors broadcast_to cat
ceil chunk clamp clamp_max clamp_min clip clone contiguous copy cos cosh cumprod cumsum detach diag diag_embed
diagonal div dot dropout einsum embedding empty_like eq erf exp exp2 expand expand_as expm1 eye feature_dropout
fill flatten flip floor floor_divide fmod full full_like gather ge gelu gt index index_add index_fill index_put
index_select isfinite isinf isnan layer_norm le lerp lift_fresh_copy linear log log10 log1p log2 log_softmax
logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logsumexp lt mH mT masked_fill masked_scatter matmul max maximum mean
min minimum mm movedim mul mv nan_to_num narrow ne neg new_empty new_full new_ones new_zeros norm ones ones_like
outer permute pow prod reciprocal relu remainder repeat repeat_interleave reshape resolve_conj resolve_neg roll
round rsqrt rsub
scalar_tensor scatter scatter_add select select_scatter sigmoid sign sin sinh slice slice_scatter softmax split
split_with_sizes sqrt square squeeze stack std sub sum swapaxes t tanh tensor_split tile to transpose tril triu
true_divide type_as unbind unflatten unsqueeze var view view_as where zeros zeros_like _log_softmax _softmax
_to_copy _unsafe_view __and__ __or__ __xor__
""".split()
)
# more pure tensor math, named apart from the list above only because it is rarer in this course: sorting,
# norms, index ranges (``torch.range`` too, deprecated but still torch), cumulative extrema, a tensor's value read
# as a number (``.item()``, ``bool(t)``: what the code does with the number is not in the graph, so a replay on
# fresh inputs catches a value it depended on); ``empty`` is replayed as ``zeros`` (see _UNINITIALISED)
MORE_ALLOWED = frozenset(
    """
_local_scalar_dense aminmax argsort count_nonzero cummax cummin empty index_copy isneginf isposinf
linalg_vector_norm linspace logspace nansum range sort topk tril_indices triu_indices
alias_copy block_diag bucketize can_cast constant_pad_nd detach_copy expand_copy glu index_reduce
lift_fresh log_sigmoid_forward logcumsumexp masked_select nonzero permute_copy promote_types
reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d result_type rot90 scatter_reduce searchsorted
softplus split_copy std_mean unfold unsafe_split unsqueeze_copy var_mean view_copy zero
""".split()
)
# Beyond these two lists, the replay runs an op tagged ``pointwise`` (elementwise math) and any op made of other
# ops (torch's aliases such as divide, swapdims or numpy_T, and composites such as tensordot: a
# CompositeImplicitAutograd kernel), the latter under :class:`_InnerOps`, which refuses any op it is made of that
# the replay would not run itself. Ops torch tags ``nondeterministic_seeded`` (random numbers) are never run,
# except dropout, listed above.
# calls that are not ATen ops but may appear in an honest graph, and do nothing to values
NEUTRAL = frozenset({"torch._C._set_grad_enabled"})
_ALLOCATOR_REFUSED = re.compile(r"DefaultCPUAllocator: (can't allocate|not enough) memory")
_TARGET = re.compile(r"aten\.([a-z_][a-zA-Z0-9_]*)\.([a-zA-Z_][a-zA-Z0-9_]*)")  # mT: the tensor's .mT
DTYPES = {
    name: getattr(torch, name)
    for name in ("float64", "float32", "float16", "bfloat16", "bool", "int64", "int32", "int16", "int8", "uint8")
}
LAYOUTS = {"strided": torch.strided}
MEMORY_FORMATS = {"contiguous_format": torch.contiguous_format, "preserve_format": torch.preserve_format}


def _zeros_for_empty(*args, memory_format=None, **kwargs):
    """``aten.empty.memory_format`` replayed: zeros of that size (``zeros`` has no memory_format)."""
    return torch.ops.aten.zeros.default(*args, **kwargs)


# uninitialised memory is replayed as zeros (whatever the overload named): the judge's memory never reaches a
# comparison (a graph that reads what it did not write then fails to reproduce the answer)
_UNINITIALISED = {
    "empty_like": torch.ops.aten.zeros_like.default,
    "new_empty": torch.ops.aten.new_zeros.default,
    "empty": _zeros_for_empty,
}


# ops whose work grows with an argument no bound sees (an exponent, a list of matrices multiplied in turn, and
# the special_*_polynomial_* ops, elementwise but looping over their degree per element: n = 1e15 held the judge
# for minutes): never replayed; attention needs none of them
_UNBOUNDED_WORK = frozenset({"matrix_power", "linalg_matrix_power", "linalg_multi_dot", "chain_matmul"})
OP_WORK_LIMIT = 1 << 31  # multiply-adds one einsum or matrix product may do
# the same in half precision, whose CPU matrix products run a couple of hundred times slower than float32's
HALF_WORK_LIMIT = 1 << 24


def _einsum_work(equation, operands) -> int:
    """An upper bound of the multiply-adds ``einsum(equation, operands)`` does: operands are contracted two at a
    time, each contraction at most every index size multiplied (exactly that for two operands)."""
    if not isinstance(equation, str) or not isinstance(operands, (list, tuple)):
        return 0
    sizes: dict[str, int] = {}
    for spec, t in zip(equation.split("->")[0].split(","), operands):
        if isinstance(t, torch.Tensor):
            letters = spec.replace("...", "").replace(" ", "")
            ellipsis = t.dim() - len(letters)
            for j, letter in enumerate(letters):
                if 0 <= ellipsis + j < t.dim():
                    sizes[letter] = max(sizes.get(letter, 1), t.shape[ellipsis + j])
            for j in range(max(ellipsis, 0) if "..." in spec else 0):
                sizes[f"...{j}"] = max(sizes.get(f"...{j}", 1), t.shape[j])
    return math.prod(sizes.values()) * max(len(operands) - 1, 1)


def _matrix_product_work(name: str, args: list) -> int:
    """The multiply-adds a matrix product (mm, bmm, matmul, addmm, linear, einsum, ...) is about to do, from its
    operands' shapes (0 for another op, or operands it will refuse)."""
    if name == "einsum":
        return _einsum_work(*(args + [None, None])[:2])
    if name == "linear":  # input @ weight.T (+ bias): made of a matrix product the guard would not see inside it
        x, w = (args + [None, None])[:2]
        if not (isinstance(x, torch.Tensor) and isinstance(w, torch.Tensor)) or w.dim() not in (1, 2):
            return 0
        return x.numel() * (w.shape[0] if w.dim() == 2 else 1)
    where = _MATRIX_PRODUCTS.get(name)
    if where is None or len(args) < where + 2:
        return 0
    a, b = args[where], args[where + 1]
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.dim() == 0 or b.dim() == 0:
        return 0
    if a.dim() == 1 or b.dim() == 1:
        return max(a.numel(), b.numel())
    # the batch dims broadcast (torch.broadcast_shapes would import sympy, which the replay keeps out)
    da, db = list(a.shape[:-2]), list(b.shape[:-2])
    width = max(len(da), len(db))
    da, db = [1] * (width - len(da)) + da, [1] * (width - len(db)) + db
    batch = math.prod(max(x, y) for x, y in zip(da, db))
    return batch * a.shape[-2] * a.shape[-1] * b.shape[-1]


def _guard(name: str, args: list, kwargs: dict) -> None:
    """Refuses, before it runs, an op the replay would not survive or could not bound: a matrix product or an einsum
    whose work is beyond :data:`OP_WORK_LIMIT` (:data:`HALF_WORK_LIMIT` in half precision; a result can be small, or
    a scalar, which no element bound sees), and an integer
    division of the smallest integer by -1 with rounding, which torch's CPU kernel answers with SIGFPE, ending
    the judge; and an op that would return more than :data:`PIECE_LIMIT` tensors (:func:`_pieces`)."""
    work = _matrix_product_work(name, args)
    if work:
        if work > (HALF_WORK_LIMIT if _halves(args) else OP_WORK_LIMIT):
            raise Unverifiable(f"the graph's {name} does more work than the autograder replays")
    elif _pieces(name, args) > PIECE_LIMIT:
        raise Unverifiable(f"the graph's {name} makes more tensors than the autograder replays")
    elif name in ("div", "floor_divide") and (kwargs.get("rounding_mode") is not None or name == "floor_divide"):
        a, b = (args + [None, None])[:2]
        b = kwargs.get("other", b)
        if isinstance(a, torch.Tensor) and not a.is_floating_point() and not a.is_complex() and a.dtype != torch.bool:
            smallest = torch.iinfo(a.dtype).min
            divisor_minus_one = (b == -1) if isinstance(b, torch.Tensor) else torch.tensor(b == -1)
            if bool(((a == smallest) & divisor_minus_one).any()):
                raise Unverifiable("the graph divides the smallest integer by -1, which overflows")


# tensors one op may return: ``unbind``, ``split``, ``chunk`` and ``tensor_split`` make one per piece, views that no
# element bound sees (each a few hundred bytes of the judge's memory, none of a tensor's), so a forged unbind of 4M
# zeros took 2 to 5 s of the judge's CPU per replay and left its process 1.5 GB larger (a red team's finding); an honest
# graph splits a sequence into its blocks or steps, a few hundred at most
PIECE_LIMIT = 1 << 16


def _pieces(name: str, args: list) -> int:
    """How many tensors ``name(*args)`` is about to return, for the ops that return one per piece of a dim (0 for
    another op, or arguments the op will refuse itself). Their dims are positional, as every traced call passes
    them (see :func:`_resolve`)."""
    if name in ("hsplit", "vsplit", "dsplit") and len(args) == 2:  # tensor_split by sections, or by indices
        return _sections(args[1])
    if name not in ("unbind", "split", "split_copy", "unsafe_split", "chunk", "tensor_split") or not args:
        return 0
    x, how = args[0], (args + [0, 0])[1]
    dim = (args + [0, 0, 0])[2] if name != "unbind" else how
    if not isinstance(x, torch.Tensor) or type(dim) is not int or not -max(x.dim(), 1) <= dim < max(x.dim(), 1):
        return 0
    size = x.shape[dim] if x.dim() else 1
    if name == "unbind":
        return size
    if name == "tensor_split":
        if isinstance(how, torch.Tensor):
            return (int(how.item()) if how.dim() == 0 else how.numel() + 1) if not how.is_floating_point() else 0
        return _sections(how)
    if name == "chunk":
        return (how if size == 0 else min(how, size)) if type(how) is int else 0
    if type(how) is int:  # split, split_copy, unsafe_split by a size
        return -(-size // how) if how > 0 else 0
    return len(how) if isinstance(how, (list, tuple)) else 0


def _sections(how) -> int:
    """The pieces ``tensor_split`` (and ``hsplit``, ...) makes when given ``how``: a number of sections, or the
    indices it splits at (one piece more); 0 for an argument the op refuses itself."""
    return how if type(how) is int else len(how) + 1 if isinstance(how, (list, tuple)) else 0


def _halves(args: list) -> bool:
    """Whether an op's tensor arguments (an einsum's list of operands included) hold a half-precision one."""
    return any(t.dtype in (torch.float16, torch.bfloat16) for t in flatten_tensors(args))


class Unverifiable(ValueError):
    """The evidence cannot be checked (or does not hold); the message says why, for the learner."""


# ───────────────────────────── parsing ─────────────────────────────


class Graph:
    """A parsed graph: ``inputs`` (how many), ``nodes`` (dicts as the child sent them, arguments checked),
    ``constants`` (node index -> tensor) and ``output`` (an argument structure)."""

    def __init__(self, inputs: int, nodes: list, constants: dict, output):
        self.inputs, self.nodes, self.constants, self.output = inputs, nodes, constants, output
        # the nodes the output depends on, found by the first replay (:func:`live_nodes`); None before one
        self.live: frozenset[int] | None = None
        # by the same replay (:func:`peak_joint`): the most elements of memory holding values of both the first two
        # inputs that are alive at one time; and the elements of the largest live constant the call writes into
        self.peak_joint: int | None = None
        self.largest_scratch: int | None = None

    def calls(self) -> list[dict]:
        return [n for n in self.nodes if n["op"] == "call"]


def parse(data, blob: bytes) -> Graph:
    """Check the graph's shape, value by value; anything unexpected raises :class:`Unverifiable`."""
    from ..runtime import wire

    if not isinstance(data, dict):
        raise Unverifiable("no graph came back")
    if "error" in data:
        error = str(data["error"])[:300]
        if "have storage" in error:  # the trace met a wrapper without data: a vmap's batched tensor, a subclass
            error += "; torch.vmap and the other torch.func transforms make such tensors and cannot be traced"
        raise Unverifiable(f"your code could not be traced ({error})")
    inputs, nodes = data.get("inputs"), data.get("nodes")
    if type(inputs) is not int or inputs < 0 or not isinstance(nodes, list) or len(nodes) > NODE_LIMIT:
        raise Unverifiable("the graph is malformed or too large")
    constants: dict = {}
    copied = 0  # bytes of the blob the constants decoded so far
    seen_inputs = set()
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise Unverifiable("the graph is malformed")
        op = node.get("op")
        if op == "input":
            index = node.get("index")
            if type(index) is not int or not 0 <= index < inputs or index in seen_inputs:
                raise Unverifiable("the graph's inputs are malformed")
            seen_inputs.add(index)
        elif op == "constant":
            if len(constants) >= CONSTANT_LIMIT:
                raise Unverifiable("the graph holds too many constants")
            rec = node.get("value")
            if not isinstance(rec, dict):
                raise Unverifiable("a constant of the graph is malformed")
            try:
                array = wire.decode_array(rec, blob)
            except (ValueError, TypeError, AttributeError) as exc:
                raise Unverifiable(f"a constant of the graph is malformed ({exc})") from None
            if array.size > ELEMENT_LIMIT:
                raise Unverifiable("a constant of the graph is too large")
            # each constant is copied: records that share the blob's bytes would multiply it in the judge's memory
            # (the worker writes every array once, so an honest graph's constants never claim more than the blob)
            copied += array.nbytes
            if copied > len(blob):
                raise Unverifiable("the graph's constants claim more bytes than the reply holds")
            t = torch.from_numpy(array.copy())
            if rec["dtype"] in ("float16", "bfloat16"):
                t = t.to(DTYPES[rec["dtype"]])
            constants[i] = t
        elif op == "call":
            target = node.get("target")
            if not isinstance(target, str) or len(target) > 200:
                raise Unverifiable("the graph is malformed")
            _check_arg(node.get("args"), i, list_only=True)
            kwargs = node.get("kwargs")
            if not isinstance(kwargs, dict):
                raise Unverifiable("the graph is malformed")
            for value in kwargs.values():
                _check_arg(value, i)
        else:
            raise Unverifiable("the graph is malformed")
    if len(seen_inputs) != inputs:
        raise Unverifiable("the graph's inputs are malformed")
    output = data.get("output")
    _check_arg(output, len(nodes))
    return Graph(inputs, nodes, constants, output)


def _check_arg(value, before: int, depth: int = 0, list_only: bool = False) -> None:
    """An argument of node ``before`` may refer only to earlier nodes."""
    if list_only:
        if not isinstance(value, list) or len(value) > 64:
            raise Unverifiable("the graph is malformed")
        for v in value:
            _check_arg(v, before, depth + 1)
        return
    if value is None or type(value) in (bool, int, str):
        return
    if type(value) is float:
        return
    if not isinstance(value, dict) or len(value) != 1 or depth > 5:
        raise Unverifiable("the graph holds an argument of an unknown kind")
    ((kind, v),) = value.items()
    if kind == "ref" and type(v) is int and 0 <= v < before:
        return
    if kind == "list" and isinstance(v, list) and len(v) <= 4096:
        for item in v:
            _check_arg(item, before, depth + 1)
        return
    if (
        kind == "dtype"
        and v in DTYPES
        or kind == "layout"
        and v in LAYOUTS
        or kind == "memory_format"
        and v in MEMORY_FORMATS
        or kind == "device"
        and isinstance(v, str)
    ):
        return
    raise Unverifiable("the graph holds an argument of an unknown kind")


# ───────────────────────────── reading it ─────────────────────────────


def forbidden_ops(graph: Graph) -> list[str]:
    """The targets that name a fused attention kernel or entry point."""
    return sorted({n["target"] for n in graph.calls() if any(w in n["target"] for w in FORBIDDEN_WORDS)})


def count_ops(graph: Graph) -> int:
    """Tensor operations the output depends on (:func:`live_nodes`, once a replay has found them; every call
    before one), the grad-mode switches and tuple indexing excluded: an op whose result nothing uses is not work,
    and cannot pad a count."""
    live = graph.live
    return sum(
        1
        for i, n in enumerate(graph.nodes)
        if (live is None or i in live) and n["op"] == "call" and n["target"] not in NEUTRAL and n["target"] != "getitem"
    )


def _refs(value, out: list) -> list:
    """The node indices an argument structure refers to."""
    if isinstance(value, dict):
        ((kind, v),) = value.items()
        if kind == "ref":
            out.append(v)
        elif kind == "list":
            for item in v:
                _refs(item, out)
    elif isinstance(value, list):
        for item in value:
            _refs(item, out)
    return out


def _arguments(node: dict) -> list:
    """The node indices a call node takes as arguments, positional and keyword (none for an input or constant)."""
    return _refs(list(node["kwargs"].values()), _refs(node["args"], [])) if node["op"] == "call" else []


def live_nodes(graph: Graph, memory: list, writes: dict) -> frozenset[int]:
    """The nodes the graph's output depends on: through arguments, and through memory. ``memory[i]`` is the set of
    storages node ``i``'s result lives in and ``writes[i]`` the storages node ``i`` changed in place, both as the
    replay found them (:func:`_run`: a tensor's storage, and its version counter before and after the op), so a
    view of any kind, ``out=`` and an in-place op are seen as what they did, whatever their names or schemas say.
    A node that writes to memory a live node uses is live, with what it reads: a loop that fills a returned
    buffer through a view keeps every step."""
    deps = [_arguments(n) for n in graph.nodes]
    writers: dict[int, list[int]] = {}  # storage -> the nodes that changed it in place
    for i, written in writes.items():
        for storage in written:
            writers.setdefault(storage, []).append(i)
    live: set[int] = set()
    live_memory: set[int] = set()
    stack = _refs(graph.output, [])
    while stack:  # each node and each storage is visited once: linear in the graph's size
        j = stack.pop()
        if j in live:
            continue
        live.add(j)
        stack.extend(deps[j])
        for storage in memory[j] - live_memory:
            live_memory.add(storage)
            stack.extend(writers.get(storage, ()))
    return frozenset(live)


def peak_joint(graph: Graph, effects: "_Effects") -> int:
    """The most elements of memory holding values of both of the call's first two inputs (an attention call's
    queries and keys: scores, weights, what is made from them) alive at one time in the live part of a replay. A
    storage is alive from the node that makes it to the last live node that uses it (an argument living in it, or
    an in-place write to it), or to the end when the output lives in it; it counts from its first node on once it
    holds such values. Scores kept for every key block (a list of them, read again at the end) count together,
    where the largest single tensor is one block."""
    live = graph.live or frozenset()
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i in sorted(live):
        for storage in effects.memory[i] & effects.joint:
            first.setdefault(storage, i)
            last[storage] = max(last.get(storage, i), i)
        for j in _arguments(graph.nodes[i]):
            for storage in effects.memory[j] & effects.joint:
                last[storage] = max(last.get(storage, i), i)
        for storage in effects.writes.get(i, ()):
            if storage in effects.joint:
                first.setdefault(storage, i)
                last[storage] = max(last.get(storage, i), i)
    end = len(graph.nodes)
    for j in _refs(graph.output, []):
        for storage in effects.memory[j] & effects.joint:
            last[storage] = end
    events = sorted(
        [(first[s], effects.elements.get(s, 0)) for s in first]
        + [(last[s] + 1, -effects.elements.get(s, 0)) for s in first]
    )
    peak = alive = 0
    for _, delta in events:  # at one index, frees (negative) come before allocations
        alive += delta
        peak = max(peak, alive)
    return peak


def _resolve(target: str, kwargs: dict):
    """The judge's own op for a target name the replay runs (:func:`_runnable`), called with ``kwargs``; anything
    else raises :class:`Unverifiable`. Only a name of the form ``aten.<packet>.<overload>`` is looked up, and only
    an ATen op found that way is returned. Its keyword arguments must be ones its schema marks keyword-only, as the
    dispatcher records every traced call (the others by position): :func:`_guard` reads arguments by position, so
    a forged node passing ``self=`` or ``equation=`` by keyword would slip past it (a division that ends the judge
    with SIGFPE, an einsum of any size)."""
    m = _TARGET.fullmatch(target)
    if m is None:
        raise Unverifiable(f"the graph calls {target[:80]}, which the autograder does not replay")
    packet, overload = m.groups()
    if packet.startswith("__") and packet not in ("__and__", "__or__", "__xor__", "__iand__", "__ior__", "__ixor__"):
        raise Unverifiable(f"the graph calls {target[:80]}, which the autograder does not replay")
    try:
        op = getattr(getattr(torch.ops.aten, packet), overload)
    except (AttributeError, RuntimeError):
        raise Unverifiable(f"the graph calls {target[:80]}, which the autograder does not replay") from None
    if not isinstance(op, torch._ops.OpOverload) or op.namespace != "aten":
        raise Unverifiable(f"the graph calls {target[:80]}, which the autograder does not replay")
    try:
        how = _runnable(op)
    except RuntimeError:  # an overload torch's Python lists but its dispatcher does not have (aten.acosh.int, ...)
        how = None
    if how is None:
        raise Unverifiable(f"the graph calls {target[:80]}, which the autograder does not replay")
    keyword_only = {a.name for a in op._schema.arguments if a.kwarg_only}
    by_keyword = sorted(str(k) for k in kwargs if k not in keyword_only)
    if by_keyword:
        raise Unverifiable(
            f"the graph passes {', '.join(by_keyword)[:80]} of {target[:80]} by keyword, which no traced call does"
        )
    if packet in _UNINITIALISED:
        return _UNINITIALISED[packet]
    return _composite(op) if how == "composite" else op


@cache
def _runnable(op) -> str | None:
    """How the replay runs ``op`` (an ATen OpOverload): "direct" (an allowed op), "composite" (an op made of others,
    run under :class:`_InnerOps`), or None (never)."""
    name = op._overloadpacket.__name__
    if any(word in name for word in FORBIDDEN_WORDS) or name in _UNBOUNDED_WORK or "_polynomial_" in name:
        return None
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    if base in ALLOWED or base in MORE_ALLOWED:
        return "direct"
    if torch.Tag.nondeterministic_seeded in op.tags:
        return None
    if torch.Tag.pointwise in op.tags:
        return "direct"
    if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
        return "composite"
    return None


def _composite(op):
    def run(*args, **kwargs):
        with _InnerOps():
            return op(*args, **kwargs)

    return run


class _InnerOps(torch.utils._python_dispatch.TorchDispatchMode):
    """While an op made of other ops is replayed, refuses each of those the replay would not run directly, and stops
    at any of them once the replay is past its CPU deadline (:data:`_DEADLINE`): one such op can run any number of
    inner ops (hsplit into 4M sections ran one slice per section until the memory bound stopped it: 16 CPU s, a red
    team's finding)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # torch's switch: __torch_dispatch__ unwrapped, so its first call imports no torch._dynamo

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if time.thread_time() > _DEADLINE[0]:
            raise Unverifiable(f"the graph takes more than {REPLAY_CPU_S:g} s of CPU to replay")
        if _runnable(func) != "direct":
            raise Unverifiable(
                f"the graph's {func._overloadpacket.__name__} runs {func.name()}, which the autograder does not replay"
            )
        name = func._overloadpacket.__name__.rstrip("_")
        _guard(name, list(args), kwargs or {})
        value = func(*args, **(kwargs or {}))
        results = [t for t in (value if isinstance(value, (tuple, list)) else (value,)) if isinstance(t, torch.Tensor)]
        _INNER_PRODUCTS[0] += _products(name, list(args), results)
        return value


# the multiplications of the ops an op made of other ops ran (tensordot's mm, ...), summed by :class:`_InnerOps`
_INNER_PRODUCTS = [0]
# the thread CPU time (time.thread_time) at which the replay running now stops (:func:`_run` sets it), read by
# :class:`_InnerOps` at each inner op
_DEADLINE = [math.inf]


# ───────────────────────────── replaying it ─────────────────────────────


@contextlib.contextmanager
def _no_compiler() -> Iterator[None]:
    """For the meta-device passes. Most meta kernels are torch's Python references, wrapped in
    ``torch._disable_dynamo``, whose first call imports ``torch._dynamo`` (about 1.3 CPU s: more than a learner's
    whole ``check --stage``) only to keep the compiler out of them. The judge never compiles, so while
    ``torch._dynamo`` is not imported, a stand-in whose ``disable`` returns the function itself takes its place for
    the pass (the wrapper keeps that answer). Once the real module is imported (a notebook that compiles), it is
    used as it is."""
    if "torch._dynamo" in sys.modules:
        yield
        return
    stand_in = types.ModuleType("torch._dynamo")
    stand_in.disable = lambda fn, recursive=True, wrapping=True: fn  # type: ignore[attr-defined]
    sys.modules["torch._dynamo"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("torch._dynamo") is stand_in:
            del sys.modules["torch._dynamo"]


def _meta_pass(graph: Graph, ops: dict, inputs: list) -> None:
    with _no_compiler():
        _run(graph, ops, [x.to("meta") for x in inputs], "meta")


def replay(graph: Graph, inputs: list, *, sizes: list | None = None, shapes_checked: bool = False):
    """The graph's output for ``inputs`` (CPU tensors), computed here; ``sizes``, when given, receives (target,
    elements) of every tensor each live call makes (see :func:`measure`), and the first such replay finds which
    nodes are live (``graph.live``, :func:`live_nodes`): a result nothing uses is no work, and no memory the answer
    needed.

    The replay's memory is bounded before anything is allocated: every intermediate beyond :data:`ELEMENT_LIMIT`
    (or all of them beyond :data:`TOTAL_ELEMENT_LIMIT`) is refused as it is made, and a single op cannot
    allocate more than :data:`MEMORY_BUDGET` bytes first, because the kernel refuses it (:func:`_data_limit`,
    RLIMIT_DATA). Where no kernel enforces that limit (:func:`_limit_holds`: macOS, Windows, a Linux booted with
    ``ignore_rlimit_data``), shapes are propagated on the "meta" device first, which refuses the same graphs
    without allocating (torch's Python meta kernels: about ten times the cost of the replay itself), unless
    ``shapes_checked``: an earlier replay of this graph already did, for inputs of these shapes and dtypes.

    Once the live nodes are known, a replay without ``sizes`` runs only those: the output is the same (a dead node
    neither feeds a live one nor writes memory one reads), and work the answer does not need is replayed once, not
    once per replay."""
    ops = _ops(graph, inputs)
    bounded = _limit_holds()
    if not bounded and not shapes_checked:
        _meta_pass(graph, ops, inputs)
    effects = None if sizes is None else _Effects(memory=[], writes={}, elements={}, joint=set(), made=[])
    try:
        with _data_limit(MEMORY_BUDGET) if bounded else contextlib.nullcontext():
            out = _run(graph, ops, [x.clone() for x in inputs], "cpu", effects, graph.live if sizes is None else None)
    except MemoryError:
        raise Unverifiable("the graph needs more memory than the autograder replays with") from None
    if effects is not None and sizes is not None:
        if graph.live is None:
            graph.live = live_nodes(graph, effects.memory, effects.writes)
            graph.peak_joint = peak_joint(graph, effects)
            written = set().union(*effects.writes.values())
            graph.largest_scratch = max(
                (t.numel() for i, t in graph.constants.items() if i in graph.live and effects.memory[i] & written),
                default=0,
            )
        sizes += [
            (target, n, needs, memory, products, width)
            for i, target, n, needs, memory, products, width in effects.made
            if i in graph.live
        ]
    return out


MEMORY_BUDGET = 1 << 30  # bytes a replay may add to the judge's data segment (its tensors, ELEMENT_LIMIT's included)


def _data_bytes() -> int:
    """The size of this process's data segment as Linux counts it against RLIMIT_DATA (VmData)."""
    with open("/proc/self/status", "rb") as fh:
        for line in fh:
            if line.startswith(b"VmData:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmData in /proc/self/status")


@contextlib.contextmanager
def _data_limit(extra: int) -> Iterator[None]:
    """Until the block ends, an allocation that would take this process's data segment more than ``extra`` bytes
    above its size now fails (a RuntimeError from torch's allocator, a MemoryError from Python's): RLIMIT_DATA's
    soft limit, lowered here and restored after (a limit already lower is kept). OSError where the data segment
    cannot be read (no /proc)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = _data_bytes() + extra
    if soft != resource.RLIM_INFINITY and soft <= limit:  # already as tight (so too under a lower hard limit)
        yield
        return
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


@cache
def _limit_holds() -> bool:
    """Whether this kernel refuses an allocation beyond RLIMIT_DATA, tried once: with the limit 64 MiB above the
    data segment, 128 MiB (which nothing else refuses: it is never touched) must fail. Linux refuses it unless
    booted with ``ignore_rlimit_data``; macOS and Windows do not (or have no such limit)."""
    try:
        with _data_limit(64 << 20):
            try:
                probe = torch.empty(128 << 20, dtype=torch.uint8)
            except RuntimeError:
                return True
            del probe
    except (ImportError, OSError, ValueError):
        pass
    return False


# ops whose result shares its input's memory or allocates none of its own: a view of a tensor, or a broadcast
_NO_NEW_MEMORY = frozenset(
    """
alias as_strided broadcast_to broadcast_tensors chunk detach diagonal expand expand_as mH mT movedim narrow permute
select slice split split_with_sizes squeeze swapaxes t tensor_split transpose unbind unflatten unsqueeze view
view_as _unsafe_view getitem
""".split()
)


def measure(sizes: list) -> dict:
    """From (target, elements, inputs, memory) of every call of a replayed graph (:func:`replay`'s ``sizes``),
    figures decided by the judge alone: ``largest``, the elements of the largest tensor the graph creates (views and
    broadcasts excluded: they allocate nothing); ``largest_joint``, the elements of the largest memory that holds
    values depending on both of the call's first two inputs (an attention call's queries and keys: its scores, not
    a copy of the keys), a buffer allocated first and filled in place or through views included; ``elements``, the
    elements all its calls create (a measure of the work done, views excluded); ``ops``, the names of the ops it
    calls (ATen packets, sorted); and ``normalised``, each softmax-family op it calls (ATen packet) with the most
    entries one of its calls normalised over at once (:func:`_normalised_width`)."""
    normalised: dict[str, int] = {}
    for target, *_, width in sizes:
        if width:
            packet = _packet(target)
            normalised[packet] = max(width, normalised.get(packet, 0))
    created = [n for target, n, *_ in sizes if _packet(target) not in _NO_NEW_MEMORY]
    return {
        "largest": max(created, default=0),
        "largest_joint": max((max(n, memory) for _, n, needs, memory, *_ in sizes if {0, 1} <= needs), default=0),
        "elements": sum(created),
        "products": sum(products for *_, products, _ in sizes),
        "ops": sorted({_packet(target) for target, *_ in sizes}),
        "normalised": normalised,
    }


# the ops that compute a softmax or its normaliser over dims of their first argument (softmax, log_softmax,
# logsumexp, logcumsumexp, their special_ and underscored forms)
_NORMALISERS = ("softmax", "logsumexp", "logcumsumexp")


def _normalised_width(target: str, args: list) -> int:
    """The entries a softmax-family op normalises over at once: the product of its first argument's sizes along
    the dims it is given (all of them when none is, or when they cannot be read); 0 for another op. One block's
    softmax is as wide as the block, one of the whole row as the row."""
    if not any(word in _packet(target) for word in _NORMALISERS) or not args or not isinstance(args[0], torch.Tensor):
        return 0
    x, dims = args[0], args[1] if len(args) > 1 else None
    dims = [dims] if type(dims) is int else dims
    if not isinstance(dims, (list, tuple)) or not dims or not all(type(d) is int for d in dims):
        return x.numel()
    rank = max(x.dim(), 1)
    if not all(-rank <= d < rank for d in dims):
        return x.numel()
    shape = list(x.shape) or [1]
    return math.prod(shape[d] for d in {d % rank for d in dims})


# ops that multiply: matrix products (the index of their first matrix operand) and elementwise ones
_MATRIX_PRODUCTS = {
    **{"mm": 0, "bmm": 0, "matmul": 0, "mv": 0, "dot": 0, "vdot": 0},
    **{"addmm": 1, "baddbmm": 1, "addbmm": 1, "addmv": 1},  # after the term added
}
_ELEMENTWISE_PRODUCTS = frozenset({"mul", "addcmul", "div", "addcdiv"})


def _products(target: str, args: list, results: list) -> int:
    """The multiplications one replayed call did: a matrix product's multiply-adds (:func:`_matrix_product_work`,
    which the guard reads before the op runs), an elementwise product's elements (``mul``, ``div``, ``addcmul``,
    ``addcdiv``), 0 for any other op. How the queries meet the keys does not change the count: ``q @ k.T`` and
    ``(q[:, None] * k[None]).sum(-1)`` both do T_q x T_k x hs."""
    name = _packet(target)
    work = _matrix_product_work(name, args)
    if work:
        return work
    if name in _ELEMENTWISE_PRODUCTS:
        return sum(t.numel() for t in results if isinstance(t, torch.Tensor))
    return 0


def _packet(target: str) -> str:
    m = _TARGET.fullmatch(target)
    name = m.group(1) if m else target
    return name[:-1] if name.endswith("_") and name[:-1] in ALLOWED else name


def _ops(graph: Graph, inputs: list) -> dict:
    if len(inputs) != graph.inputs:
        raise Unverifiable(f"the graph takes {graph.inputs} tensors, the call had {len(inputs)}")
    return {
        i: _resolve(n["target"], n["kwargs"])
        for i, n in enumerate(graph.nodes)
        if n["op"] == "call" and n["target"] not in NEUTRAL and n["target"] != "getitem"
    }


class _Effects(NamedTuple):
    """What each node of a replay did (:func:`_run`), read by :func:`live_nodes`, :func:`peak_joint` and
    :func:`measure`."""

    memory: list  # by node: the set of storages its result lives in
    writes: dict  # node -> the storages it changed in place (a tensor argument whose version counter moved)
    elements: dict  # storage -> its size in elements
    joint: set  # the storages that came to hold values depending on both of the first two inputs
    made: list  # (node, target, elements, inputs, memory, products, width) of every tensor each call returns; ``inputs``: the graph
    # inputs (by index) its value depends on, through arguments and through memory written in place; ``memory``:
    # the elements of the storage it lives in (a view, or an in-place write, of a larger buffer: the buffer's)


def _run(
    graph: Graph,
    ops: dict,
    inputs: list,
    device: str,
    effects: _Effects | None = None,
    live: frozenset[int] | None = None,
):
    """The graph's output; ``effects``, when given (on the CPU), is filled with what each node did; ``live``, when
    given, the only nodes run (:func:`live_nodes`; the others are left as None)."""
    env: list = []
    total = 0
    deadline = _DEADLINE[0] = time.thread_time() + REPLAY_CPU_S
    depends: list[frozenset] = []  # by node: the graph inputs its value depends on (with ``effects`` only)
    written_from: dict[int, frozenset] = {}  # storage -> the inputs whatever was written into it depends on
    for i, node in enumerate(graph.nodes):
        before: tuple[tuple[torch.Tensor, int], ...] = ()
        op = node["op"]
        if time.thread_time() > deadline:
            raise Unverifiable(f"the graph takes more than {REPLAY_CPU_S:g} s of CPU to replay")
        if live is not None and i not in live:
            value = None
        elif op == "input":
            value = inputs[node["index"]]
        elif op == "constant":
            value = graph.constants[i].to(device) if device == "meta" else graph.constants[i].clone()
        elif node["target"] in NEUTRAL:
            value = None
        else:
            args = [_value(a, env, device) for a in node["args"]]
            kwargs = {k: _value(v, env, device) for k, v in node["kwargs"].items()}
            if node["target"] == "getitem":
                if (
                    len(args) != 2
                    or not isinstance(args[0], (tuple, list))
                    or type(args[1]) is not int
                    or not -len(args[0]) <= args[1] < len(args[0])
                ):
                    raise Unverifiable("the graph indexes something that is not a tuple of results")
                value = args[0][args[1]]
            else:
                if effects is not None:
                    before = tuple((t, t._version) for t in flatten_tensors((args, kwargs)))
                try:
                    _guard(_packet(node["target"]), args, kwargs)
                    _INNER_PRODUCTS[0] = 0
                    value = ops[i](*args, **kwargs)
                except Unverifiable:
                    raise
                except Exception as exc:  # noqa: BLE001 - a graph the op refuses is not evidence
                    if isinstance(exc, RuntimeError) and _ALLOCATOR_REFUSED.search(str(exc)):
                        raise Unverifiable(
                            f"the graph's {node['target']} needs more memory than the autograder replays with"
                        ) from None
                    raise Unverifiable(
                        f"the graph's {node['target']} cannot be replayed ({type(exc).__name__}: {str(exc)[:120]})"
                    ) from None
        results = [t for t in (value if isinstance(value, (tuple, list)) else (value,)) if isinstance(t, torch.Tensor)]
        for t in results:
            if t.numel() > ELEMENT_LIMIT:
                raise Unverifiable(
                    f"the graph's {node.get('target', 'input')} makes a tensor of {t.numel()} "
                    "elements, more than the autograder replays"
                )
            total += t.numel()
        if effects is not None:
            if op == "input":
                needs = frozenset({node["index"]})
            elif op == "call":
                needs = frozenset().union(
                    *(depends[j] for j in _arguments(node)),
                    *(written_from.get(_storage(t), frozenset()) for t, _ in before),
                )
            else:
                needs = frozenset()
            depends.append(needs)
            products = _products(node["target"], args, results) + _INNER_PRODUCTS[0] if op == "call" else 0
            width = _normalised_width(node["target"], args) if op == "call" else 0
            for t in results:  # every storage's size (an input's too: it may be written in place)
                storage_elements = t.untyped_storage().nbytes() // max(t.element_size(), 1)
                effects.elements[_storage(t)] = storage_elements
                if op == "call":
                    effects.made.append((i, node["target"], t.numel(), needs, storage_elements, products, width))
                    products = 0  # an op's multiplications are counted once, with its first result
            effects.memory.append({_storage(t) for t in results})
            changed = {_storage(t) for t, version in before if t._version != version}
            for storage in changed | effects.memory[-1]:
                written_from[storage] = written_from.get(storage, frozenset()) | needs
                if {0, 1} <= written_from[storage]:
                    effects.joint.add(storage)
            if changed:
                effects.writes[i] = changed
        if total > TOTAL_ELEMENT_LIMIT:
            raise Unverifiable("the graph makes more tensor elements than the autograder replays")
        env.append(value)
    if time.thread_time() > deadline:  # the last op too: a costly op placed at the end is not evidence either
        raise Unverifiable(f"the graph takes more than {REPLAY_CPU_S:g} s of CPU to replay")
    return _value(graph.output, env, device)


def _storage(t: torch.Tensor) -> int:
    """Which storage a replayed tensor's memory is: the address of torch's storage object, which every view of
    one tensor shares and which stays the same when an ``out=`` resize moves the memory itself (the data pointer
    does not; an earlier view and a later write then looked like two memories). Private (``_cdata``, as
    ``torch.multiprocessing``'s StorageWeakRef reads it): torch's tested range holds it. The replay keeps every
    tensor alive, so no storage object is freed and reused while it runs."""
    return t.untyped_storage()._cdata


def _value(arg, env: list, device: str):
    if not isinstance(arg, dict):
        return arg
    ((kind, v),) = arg.items()
    if kind == "ref":
        return env[v]
    if kind == "list":
        return [_value(a, env, device) for a in v]
    if kind == "dtype":
        return DTYPES[v]
    if kind == "device":
        return torch.device(device)  # a graph traced on an accelerator is replayed here
    if kind == "layout":
        return LAYOUTS[v]
    return MEMORY_FORMATS[v]


# ───────────────────────────── the verdict ─────────────────────────────


def flatten_tensors(value, kind: type = torch.Tensor) -> list:
    """The tensors (or the leaves of another ``kind``) of a judge-side argument structure, in the order the worker
    traces them (positional arguments, then keyword arguments, depth first)."""
    found: list = []

    def walk(v, depth: int):
        if isinstance(v, kind):
            found.append(v)
        elif depth < 6 and isinstance(v, (list, tuple)):
            for item in v:
                walk(item, depth + 1)
        elif depth < 6 and isinstance(v, dict):
            for item in v.values():
                walk(item, depth + 1)

    walk(value, 0)
    return found


def same_answer(replayed, answer, dtype: torch.dtype, strict: bool = True) -> str | None:
    """None when ``replayed`` (the graph's output) matches ``answer`` (the learner's, as decoded from its reply)
    within the tolerance of ``dtype``, the dtype of the call's inputs; else what differs. ``strict``: the two
    come from the same operations (the replay tolerance); otherwise one of them is the grader's reference (the
    value checks' tolerance, so that an answer the value checks accept is not called unverifiable)."""
    from ..checks import REPLAY_TOLERANCES, TOLERANCES, compare, tolerance
    from .values import Out

    if isinstance(answer, Out) and isinstance(answer.t, torch.Tensor):
        if not isinstance(replayed, torch.Tensor):
            return "the graph does not return a tensor where your code does"
        if tuple(replayed.shape) != tuple(answer.t.shape):
            return f"the graph returns shape {tuple(replayed.shape)}, your code {tuple(answer.t.shape)}"
        ok, where = compare(answer.t, replayed, *tolerance(dtype, REPLAY_TOLERANCES if strict else TOLERANCES))
        return None if ok else where
    if isinstance(answer, (tuple, list)) and isinstance(replayed, (tuple, list)) and len(answer) == len(replayed):
        for a, r in zip(answer, replayed):
            why = same_answer(r, a, dtype, strict)
            if why:
                return why
        return None
    if isinstance(answer, (int, float)) and not isinstance(answer, bool) and isinstance(replayed, (int, float)):
        return None if math.isclose(answer, replayed, rel_tol=1e-9) or answer == replayed else "a number differs"
    return "the graph's result is not your code's result"


def verify(
    reply: Mapping[str, Any],
    blob: bytes,
    inputs: list,
    dtype: torch.dtype,
    fresh_call,
    reference=None,
    reference_args=None,
) -> dict:
    """The record graders read, ``{"n_ops": int | None, "forbidden": [...]}``, decided from the graph in
    ``reply`` (and ``blob``, the reply's arrays). ``inputs``: the CPU tensors the traced call received, in
    dtype ``dtype``. When the graph calls a forbidden op, ``n_ops`` is None and ``forbidden`` names those ops
    (the graph is not replayed, so nothing it says is believed); when the evidence does not hold, ``n_ops`` is
    None and ``forbidden`` holds ``"unverifiable: <reason>"``; when it holds, the record also has :func:`measure`'s ``largest``,
    ``elements`` and ``ops`` for the call's input shapes, ``peak_joint`` (:func:`peak_joint`) and
    ``largest_constant``, the elements of the largest tensor the answer depends on that the call did not make with
    torch ops and writes into (memory made outside torch, such as a numpy array: scratch space a bound on the
    call's own tensors would not see; a table the call only reads, a view of it, is not scratch).

    The graph must first give the learner's own answer on those inputs. Then it is replayed on fresh inputs of
    the same shapes:

    - with ``reference`` (the grader's own function, called as ``reference(*reference_args(fresh))``) and an
      answer that is right (it equals the reference on the inputs sent): the replay must equal the reference on
      the fresh inputs, which never reach the child. Nothing the child knows or remembers can make a graph that
      skips the work pass this.
    - otherwise (a wrong answer, no reference, or one that cannot answer for these inputs: the student release's
      recorded values answer only the inputs they were recorded for): ``fresh_call(fresh)`` makes a second,
      untraced call with them, whose answer the replay must give. A function that keeps state between calls
      could agree with a graph it forged (SECURITY.md, what does not hold). ``fresh_call`` is None for a call
      given objects the learner's process built (a cache it appends to): a second call would find them changed
      and answer another question, so such a wrong answer is checked on the recorded inputs only."""
    try:
        graph = parse(reply.get("graph"), blob)
        forbidden = forbidden_ops(graph)
        if forbidden:  # evidence against the learner needs no replay; nothing else in the graph is verified
            return {"n_ops": None, "forbidden": forbidden}
        sizes: list = []
        answer = reply.get("value")
        why = same_answer(replay(graph, inputs, sizes=sizes), answer, dtype)
        if why:
            raise Unverifiable(f"the graph of your call does not compute its answer ({why})")
        fresh = [fresh_like(x) for x in inputs]
        expected = fresh_expected = None
        if reference is not None and reference_args is not None:
            expected = _reference(reference, reference_args(inputs))
            fresh_expected = _reference(reference, reference_args(fresh)) if expected is not None else None
        if (
            expected is not None
            and fresh_expected is not None
            and same_answer(expected, answer, dtype, strict=False) is None
        ):
            why = same_answer(
                replay(graph, fresh, shapes_checked=True), _as_answer(fresh_expected), dtype, strict=False
            )
            if why:
                raise Unverifiable(
                    "your answer is right on the checked input, but the computation traced from "
                    f"your code does not compute it on other inputs of the same shapes ({why}): "
                    "part of the work escaped the trace"
                )
        elif fresh_call is not None:  # no reference for these inputs (a student release answers only the inputs it
            # recorded), or a wrong answer (the reference says nothing about it): the replay must give the learner's
            # own fresh answer
            replayed = replay(graph, fresh, shapes_checked=True)
            try:
                theirs = fresh_call(fresh)
            except Exception as exc:  # noqa: BLE001 - the second call's own failure, told apart below
                raise _SecondCall(exc) from None
            why = same_answer(replayed, theirs, dtype)
            if why:
                raise Unverifiable(
                    "the graph of your call does not compute your answer on other inputs of the "
                    f"same shapes ({why}): part of the work escaped the trace"
                )
        return {
            "n_ops": count_ops(graph),
            "forbidden": [],
            **measure(sizes),
            "peak_joint": graph.peak_joint,
            "largest_constant": graph.largest_scratch,
        }
    except Unverifiable as exc:
        return {"n_ops": None, "forbidden": [f"unverifiable: {exc}"]}
    except _SecondCall as exc:  # the child's failure in the second call (a timeout, a crash): reported as before
        raise exc.original from None
    except Exception as exc:  # noqa: BLE001 - whatever else a graph made the judge's own code raise
        # is no evidence either: a check that raised instead ("could not check this") lost only its own points, and
        # a stage written by hand kept those of its unrecorded calls (a red team's graph naming aten.acosh.int, an
        # overload the dispatcher does not have, while torch's Python attention code answered the other calls)
        return {
            "n_ops": None,
            "forbidden": [f"unverifiable: the graph cannot be checked ({type(exc).__name__}: {str(exc)[:120]})"],
        }


class _SecondCall(Exception):
    """An exception of :func:`verify`'s second, untraced call (the learner's process, not the graph): it is raised
    again as it was, out of :func:`verify`."""

    def __init__(self, original: BaseException):
        super().__init__(str(original)[:200])
        self.original = original


def _reference(reference, args):
    """The grader's reference on ``args`` (float64), or None when it cannot be computed for them."""
    try:
        with torch.no_grad():
            return reference(
                *[a.to(torch.float64) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
            )
    except Exception:  # noqa: BLE001 - e.g. the learner's module holds weights the reference cannot use
        return None


def _as_answer(value):
    from .values import Out

    if isinstance(value, torch.Tensor):
        return Out(t=value, dtype=str(value.dtype).replace("torch.", ""), device="cpu")
    return value


def fresh_like(x: torch.Tensor) -> torch.Tensor:
    """Other values of ``x``'s shape and dtype, drawn here from the system's random source: floats about as
    large as ``x``'s, other dtypes (masks, indices) unchanged."""
    if not x.is_floating_point() or x.numel() == 0:
        return x.clone()
    import secrets

    g = torch.Generator().manual_seed(secrets.randbits(63))
    scale = float(x.detach().to(torch.float64).abs().max()) or 1.0
    fresh = (torch.rand(x.shape, generator=g, dtype=torch.float64) * 2 - 1) * scale
    return fresh.to(x.dtype)
