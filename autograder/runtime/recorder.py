"""The traced graph of a recorded call: every ATen op the learner's code calls, recorded at the dispatcher's
PreDispatch key, sent back as plain data for the judge to check and replay (:mod:`autograder.sandbox.evidence`)."""

from __future__ import annotations

from . import fused
from .torchrefs import capture_torch

# Bound as module globals before any learner code exists: a learner who replaces builtins.isinstance (or
# len, sorted, ...) later does not change what the worker's own code calls.
from builtins import (  # noqa: A004 - shadowing on purpose
    BaseException,
    Exception,
    KeyboardInterrupt,
    any,
    bool,
    dict,
    enumerate,
    float,
    getattr,
    int,
    isinstance,
    len,
    list,
    range,
    str,
    tuple,
    type,
)


# Bounds on the graph a recorded call sends back (see capture_graph); the judge applies its own as well.
GRAPH_NODE_LIMIT = 20000
GRAPH_CONSTANT_LIMIT = 1024  # tensors the traced code held (module parameters, buffers, literal tensors)
GRAPH_CONSTANT_ELEMENTS = 1 << 20  # in all

# ───────────────────────────── evidence: the traced graph of a recorded call ─────────────────────────────
#
# A call with ``record`` is run as usual, for its answer, and traced once more by a recorder at the dispatcher's
# PreDispatch key (the level ``make_fx(pre_dispatch=True)`` traces at): every ATen op the learner's code calls, as
# it enters the dispatcher, before autograd or any decomposition, so fused kernels (scaled_dot_product_attention...)
# stay single nodes. The graph travels as plain data; the judge (autograder/sandbox/evidence.py) believes none of it: it
# looks for forbidden ops, counts the others, and replays the graph with its own torch on the inputs it sent and
# on fresh ones, against the learner's own answers.


class _Slot:
    """Where the ``index``-th traced tensor goes back into the call's arguments."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _trace_inputs(t, args: list, kwargs: dict) -> tuple[list, list, dict]:
    """Copies of the call's tensors, taken before the call (which may change its inputs in place), and the
    arguments with each tensor replaced by its :class:`_Slot`. The order is the order the judge encodes them in
    (positional arguments, then keyword arguments, depth first)."""
    tensors: list = []

    def walk(value, depth: int):
        if isinstance(value, t.TensorBase):
            tensors.append(t.clone(t.detach(value)))
            return _Slot(len(tensors) - 1)
        if depth < 6 and type(value) in (list, tuple):
            return type(value)(walk(v, depth + 1) for v in value)
        if depth < 6 and type(value) is dict:
            return {k: walk(v, depth + 1) for k, v in value.items()}
        return value

    return tensors, walk(list(args), 0), walk(dict(kwargs), 0)


def _holds_objects(handles: dict, args: list, kwargs: dict) -> bool:
    """Do the call's arguments hold an object built by an earlier request (see ``__handle__`` records)?"""
    built = {id(obj) for obj in handles.values()}
    return any(id(v) in built for v in (*args, *kwargs.values()))


def _twin(t, value):
    """A deep copy of ``value``. Tensors with autograd history (keys a cache kept from a forward run with grad),
    which ``copy.deepcopy`` refuses, are copied detached: the trace needs their values only."""
    import copy

    memo: dict = {}

    def seed(v, depth: int) -> None:
        if isinstance(v, t.TensorBase):
            if v.grad_fn is not None and id(v) not in memo:
                memo[id(v)] = t.clone(t.detach(v))
        elif depth < 6 and type(v) in (list, tuple):
            for item in v:
                seed(item, depth + 1)
        elif depth < 6 and type(v) is dict:
            for item in v.values():
                seed(item, depth + 1)
        elif depth < 6 and not isinstance(v, type):
            if isinstance(getattr(v, "__dict__", None), dict):
                for item in vars(v).values():
                    seed(item, depth + 1)
            for klass in type(v).__mro__:  # attributes in __slots__ have no __dict__ entry
                names = klass.__dict__.get("__slots__", ())
                for name in (names,) if isinstance(names, str) else names:
                    if isinstance(name, str) and name not in ("__dict__", "__weakref__"):
                        seed(getattr(v, name, None), depth + 1)

    seed(value, 0)
    return copy.deepcopy(value, memo)


def _fill(value, xs):
    if type(value) is _Slot:
        return xs[value.index]
    if type(value) in (list, tuple):
        return type(value)(_fill(v, xs) for v in value)
    if type(value) is dict:
        return {k: _fill(v, xs) for k, v in value.items()}
    return value


class _TraceError(Exception):
    pass


def capture_graph(fn, tensors: list, args: list, kwargs: dict, encode) -> dict:
    """``fn(*args, **kwargs)`` traced: ``{"inputs": n, "nodes": [...], "output": arg}``, or ``{"error": why}``
    when it cannot be traced. A node is ``{"op": "input", "index": i}``, ``{"op": "constant", "value": array
    record}`` (parameters, buffers and literal tensors the code held; ``encode`` puts them in the reply's blob) or
    ``{"op": "call", "target": "aten.matmul.default", "args": [...], "kwargs": {...}}`` (``"getitem"``: one
    result of an op that returns several); an argument is a number, string, bool or None, ``{"ref": node
    index}``, ``{"list": [...]}``, ``{"dtype": name}``, ``{"device": name}``, ``{"layout": name}`` or
    ``{"memory_format": name}``."""
    t = capture_torch()
    try:
        mark_entry_points()
        _make_tracer()
        recorder = _TRACER[0](tensors, encode)
        with t.no_grad(), _TRACER[1](), recorder:
            value = fn(*_fill(args, tensors), **_fill(kwargs, tensors))
        output = recorder.arg(value) if recorder.error is None else None
        if recorder.error is not None:
            return {"error": recorder.error}
        return {"inputs": len(tensors), "nodes": recorder.nodes, "output": output}
    except _TraceError as exc:
        return {"error": str(exc)}
    except BaseException as exc:  # noqa: BLE001 - whatever the learner's code raised while traced
        if isinstance(exc, KeyboardInterrupt):
            raise
        try:
            why = f"{type(exc).__name__}: {str(exc)[:300]}"
        except BaseException:  # noqa: BLE001 - an exception class of the learner's may fail in __str__
            why = "the trace raised an exception"
        return {"error": why}


_TRACER: list = []  # (the recorder class, torch's context that turns its Python dispatcher on), made once

# torch's Python code that computes attention with ordinary ops (relative to torch's package folder): whole files,
# or (file, function)
TORCH_ATTENTION_FILES = (
    "_inductor/fx_passes/fuse_attention.py",  # the pattern functions the compiler matches SDPA with
    "ao/nn/quantizable/modules/activation.py",  # torch.ao's quantizable MultiheadAttention
    "_higher_order_ops/flex_attention.py",  # flex_attention's math implementation
)
TORCH_ATTENTION_FUNCTIONS = (
    ("nn/functional.py", "multi_head_attention_forward"),
    ("_decomp/decompositions.py", "scaled_dot_product_flash_attention_for_cpu"),
    # the reference implementation of torch.onnx.ops.attention, reachable as a plain Python function through
    # torch.onnx.ops._impl.ONNX_ATEN_DECOMP_TABLE (a red team's finding: its plain-op path passed as by hand)
    ("onnx/ops/_impl.py", "attention_23"),
)
# and any function of torch's own Python code whose name holds one of these words (case aside): torch's attention
# implementations that no list above names yet (a new release adds some)
TORCH_ATTENTION_NAMES = ("attention", "attn")


def _torch_attention_frames(torch):
    """A function telling whether the op being dispatched was called, at any depth, from torch's own Python
    attention code (by the code objects on the stack: a wrapper unwrapped, a private function or an alias all
    run the same code): the files and functions listed above, and any function of torch whose name holds one of
    :data:`TORCH_ATTENTION_NAMES`. Code copied out of torch (its source executed again) is the learner's own: a
    plagiarism question, not one the graph answers."""
    import os
    import sys

    root = os.path.dirname(os.path.abspath(torch.__file__))
    files = frozenset(os.path.join(root, *f.split("/")) for f in TORCH_ATTENTION_FILES)
    functions = frozenset((os.path.join(root, *f.split("/")), name) for f, name in TORCH_ATTENTION_FUNCTIONS)
    inside = root + os.sep
    getframe = sys._getframe
    verdicts: dict = {}  # code object -> whether it is torch's attention code (each code object judged once)

    def judged(code) -> bool:
        name = code.co_filename
        verdict = (
            name in files
            or (name, code.co_name) in functions
            or (name.startswith(inside) and any(word in code.co_name.lower() for word in TORCH_ATTENTION_NAMES))
        )
        if len(verdicts) < 100000:
            verdicts[code] = verdict
        return verdict

    def found() -> bool:
        # the whole stack, however deep: a bound let torch's attention code run its ops through a torch function
        # mode that recursed past it first (a red team's finding); the walk costs only the learner's own process
        frame = getframe(2)
        while frame is not None:
            code = frame.f_code
            verdict = verdicts.get(code)
            if verdict is None:
                verdict = judged(code)
            if verdict:
                return True
            frame = frame.f_back
        return False

    return found


def _make_tracer() -> None:
    """The recorder class. torch lets only its own tracing modes sit at the PreDispatch key (the slot of
    ``ProxyTorchDispatchMode``), so the recorder is one of those by class, with its own ``__init__`` and
    ``__torch_dispatch__``: it runs each op and appends it to a list of nodes, a few microseconds per op instead
    of the fx machinery's ~1 ms. Tensors are told apart by identity, through weak references (a strong one
    would make autograd copy a factory's result into a new tensor): an id whose tensor has died is not
    mistaken for a later tensor that reuses it."""
    if _TRACER:
        return
    import weakref

    import torch
    from torch._dispatch.python import enable_python_dispatcher
    from torch.fx.experimental.proxy_tensor import ProxyTorchDispatchMode
    from torch.utils._python_dispatch import TorchDispatchMode

    pre_dispatch, proxy_key = torch._C.DispatchKey.PreDispatch, torch._C._TorchDispatchModeKey.PROXY
    skip = {torch.ops.prim.device.default}  # asks a tensor's device: nothing to replay
    literal = {torch.ops.aten.lift_fresh.default}  # torch.tensor(...) lifting its data: the tensor is a constant
    TensorBase, dtype, device, layout, memory_format = (
        torch._C.TensorBase,
        torch.dtype,
        torch.device,
        torch.layout,
        torch.memory_format,
    )
    OpOverload = torch._ops.OpOverload
    ref = weakref.ref
    plain_dispatch = torch._C._DisablePythonDispatcher
    from_torch_attention = _torch_attention_frames(torch)

    class Recorder(ProxyTorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # torch's documented switch (TorchDispatchMode._should_skip_dynamo): False leaves __torch_dispatch__
            # unwrapped, so its first call does not import torch._dynamo (about 1.3 s of every sandbox's start)
            # only to keep a compiler that never runs here out of the recorder
            return False

        def __init__(self, tensors: list, encode):
            TorchDispatchMode.__init__(self, pre_dispatch)
            self._mode_key = proxy_key
            self.enter_stack: list = []
            self.pre_dispatch = True
            self.nodes: list = [{"op": "input", "index": i} for i in range(len(tensors))]
            self.ids: dict = {}  # id(tensor) -> (weak reference, node)
            for i, x in enumerate(tensors):
                self.ids[id(x)] = (ref(x), i)
            self.encode = encode
            self.error: str | None = None
            self.n_constants = self.n_elements = 0
            self.marked = False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if self.error is not None or func in skip:
                return func(*args, **kwargs)
            if not self.marked and from_torch_attention():  # torch's own attention code, however it was reached
                self.marked = True
                self.add({"op": "call", "target": fused.TORCH_CODE_MARK, "args": [], "kwargs": {}})
            try:  # the arguments are read before the op runs: an in-place op must not change a constant first
                if func in literal:
                    record = self.arg(args[0])
                else:
                    record = {
                        "op": "call",
                        "target": (str(func) if type(func) is OpOverload else repr(func))[:200],
                        "args": [self.arg(a) for a in args],
                        "kwargs": {str(k): self.arg(v) for k, v in kwargs.items()},
                    }
            except _TraceError as exc:
                self.error = str(exc)
                return func(*args, **kwargs)
            with plain_dispatch():  # the op itself runs in C++, without the Python decompositions the tracer enables
                value = func(*args, **kwargs)
            try:
                if func in literal:
                    self.name(value, record["ref"])
                else:
                    self.name(value, self.add(record))
            except _TraceError as exc:
                self.error = str(exc)
            return value

        def add(self, record: dict) -> int:
            if len(self.nodes) >= GRAPH_NODE_LIMIT:
                raise _TraceError(f"the traced graph has more than {GRAPH_NODE_LIMIT} nodes")
            self.nodes.append(record)
            return len(self.nodes) - 1

        def name(self, value, node: int) -> None:
            """``value`` (an op's result) is node ``node``; each tensor of a list of results gets a getitem."""
            if isinstance(value, TensorBase):
                self.ids[id(value)] = (ref(value), node)
            elif type(value) in (tuple, list):
                for i, v in enumerate(value):
                    if isinstance(v, TensorBase):
                        self.name(
                            v, self.add({"op": "call", "target": "getitem", "args": [{"ref": node}, i], "kwargs": {}})
                        )

        def arg(self, value, depth: int = 0):
            if isinstance(value, TensorBase):
                known = self.ids.get(id(value))
                node = known[1] if known is not None and known[0]() is value else None
                if node is None:  # a tensor the graph has not made: a constant, with its value now
                    self.n_constants += 1
                    self.n_elements += value.numel()
                    if self.n_constants > GRAPH_CONSTANT_LIMIT or self.n_elements > GRAPH_CONSTANT_ELEMENTS:
                        raise _TraceError(
                            "the traced code holds more tensors it did not make in the call than the autograder "
                            f"reads back ({GRAPH_CONSTANT_LIMIT} tensors, {GRAPH_CONSTANT_ELEMENTS} elements in all: "
                            "a table built beforehand for far more steps than the call needs, for instance)"
                        )
                    node = self.add({"op": "constant", "value": self.encode(value)})
                    self.ids[id(value)] = (ref(value), node)
                return {"ref": node}
            if value is None or type(value) in (bool, int, float):
                return value
            if type(value) is str:
                return value[:100]
            if isinstance(value, (list, tuple)) and depth < 4:
                return {"list": [self.arg(v, depth + 1) for v in value]}
            if isinstance(value, dtype):
                return {"dtype": str(value).replace("torch.", "")}
            if isinstance(value, device):
                return {"device": str(value)}
            if isinstance(value, layout):
                return {"layout": str(value).replace("torch.", "")}
            if isinstance(value, memory_format):
                return {"memory_format": str(value).replace("torch.", "")}
            raise _TraceError(f"an argument of type {type(value).__name__[:60]} in the traced graph")

    _TRACER[:] = [Recorder, enable_python_dispatcher]


_MARKS: list = []


def mark_entry_points() -> None:
    """Make torch's Python-level attention code, which decomposes into ordinary ops, visible in a traced graph:
    ``F.multi_head_attention_forward`` (what ``nn.MultiheadAttention`` calls unless it takes its fused path,
    itself a forbidden ATen op) and the forward of ``torch.ao.nn.quantizable.MultiheadAttention`` (a public
    subclass whose forward is plain Python) are wrapped so that each call also dispatches the identity op
    ``autograder::multi_head_attention_forward`` first, a node the judge finds by its name, and which a stage
    written by hand switches off like a fused kernel (``fused.switch_off``). (torch's decomposition of
    scaled_dot_product_attention calls its math kernel, a forbidden ATen op.) Installed once per process (in the
    sandbox's zygote, before any learner code exists). Best effort: code that reaches an original function (a
    wrapper's closure) runs torch's own Python code, a plagiarism question."""
    if _MARKS:
        return
    import torch
    import torch.nn.functional as F

    lib = torch.library.Library("autograder", "DEF")
    lib.define("multi_head_attention_forward(Tensor x) -> Tensor")
    lib.impl("multi_head_attention_forward", _identity, "CompositeExplicitAutograd")
    mark = torch.ops.autograder.multi_head_attention_forward.default
    F.multi_head_attention_forward = _marked(F.multi_head_attention_forward, mark)
    quantizable = getattr(getattr(torch.ao.nn, "quantizable", None), "MultiheadAttention", None)  # not in every release
    for method in ("forward", "_forward_impl"):
        if quantizable is not None and method in vars(quantizable):
            setattr(quantizable, method, _marked(vars(quantizable)[method], mark))
    _MARKS.append(lib)


def _marked(original, mark):
    """``original`` that first dispatches ``mark`` on its first tensor argument (or an empty tensor)."""
    from functools import wraps

    import torch

    @wraps(original)
    def marked(*args, **kwargs):
        first = next((a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)), None)
        mark(first if first is not None else torch.empty(0))
        return original(*args, **kwargs)

    del marked.__wrapped__  # functools.wraps's link to the original: inspect.unwrap would hand it out
    return marked


def _identity(x):
    return x.clone()
