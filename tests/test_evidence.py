"""autograder.sandbox.evidence: the judge parses, refuses and replays a recorded call's graph; autograder.checks judges
values at the tolerance of the dtype asked for."""

from __future__ import annotations

import sys
import warnings

import pytest
import torch

from autograder.sandbox import evidence
from autograder.runtime import wire
from autograder.runtime.executor import Executor
from autograder.runtime.recorder import _trace_inputs, capture_graph
from autograder.checks import CheckFailed, expect_close
from autograder.sandbox.proxy import LocalStudent
from autograder.sandbox.values import Out

HAND = """
import torch
import torch.nn.functional as F

def hand(q, k, v):
    s = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
    T = q.shape[-2]
    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), 1), float("-inf"))
    return torch.softmax(s, -1) @ v

def fused(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
"""
Q = torch.linspace(-1, 1, 2 * 5 * 4, dtype=torch.float64).reshape(2, 5, 4)


def _student():
    ns: dict = {}
    exec(HAND, ns)
    return LocalStudent(ns)


def _trace(fn, *xs):
    blob = wire.Blob()
    ex = Executor()
    tensors, args, kwargs = _trace_inputs(ex.t, list(xs), {})
    data = capture_graph(fn, tensors, args, kwargs, lambda v: ex.encode(v, blob))
    return data, blob.bytes()


def test_honest_graph_replays_to_the_answer():
    def f(x):
        return torch.softmax(x @ x.transpose(-2, -1), -1) @ x

    data, blob = _trace(f, Q)
    graph = evidence.parse(data, blob)
    assert evidence.forbidden_ops(graph) == [] and evidence.count_ops(graph) >= 3
    fresh = evidence.fresh_like(Q)
    assert torch.allclose(evidence.replay(graph, [fresh]), f(fresh))


def test_tensors_made_inside_the_call_are_nodes_not_constants():
    """A factory's result (torch.ones, torch.arange) and a multi-result op's parts are graph nodes, so the graph
    holds no constant and the op count is the same at every T."""

    def f(x):
        T = x.shape[-2]
        w = torch.tril(torch.ones(T, T, dtype=x.dtype))
        first, rest = x.split([1, T - 1], dim=-2)
        return (w / w.sum(-1, keepdim=True)) @ torch.cat([first, rest], dim=-2) + torch.arange(x.shape[-1])

    counts = []
    for T in (4, 9):
        x = torch.linspace(-1, 1, 2 * T * 3, dtype=torch.float64).reshape(2, T, 3)
        graph = evidence.parse(*_trace(f, x))
        assert graph.constants == {}
        fresh = evidence.fresh_like(x)
        assert torch.allclose(evidence.replay(graph, [fresh]), f(fresh))
        counts.append(evidence.count_ops(graph))
    assert counts[0] == counts[1]


def test_a_log_space_normaliser_replays():
    """``torch.logaddexp`` (a running log-sum in an online softmax) is pure math: an answer using it replays."""

    def f(x):
        m = torch.logaddexp(x[..., :1, :], x[..., 1:2, :])
        return torch.exp(x - m)

    data, blob = _trace(f, Q)
    graph = evidence.parse(data, blob)
    fresh = evidence.fresh_like(Q)
    assert torch.allclose(evidence.replay(graph, [fresh]), f(fresh))


def test_the_mT_attribute_replays():
    """``k.mT`` (the last two dims swapped, a view) is as honest as ``k.transpose(-2, -1)``."""

    def f(x):
        return torch.softmax(x @ x.mT, -1) @ x

    data, blob = _trace(f, Q)
    graph = evidence.parse(data, blob)
    fresh = evidence.fresh_like(Q)
    assert torch.allclose(evidence.replay(graph, [fresh]), f(fresh))


def test_a_forbidden_op_is_found():
    def f(x):
        return torch.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True)

    data, blob = _trace(f, Q)
    assert evidence.forbidden_ops(evidence.parse(data, blob)) == ["aten.scaled_dot_product_attention.default"]


def test_recorded_calls_in_process():
    student = _student()
    honest = student.call("hand", Q, Q, Q, cast=torch.float32, record=True, full=True)["record"]
    assert honest["forbidden"] == [] and honest["n_ops"] >= 5
    fused = student.call("fused", Q, Q, Q, cast=torch.float32, record=True, full=True)["record"]
    assert fused["forbidden"] == ["aten.scaled_dot_product_attention.default"]


def _calls(*nodes, inputs=1, output=None):
    return {
        "inputs": inputs,
        "nodes": [{"op": "input", "index": i} for i in range(inputs)] + list(nodes),
        "output": output if output is not None else {"ref": inputs + len(nodes) - 1},
    }


def _aliases(x):
    """Honest code written with torch's aliases and rarer ops: each name below reaches the graph as it is."""
    T = x.shape[-2]
    s = torch.divide(torch.multiply(x, 0.5) @ x.swapdims(-2, -1), 2.0)  # divide, multiply, swapdims
    future = torch.zeros(T, T, dtype=torch.bool)
    future |= torch.ones(T, T).triu(1).bool()  # __ior__
    s = s.masked_fill(future, float("-inf"))
    w = torch.softmax(s, -1)
    out = torch.empty(x.shape, dtype=x.dtype)  # empty, then every element written
    out.copy_(torch.tensordot(w[0], x[0], dims=1).expand_as(x) * 0 + w @ x)  # tensordot
    rows = torch.linspace(0, T - 1, T).long()  # linspace
    out = out.index_copy(-2, rows, out.moveaxis(-1, -2).moveaxis(-1, -2))  # index_copy, moveaxis
    out = out + torch.isneginf(s).sum() * 0 + x[0].T.sum() * 0  # isneginf, numpy_T
    return out


def test_aliases_composites_and_rarer_pure_ops_are_replayed():
    data, blob = _trace(_aliases, Q)
    graph = evidence.parse(data, blob)
    targets = {n["target"].split(".")[1] for n in graph.calls()}
    assert {"divide", "multiply", "swapdims", "__ior__", "empty", "tensordot", "linspace", "index_copy"} <= targets
    assert {"moveaxis", "isneginf", "numpy_T"} <= targets
    fresh = evidence.fresh_like(Q)
    assert torch.allclose(evidence.replay(graph, [fresh]), _aliases(fresh))


def _idioms(x):
    """Honest code written with ops learners reach for that name no tensor math of their own (padding to whole
    blocks, an accumulator zeroed in place, a dtype picked with promote_types, blocks taken with unfold, ...)."""
    import torch.nn.functional as F

    T = x.shape[-2]
    wide = torch.promote_types(x.dtype, torch.float32)
    assert torch.can_cast(x.dtype, torch.float64)
    s = (x @ x.transpose(-2, -1)).to(wide)
    w = torch.softmax(F.pad(s, (0, 2), value=float("-inf")), -1)[..., :T]  # constant_pad_nd
    acc = x.new_empty(x.shape).zero_()  # zero_ on fresh memory
    acc += w.to(x.dtype) @ x
    blocks = F.pad(x, (0, 0, 0, T % 2)).unfold(-2, 2, 2)  # unfold: (..., T/2, C, 2)
    extra = torch.logcumsumexp(x, -2).sum() + blocks.sum() + torch.masked_select(x, x > 0).sum()
    extra = extra + torch.block_diag(x[0, :2, :2], x[0, :1, :1]).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.range is deprecated, but still torch
        steps = torch.range(1, T, dtype=x.dtype)
    return acc + extra * 0 + steps[:, None] * 0


def test_pure_ops_that_are_not_tensor_math_are_replayed():
    data, blob = _trace(_idioms, Q)
    graph = evidence.parse(data, blob)
    targets = {n["target"].split(".")[1] for n in graph.calls()}
    assert {
        "pad",
        "zero_",
        "unfold",
        "logcumsumexp",
        "masked_select",
        "block_diag",
        "range",
    } <= targets  # pad: constant_pad_nd
    assert {"promote_types", "can_cast"} <= targets
    fresh = evidence.fresh_like(Q)
    assert torch.allclose(evidence.replay(graph, [fresh]), _idioms(fresh))


def test_ops_whose_cost_no_bound_sees_are_refused_before_they_run():
    """An einsum with a scalar result can hide any amount of work, an exponent or a list of matrices multiplies
    without bound, and the smallest integer divided by -1 with rounding ends the judge with SIGFPE (a divisor that
    is -1 only on the judge's fresh inputs reaches only the judge): each is refused before it runs."""
    a = torch.ones(3000, 400)
    cases = {
        "einsum does more work": (
            {"op": "call", "target": "aten.einsum.default", "args": ["ai,bi->", {"list": [{"ref": 0}, {"ref": 0}]}]},
            [a],
        ),
        "does not replay": (
            {"op": "call", "target": "aten.matrix_power.default", "args": [{"ref": 0}, 1 << 40]},
            [Q[0]],
        ),
        "smallest integer": (
            {
                "op": "call",
                "target": "aten.div.Tensor_mode",
                "args": [{"ref": 0}, -1],
                "kwargs": {"rounding_mode": "trunc"},
            },
            [torch.tensor([torch.iinfo(torch.int64).min, 3])],
        ),
        # the same two passing by keyword what the guards read by position: no traced call does that
        "by keyword": (
            {
                "op": "call",
                "target": "aten.div.Tensor_mode",
                "args": [],
                "kwargs": {"self": {"ref": 0}, "other": -1, "rounding_mode": "trunc"},
            },
            [torch.tensor([torch.iinfo(torch.int64).min, 3])],
        ),
        "equation, tensors of aten.einsum.default by keyword": (
            {
                "op": "call",
                "target": "aten.einsum.default",
                "args": [],
                "kwargs": {"equation": "ai,bi->", "tensors": {"list": [{"ref": 0}, {"ref": 0}]}},
            },
            [a],
        ),
    }
    big = torch.ones(2048, 2048, dtype=torch.float16)
    cases |= {
        # linear is made of a matrix product: its work is bounded as the product's, half precision included
        "linear does more work": (
            {"op": "call", "target": "aten.linear.default", "args": [{"ref": 0}, {"ref": 0}]},
            [big],
        ),
        # every index size within the bound, but 4,096 operands contracted one after the other
        "einsum does more work than": (
            {
                "op": "call",
                "target": "aten.einsum.default",
                "args": [",".join(["ab"] * 4096) + "->", {"list": [{"ref": 0}] * 4096}],
            },
            [torch.ones(2048, 2048)],
        ),
        # a float16 einsum: the half-precision bound, as for a matrix product
        "einsum does more work than the": (
            {"op": "call", "target": "aten.einsum.default", "args": ["ij,jk->ik", {"list": [{"ref": 0}, {"ref": 0}]}]},
            [big],
        ),
    }
    for why, (node, inputs) in cases.items():
        data = _calls({"kwargs": {}, **node})
        with pytest.raises(evidence.Unverifiable, match=why):
            evidence.replay(evidence.parse(data, b""), inputs)
    small = {"op": "call", "target": "aten.einsum.default", "args": ["ij,jk->ik", {"list": [{"ref": 0}, {"ref": 0}]}]}
    assert torch.equal(
        evidence.replay(evidence.parse(_calls({"kwargs": {}, **small}), b""), [Q[0, :4]]), Q[0, :4] @ Q[0, :4]
    )


def test_scores_written_into_a_buffer_made_beforehand_count_at_the_buffer_size():
    """largest_joint: memory holding values made from both the queries and the keys, at its full size, also when
    it was allocated empty first and filled block by block (each write a small slice)."""

    def row_buffer(q, k):
        row = torch.zeros(q.shape[-2], k.shape[-2], dtype=q.dtype)  # made from nothing: depends on neither
        for j in range(0, k.shape[-2], 2):
            row[:, j : j + 2] = q @ k[j : j + 2].T  # (T_q, 2) slices of the whole row
        return torch.softmax(row, -1) @ k

    q, k = torch.randn(1, 4, dtype=torch.float64), torch.randn(8, 4, dtype=torch.float64)
    data, blob = _trace(row_buffer, q, k)
    made: list = []
    assert torch.allclose(evidence.replay(evidence.parse(data, blob), [q, k], sizes=made), row_buffer(q, k))
    assert evidence.measure(made)["largest_joint"] == 8
    made = []
    evidence.replay(evidence.parse(*_trace(lambda q, k: k * 2 + q.sum(), q, k)), [q, k], sizes=made)
    assert evidence.measure(made)["largest_joint"] == 32  # k * 2 + q.sum() is made from both, (8, 4)
    made = []
    evidence.replay(evidence.parse(*_trace(lambda q, k: (k * 2).sum() + q, q, k)), [q, k], sizes=made)
    assert evidence.measure(made)["largest_joint"] == 4  # the (8, 4) copy of the keys alone does not count


def test_peak_joint_counts_block_scores_kept_alive_together():
    """peak_joint: the memory made from both queries and keys that is alive at one time. One pass over key blocks
    (each block's scores dropped once used) keeps about one block's; scores kept for every block, to be read again,
    are alive together; the output, alive to the end, counts too."""

    def one_pass(q, k):
        out = torch.zeros(q.shape[-2], dtype=q.dtype)
        for j in range(0, k.shape[-2], 2):
            out = out + (q @ k[j : j + 2].T).exp().sum(-1)  # a (T_q, 2) block, gone after this line
        return out

    def kept(q, k):
        blocks = [q @ k[j : j + 2].T for j in range(0, k.shape[-2], 2)]  # every (T_q, 2) block alive at once
        top = torch.stack([b.amax(-1) for b in blocks]).amax(0)
        return sum((b - top[:, None]).exp().sum(-1) for b in blocks)

    q, k = torch.randn(3, 4, dtype=torch.float64), torch.randn(16, 4, dtype=torch.float64)
    peaks = {}
    for name, fn in (("one_pass", one_pass), ("kept", kept)):
        graph = evidence.parse(*_trace(fn, q, k))
        assert torch.allclose(evidence.replay(graph, [q, k], sizes=[]), fn(q, k))
        peaks[name] = graph.peak_joint
    block = 3 * 2
    assert peaks["one_pass"] <= 3 * block  # a block, its exp, the running output
    assert peaks["kept"] >= 8 * block  # eight blocks of scores


def test_an_op_made_of_ops_the_replay_does_not_run_is_refused():
    """fft_rfft is made of other ops (CompositeImplicitAutograd) but one of them, _fft_r2c, is not replayed."""
    data, blob = _trace(lambda x: torch.fft.rfft(x).abs(), Q)
    graph = evidence.parse(data, blob)
    assert "aten.fft_rfft.default" in {n["target"] for n in graph.calls()}
    with pytest.raises(evidence.Unverifiable, match="_fft_r2c"):
        evidence.replay(graph, [Q])
    for target in ("aten.__class__.__init__", "aten.__getattr__.default", "aten.bernoulli.default"):
        data = _calls({"op": "call", "target": target, "args": [{"ref": 0}], "kwargs": {}})
        with pytest.raises(evidence.Unverifiable, match="does not replay"):
            evidence.replay(evidence.parse(data, b""), [Q])


def test_an_op_off_the_allow_list_is_refused_without_running(monkeypatch):
    ran = []
    monkeypatch.setattr(torch.ops.aten, "from_file", lambda *a, **k: ran.append(a), raising=False)
    data = _calls({"op": "call", "target": "aten.from_file.default", "args": ["/etc/passwd"], "kwargs": {}})
    graph = evidence.parse(data, b"")
    with pytest.raises(evidence.Unverifiable, match="does not replay"):
        evidence.replay(graph, [Q])
    assert ran == []
    for target in ("builtins.eval", "aten.matmul.default; import os", "torch.ops.aten.matmul.default"):
        data = _calls({"op": "call", "target": target, "args": [{"ref": 0}, {"ref": 0}], "kwargs": {}})
        with pytest.raises(evidence.Unverifiable):
            evidence.replay(evidence.parse(data, b""), [Q])


def test_an_intermediate_beyond_the_element_bound_is_refused_before_it_is_made():
    data = _calls(
        {
            "op": "call",
            "target": "aten.expand.default",
            "args": [{"ref": 0}, {"list": [100000, 1000, 5, 4]}],
            "kwargs": {},
        },
        {"op": "call", "target": "aten.clone.default", "args": [{"ref": 1}], "kwargs": {}},
    )
    with pytest.raises(evidence.Unverifiable, match="elements"):
        evidence.replay(evidence.parse(data, b""), [Q[0]])


def test_malformed_graphs_are_refused():
    for data in (
        {"inputs": 1, "nodes": [{"op": "input", "index": 0}], "output": {"ref": 5}},
        {
            "inputs": 1,
            "nodes": [{"op": "call", "target": "aten.neg.default", "args": [{"ref": 0}], "kwargs": {}}],
            "output": {"ref": 0},
        },
        {"inputs": 1, "nodes": [{"op": "input", "index": 0}], "output": {"pickle": "x"}},
        {"error": "trace failed"},
        None,
    ):
        with pytest.raises(evidence.Unverifiable):
            evidence.parse(data, b"")


def test_a_constant_graph_fails_the_replay():
    """A graph whose output is a constant (the answer computed outside the trace) matches the answer on the
    judge's inputs, not on fresh ones."""
    answer = torch.softmax(Q @ Q.transpose(-2, -1), -1) @ Q
    blob = wire.Blob()
    const = wire.encode_array(answer.numpy(), "float64", "cpu", blob)
    data = {
        "inputs": 1,
        "nodes": [
            {"op": "input", "index": 0},
            {"op": "constant", "value": const},
            {"op": "call", "target": "aten.clone.default", "args": [{"ref": 1}], "kwargs": {}},
        ],
        "output": {"ref": 2},
    }
    reply = {"graph": data, "value": Out(answer, "float64", "cpu")}

    def fresh_call(fresh):
        x = fresh[0]
        return Out(torch.softmax(x @ x.transpose(-2, -1), -1) @ x, "float64", "cpu")

    record = evidence.verify(reply, blob.bytes(), [Q], torch.float64, fresh_call)
    assert record["n_ops"] is None and "other inputs" in record["forbidden"][0]


def test_a_graph_unrelated_to_the_answer_fails_the_replay():
    data = _calls({"op": "call", "target": "aten.mul.Tensor", "args": [{"ref": 0}, 2.0], "kwargs": {}})
    reply = {"graph": data, "value": Out(Q + 1, "float64", "cpu")}
    record = evidence.verify(reply, b"", [Q], torch.float64, lambda fresh: Out(fresh[0] + 1, "float64", "cpu"))
    assert record["n_ops"] is None and record["forbidden"][0].startswith("unverifiable: the graph of your call")


@pytest.mark.parametrize("asked", [torch.float32, torch.float64])
def test_a_wrong_bfloat16_answer_is_judged_at_the_asked_dtype(asked):
    """3% off, returned in bfloat16 to a float32/float64 check: bfloat16's tolerance (5%) would pass it."""
    expected = torch.linspace(1, 2, 12, dtype=torch.float64)
    got = Out((expected * 1.03).to(torch.bfloat16), "bfloat16", "cpu", asked=str(asked)[6:])
    with pytest.raises(CheckFailed):
        expect_close(got, expected, what="f(x)")
    with pytest.raises(CheckFailed):
        expect_close(Out(got.t, "bfloat16", "cpu"), expected, what="f(x)", dtype=asked)


def test_the_proxy_marks_the_asked_dtype():
    ns: dict = {}
    exec("import torch\ndef f(x):\n    return (x * 1.03).to(torch.bfloat16)\n", ns)
    got = LocalStudent(ns).call("f", torch.linspace(1, 2, 12, dtype=torch.float64), cast=torch.float32)
    assert got.asked == "float32" and got.dtype == "bfloat16"
    with pytest.raises(CheckFailed):
        expect_close(got, torch.linspace(1, 2, 12, dtype=torch.float64), what="f(x)")


def test_the_largest_tensor_and_the_work_are_measured_by_the_judge():
    """measure reports, from the judge's own replay, the largest tensor a graph creates (views and broadcasts
    allocate nothing and are not counted) and the elements all its calls create."""

    def full(q, k):
        return (torch.softmax(q @ k.transpose(-2, -1), -1) @ k).expand(3, 2, 8, 4)

    def blocks(q, k):
        return torch.cat(
            [torch.softmax(q @ k[:, s : s + 2].transpose(-2, -1), -1) @ k[:, s : s + 2] for s in range(0, 8, 2)], -1
        )

    q = torch.randn(2, 8, 4, dtype=torch.float64)
    sizes = {}
    for fn in (full, blocks):
        data, blob = _trace(fn, q, q)
        made: list = []
        evidence.replay(evidence.parse(data, blob), [q, q], sizes=made)
        sizes[fn.__name__] = evidence.measure(made)
    assert sizes["full"]["largest"] == 2 * 8 * 8  # the (2, 8, 8) scores; the (3, 2, 8, 4) broadcast is no tensor
    assert sizes["blocks"]["largest"] == 2 * 8 * 16  # the (2, 8, 16) concatenation; each block's scores: (2, 8, 2)
    assert "softmax" in sizes["full"]["ops"] or "_softmax" in sizes["full"]["ops"]
    assert sizes["full"]["elements"] > 0 and sizes["blocks"]["elements"] > 0


def test_the_multiplications_are_counted_however_the_queries_meet_the_keys():
    """measure's "products": a matrix product's multiply-adds and an elementwise product's elements, so scores made
    with ``@`` and with a broadcast ``*`` then ``sum`` count the same, and scores computed twice count twice."""

    def matmul(q, k):
        return q @ k.T

    def broadcast(q, k):
        return (q[:, None, :] * k[None, :, :]).sum(-1)

    def twice(q, k):
        return (q @ k.T).amax(-1, keepdim=True) + q @ k.T

    def einsum(q, k):
        return torch.einsum("qd,kd->qk", q, k)

    def linear(q, k):
        return torch.nn.functional.linear(q, k)

    def tensordot(q, k):  # made of other ops: its matrix product is counted inside it
        return torch.tensordot(q, k, dims=([1], [1]))

    q, k = torch.randn(3, 4, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)
    products = {}
    for fn in (matmul, broadcast, twice, einsum, linear, tensordot):
        made: list = []
        assert torch.allclose(evidence.replay(evidence.parse(*_trace(fn, q, k)), [q, k], sizes=made), fn(q, k))
        products[fn.__name__] = evidence.measure(made)["products"]
    assert products["twice"] == 2 * 3 * 5 * 4
    for name in ("matmul", "broadcast", "einsum", "linear", "tensordot"):
        assert products[name] == 3 * 5 * 4, (name, products[name])


CACHE = """
import torch

class Cache:
    def __init__(self):
        self.k = None

    def append(self, k):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=-2)
        return self.k

    def __len__(self):
        return 0 if self.k is None else self.k.shape[-2]

class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(3, 3)

    def forward(self, x, cache):
        keys = cache.append(self.proj(x))
        return torch.softmax(x @ keys.transpose(-2, -1), -1) @ keys
"""


def test_a_recorded_call_may_be_given_an_object_it_changes():
    """An object built by an earlier request (a cache) can be passed to a call; a recorded call is traced on a copy
    of it taken before the call, so the object changes once (as without the record) and the graph, whose
    constants hold the cache's earlier keys (kept with autograd history), replays to the answer."""
    ns: dict = {}
    exec(CACHE, ns)
    student = LocalStudent(ns)
    layer, cache = student.new("Layer", seed=0, module_dtype=torch.float64), student.new("Cache")
    x = torch.randn(1, 2, 3, dtype=torch.float64)
    layer(x, cast=torch.float64, cache=cache)  # two cached positions, computed with grad enabled
    state = layer.state()
    w, b = state["proj.weight"].t, state["proj.bias"].t

    def reference(new):  # the judge's own answer: the cached keys of x, then the new one
        keys = torch.cat([x @ w.T + b, new @ w.T + b], dim=-2)
        return torch.softmax(new @ keys.transpose(-2, -1), -1) @ keys

    reply = layer(x[:, :1], cast=torch.float64, cache=cache, record=reference, full=True)
    assert cache.method("__len__") == 3  # one append by the call, none by its trace (which ran on a copy)
    assert reply["record"]["forbidden"] == [] and reply["record"]["n_ops"] > 0


@pytest.mark.parametrize("bound", ["kernel", "meta"])
def test_neither_recorder_nor_replay_imports_the_compiler(bound):
    """The sandbox's recorder and the judge's replay keep torch._dynamo out (about 1.3 CPU s of every worker's
    start and of a learner's first ``check`` with a recorded call), with either bound on the replay's memory;
    the replay bounded by the kernel does not import sympy either (the meta kernels' torch._check does, about
    0.35 s), and both still replay what they may."""
    import subprocess
    import sys

    code = f"""
import sys, torch
from autograder.runtime import executor, recorder, wire, zygote
from autograder.sandbox import evidence
if {bound!r} == "meta":
    evidence._limit_holds = lambda: False
zygote.warm_up()
def f(x):
    return torch.softmax(x @ x.transpose(-2, -1) / 2.0, dim=-1) @ torch.nn.functional.linear(x, x[0])
x = torch.randn(2, 4, 3, dtype=torch.float64)
ex, blob = executor.Executor(), wire.Blob()
tensors, args, kwargs = recorder._trace_inputs(ex.t, [x], {{}})
data = recorder.capture_graph(f, tensors, args, kwargs, lambda v: ex.encode(v, blob))
g = evidence.parse(data, blob.bytes())
made = []
assert torch.allclose(evidence.replay(g, [x], sizes=made), f(x))
assert evidence.measure(made)["largest"] == 32
print("torch._dynamo" in sys.modules, "sympy" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    dynamo, sympy = out.stdout.split()
    assert dynamo == "False"
    if bound == "kernel" and sys.platform == "linux":
        assert sympy == "False"


@pytest.mark.skipif(sys.platform != "linux", reason="Linux enforces RLIMIT_DATA")
def test_the_kernel_bounds_the_replay_on_linux():
    """On Linux the replay's memory is bounded by the kernel (RLIMIT_DATA), not by a meta-device pass: the probe
    finds the limit enforced, and the limit is lifted again after a replay."""
    import resource

    before = resource.getrlimit(resource.RLIMIT_DATA)
    assert evidence._limit_holds()
    graph = evidence.parse(
        _calls({"op": "call", "target": "aten.neg.default", "args": [{"ref": 0}], "kwargs": {}}), b""
    )
    assert torch.equal(evidence.replay(graph, [Q]), -Q)
    assert resource.getrlimit(resource.RLIMIT_DATA) == before


@pytest.mark.skipif(sys.platform != "linux", reason="Linux enforces RLIMIT_DATA")
def test_a_judge_under_a_lower_hard_data_limit_replays_within_it():
    """A judge started under a hard RLIMIT_DATA below its data segment + the replay's budget (``ulimit -Hd``)
    still replays honest graphs, bounded by that hard limit, and refuses what would pass it."""
    import subprocess

    code = """
import resource, torch
from autograder.sandbox import evidence as e
hard = e._data_bytes() + (300 << 20)
resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))
x = torch.randn(2, 3, dtype=torch.float64)
def graph(*calls):
    nodes = [{"op": "input", "index": 0}] + list(calls)
    return e.parse({"inputs": 1, "nodes": nodes, "output": {"ref": len(nodes) - 1}}, b"")
neg = {"op": "call", "target": "aten.neg.default", "args": [{"ref": 0}], "kwargs": {}}
assert torch.equal(e.replay(graph(neg), [x]), -x)
big = {"op": "call", "target": "aten.new_zeros.default", "args": [{"ref": 0}, {"list": [16000, 16000]}], "kwargs": {}}
try:
    e.replay(graph(big), [x])
except e.Unverifiable as exc:
    print(exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "needs more memory than the autograder replays with" in out.stdout


@pytest.mark.parametrize("bound", ["kernel", "meta"])
def test_an_op_that_would_allocate_beyond_the_bound_is_refused_before_it_does(bound, monkeypatch):
    """A single op asked for a 2 GB tensor (past the replay's budget, and past ELEMENT_LIMIT): refused without
    the memory being taken, whichever bound holds (the kernel's, or the meta pass where no kernel enforces one)."""
    import resource

    if bound == "kernel" and not evidence._limit_holds():
        pytest.skip("this kernel does not enforce RLIMIT_DATA")
    if bound == "meta":
        monkeypatch.setattr(evidence, "_limit_holds", lambda: False)
    data = _calls(
        {"op": "call", "target": "aten.new_zeros.default", "args": [{"ref": 0}, {"list": [16000, 16000]}], "kwargs": {}}
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(evidence.Unverifiable, match="more memory than" if bound == "kernel" else "elements"):
        evidence.replay(evidence.parse(data, b""), [Q])
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 500_000  # kB: nothing near 2 GB touched


def test_only_the_work_the_answer_depends_on_is_counted():
    """Ops whose results nothing uses are not counted (padding cannot keep a loop's count flat or make a count
    grow), but writes into memory the answer reads are: a loop that fills a returned buffer in place keeps every
    step, also through a view whose op does not say it is one or after its memory moved, and so does an ``out=``
    result."""

    def dead_padding(x):
        for _ in range(50):
            torch.neg(x[..., :1, :1])
        return x * 2

    def fills_a_buffer(x):
        out = torch.zeros_like(x)
        for t in range(x.shape[-2]):
            out[..., t, :] = x[..., : t + 1, :].mean(-2)
        return out

    def out_argument(x):
        o = torch.empty_like(x)
        torch.mul(x, 2, out=o)
        return o

    def dead_in_place(x):
        junk = x[..., :1, :1].clone()
        junk.neg_()
        return x * 2

    def fills_through_an_unannotated_view(x):
        # aten._unsafe_view returns a view although its schema says new memory: the replay sees the storage
        out = torch.zeros_like(x)
        alias = torch.ops.aten._unsafe_view(out, list(out.shape))
        for t in range(x.shape[-2]):
            alias[..., t, :] = x[..., : t + 1, :].mean(-2)
        return out

    counts = {}

    def fills_moved_memory(x):
        # an out= resize reallocates the storage after the returned view was made: the same storage object
        flat = torch.zeros(x.numel(), dtype=x.dtype)
        out = flat.view(x.shape)
        torch.zeros(1, out=flat[x.numel() :])
        for t in range(x.shape[-2]):
            out[..., t, :] = x[..., : t + 1, :].mean(-2)
        return out

    for fn in (
        dead_padding,
        fills_a_buffer,
        out_argument,
        dead_in_place,
        fills_through_an_unannotated_view,
        fills_moved_memory,
    ):
        for T in (3, 6):
            x = torch.randn(2, T, 3, dtype=torch.float64)
            graph = evidence.parse(*_trace(fn, x))
            made: list = []
            assert torch.allclose(evidence.replay(graph, [x], sizes=made), fn(x))
            counts[fn.__name__, T] = (evidence.count_ops(graph), evidence.measure(made)["elements"])
            fresh = torch.randn_like(x)  # a later replay runs the live nodes alone: the same answer
            assert torch.allclose(evidence.replay(graph, [fresh]), fn(fresh))
    assert counts["dead_padding", 3] == counts["dead_in_place", 3] == (1, 2 * 3 * 3)  # x * 2 alone
    assert counts["fills_a_buffer", 6][0] > counts["fills_a_buffer", 3][0] > 3 * 3  # every step's ops
    assert counts["fills_through_an_unannotated_view", 6][0] > counts["fills_through_an_unannotated_view", 3][0] > 9
    assert counts["fills_moved_memory", 6][0] > counts["fills_moved_memory", 3][0] > 9
    assert counts["out_argument", 3][0] == 2  # empty_like and mul.out


def test_the_widest_softmax_is_measured_by_the_judge():
    """measure's "normalised": each softmax-family op with the most entries it normalised over at once, read from
    the replayed op's own arguments: a softmax of the whole row is as wide as the row, a log-sum-exp taken block by
    block as one block; a graph without either has none."""

    def whole_row(x):
        return torch.softmax(x, dim=-1)

    def blockwise_logsumexp(x):
        lse = torch.full_like(x[..., :1], float("-inf"))
        for s in range(0, x.shape[-1], 4):
            lse = torch.logaddexp(lse, torch.logsumexp(x[..., s : s + 4], dim=-1, keepdim=True))
        return torch.exp(x - lse)

    def every_dim(x):
        return torch.exp(x - torch.logsumexp(x, dim=(0, 1)))

    x = torch.randn(2, 24, dtype=torch.float64)
    widths = {}
    for fn in (whole_row, blockwise_logsumexp, every_dim, torch.exp):
        graph = evidence.parse(*_trace(fn, x))
        made: list = []
        assert torch.allclose(evidence.replay(graph, [x], sizes=made), fn(x))
        widths[fn.__name__] = evidence.measure(made)["normalised"]
    assert widths == {
        "whole_row": {"softmax": 24},
        "blockwise_logsumexp": {"logsumexp": 4},
        "every_dim": {"logsumexp": 48},
        "exp": {},
    }


def test_a_replay_after_the_first_runs_the_live_nodes_only(monkeypatch):
    """Work the answer does not need is replayed once: the first replay (with ``sizes``) finds the live nodes, and
    the replay on fresh inputs runs those alone, with the same answer."""

    def dead_padding(x):
        for _ in range(50):
            torch.neg(x[..., :1, :1])
        return x * 2

    ran: list = []
    real = evidence._ops

    def counting(graph, inputs):
        def counted(i, op):
            def run(*args, **kwargs):
                ran.append(i)
                return op(*args, **kwargs)

            return run

        return {i: counted(i, op) for i, op in real(graph, inputs).items()}

    monkeypatch.setattr(evidence, "_ops", counting)
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    graph = evidence.parse(*_trace(dead_padding, x))
    evidence.replay(graph, [x], sizes=[])
    assert len(ran) > 100  # the 50 slices and negations, then x * 2
    ran.clear()
    fresh = torch.randn_like(x)
    assert torch.equal(evidence.replay(graph, [fresh]), dead_padding(fresh))
    assert graph.live is not None and len(ran) == 1 and set(ran) <= graph.live  # x * 2 alone


def test_constants_that_share_the_blobs_bytes_are_refused():
    """Each constant is copied in the judge: records pointing at the same bytes (a forged graph) would multiply the
    blob in its memory, so the constants may claim no more bytes than the reply holds; one record is fine."""
    blob = wire.Blob()
    const = wire.encode_array(torch.ones(64, dtype=torch.float64).numpy(), "float64", "cpu", blob)

    def graph(copies):
        nodes = [{"op": "input", "index": 0}] + [{"op": "constant", "value": const} for _ in range(copies)]
        return {"inputs": 1, "nodes": nodes, "output": {"ref": len(nodes) - 1}}

    assert evidence.parse(graph(1), blob.bytes()).constants
    with pytest.raises(evidence.Unverifiable, match="claim more bytes"):
        evidence.parse(graph(2), blob.bytes())


def test_reply_arrays_that_share_the_blobs_bytes_are_refused():
    """The same for the arrays of a reply: a signed reply forged by learner code, N records on one blob, would
    otherwise be copied N times in the judge (2.9 GB for 40 records of 64 MB)."""
    from autograder.sandbox.errors import ProtocolViolation
    from autograder.sandbox.proxy import _decode_reply_value

    blob = wire.Blob()
    rec = wire.encode_array(torch.ones(8, dtype=torch.float64).numpy(), "float64", "cpu", blob)
    assert len(_decode_reply_value({"__tuple__": [rec]}, blob.bytes())) == 1
    with pytest.raises(ProtocolViolation, match="claim more bytes"):
        _decode_reply_value({"__tuple__": [rec, rec]}, blob.bytes())


def test_ops_whose_work_no_bound_sees_are_not_replayed():
    """A polynomial of degree n loops n times per element (pointwise by torch's tags, so not bounded by size), and
    a half-precision matrix product runs a couple of hundred times slower than float32's: the first is never
    replayed, the second only below a smaller bound of multiply-adds."""
    x = torch.rand(4, dtype=torch.float64)
    data, blob = _trace(lambda x: torch.special.laguerre_polynomial_l(x, 3.0), x)
    with pytest.raises(evidence.Unverifiable):
        evidence.replay(evidence.parse(data, blob), [x])
    a = torch.rand(8, 8)
    data, blob = _trace(lambda a: a @ a, a)
    graph = evidence.parse(data, blob)
    big = torch.rand(300, 300)  # 27 million multiply-adds: under the float32 bound, over the half one
    assert evidence.replay(graph, [big]).shape == (300, 300)
    with pytest.raises(evidence.Unverifiable, match="more work"):
        evidence.replay(graph, [big.half()])


def test_a_replay_past_its_cpu_time_after_its_last_op_is_not_evidence(monkeypatch):
    """The CPU deadline is checked after the last op too: one costly op placed at the end of a graph (where no
    next op would stop the replay) makes the graph unverifiable, as it would anywhere else."""
    node = {"op": "call", "target": "aten.mul.Tensor", "args": [{"ref": 0}, 2.0], "kwargs": {}}
    graph = evidence.parse(_calls(node), b"")
    clock = iter([0.0, 0.0, 0.0, evidence.REPLAY_CPU_S + 1])  # the deadline, the two nodes' checks, then the end
    monkeypatch.setattr(evidence.time, "thread_time", lambda: next(clock))
    with pytest.raises(evidence.Unverifiable, match="s of CPU to replay"):
        evidence.replay(graph, [torch.ones(3)])


def test_ops_that_return_a_tensor_per_piece_are_bounded_before_they_run():
    """unbind, split, chunk and tensor_split return one tensor per piece: views no element bound sees, each a few
    hundred bytes of the judge's memory. A forged unbind of 4M zeros held the judge for seconds per replay and left
    its process 1.5 GB larger; past PIECE_LIMIT pieces such an op is refused before it runs, directly or inside an
    op made of others (hsplit runs tensor_split). The blocks an honest graph splits a sequence into still replay."""
    n = evidence.PIECE_LIMIT + 1
    zeros = {"op": "call", "target": "aten.zeros.default", "args": [{"list": [n]}], "kwargs": {}}
    for target, extra in [
        ("aten.unbind.int", []),
        ("aten.split.Tensor", [1]),
        ("aten.unsafe_split.Tensor", [1]),
        ("aten.chunk.default", [n]),
        ("aten.tensor_split.sections", [n]),
        ("aten.hsplit.int", [n]),
    ]:
        node = {"op": "call", "target": target, "args": [{"ref": 1}, *extra], "kwargs": {}}
        data = _calls(zeros, node, output={"ref": 0})
        with pytest.raises(evidence.Unverifiable, match="makes more tensors"):
            evidence.replay(evidence.parse(data, b""), [torch.ones(3)])
    # tensor_split into more sections than there are elements makes empty ones: counted too
    empty = {"op": "call", "target": "aten.zeros.default", "args": [{"list": [0]}], "kwargs": {}}
    node = {"op": "call", "target": "aten.tensor_split.sections", "args": [{"ref": 1}, n], "kwargs": {}}
    with pytest.raises(evidence.Unverifiable, match="makes more tensors"):
        evidence.replay(evidence.parse(_calls(empty, node, output={"ref": 0}), b""), [torch.ones(3)])
    x = torch.rand(2, 256, 3)
    data, blob = _trace(lambda x: torch.cat([b * 2 for b in x.split(32, dim=-2)] + [x.unbind(1)[0][:, None]], 1), x)
    assert torch.equal(evidence.replay(evidence.parse(data, blob), [x]), torch.cat([x * 2, x[:, :1]], 1))
    # an op made of others (hsplit: one slice per section, each below any bound) stops at the replay's CPU deadline,
    # checked at each of its inner ops
    node = {"op": "call", "target": "aten.hsplit.int", "args": [{"ref": 1}, 64], "kwargs": {}}
    graph = evidence.parse(_calls({**zeros, "args": [{"list": [64]}]}, node, output={"ref": 0}), b"")
    assert evidence.replay(graph, [torch.ones(3)]).shape == (3,)
    clock = iter([0.0] * 4 + [evidence.REPLAY_CPU_S + 1] * 100)  # past the deadline from hsplit's first slice on
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evidence.time, "thread_time", lambda: next(clock))
        with pytest.raises(evidence.Unverifiable, match="s of CPU to replay"):
            evidence.replay(graph, [torch.ones(3)])


def test_whatever_a_graph_makes_the_judge_raise_is_unverifiable():
    """A graph naming an overload torch's Python lists but its dispatcher does not have (aten.acosh.int) made the
    judge's look-up raise RuntimeError: the recorded check failed with "could not check this", without forfeiting
    a stage written by hand. Whatever the judge's own code raises on a graph is "unverifiable"; a failure of the
    second, untraced call is the learner's process's, and still comes out of verify as it was."""
    from autograder.sandbox.errors import StudentFailure

    data = _calls({"op": "call", "target": "aten.acosh.int", "args": [2], "kwargs": {}}, output={"ref": 0})
    reply = {"graph": data, "value": Out(Q, "float64", "cpu")}
    record = evidence.verify(reply, b"", [Q], torch.float64, lambda fresh: Out(fresh[0], "float64", "cpu"))
    assert record["n_ops"] is None and record["forbidden"][0].startswith("unverifiable: the graph calls aten.acosh")

    def raising(*args, **kwargs):
        raise RuntimeError("the judge's own code failed")

    honest = {"graph": _calls(output={"ref": 0}), "value": Out(Q, "float64", "cpu")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evidence, "count_ops", raising)
        record = evidence.verify(honest, b"", [Q], torch.float64, lambda fresh: Out(fresh[0], "float64", "cpu"))
    assert record["n_ops"] is None and "cannot be checked (RuntimeError" in record["forbidden"][0]

    def crashed(fresh):
        raise StudentFailure("your code's process died")

    add = {"op": "call", "target": "aten.add.Tensor", "args": [{"ref": 0}, 1.0], "kwargs": {}}
    wrong = {"graph": _calls(add), "value": Out(Q + 1, "float64", "cpu")}  # no reference: a second call is made
    with pytest.raises(StudentFailure, match="process died"):
        evidence.verify(wrong, b"", [Q], torch.float64, crashed)
