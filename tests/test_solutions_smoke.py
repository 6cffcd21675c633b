"""Quick checks of the reference solutions and of the exercise generator.

The solutions must reproduce the numbers printed in the source notebooks, agree
with PyTorch's own attention, and the generated exercises must be up to date,
import cleanly and raise NotImplementedError everywhere a learner has work to do.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograder.course import load_course

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"

# stage file -> the public names the learner writes, from course.yml (the contract; see CURRICULUM.md)
STAGES = {s.file: list(s.functions) for s in load_course(ROOT / "course.yml").stages}

# "Your journey starts with one step", 3-d embeddings from the source notebooks
INPUTS = torch.tensor(
    [
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ]
)


def _load(path: Path, prefix: str):
    name = f"_smoke_{prefix}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_generate = _load(ROOT / "autograder" / "instructor" / "generate.py", "autograder")


def sol(stage: str):
    return _load(SOLUTIONS / stage, "solution")


def ex(stage: str):
    return _load(EXERCISES / stage, "exercise")


# ---------------------------------------------------------------- the solutions


def test_every_stage_defines_its_public_names():
    for stage, names in STAGES.items():
        module = sol(stage)
        missing = [n for n in names if not hasattr(module, n)]
        assert not missing, f"{stage} lacks {missing}"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_solution_imports_only_stdlib_torch_math(stage):
    tree = ast.parse((SOLUTIONS / stage).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{stage}: relative import"
            roots = [node.module.split(".")[0]]
        else:
            continue
        for root in roots:
            assert root in sys.stdlib_module_names or root == "torch", f"{stage} imports {root}"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_hand_written_stages_do_not_call_pytorch_attention(stage):
    tree = ast.parse((SOLUTIONS / stage).read_text())
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not used & {"scaled_dot_product_attention", "MultiheadAttention"}


def test_running_averages_agree_and_leave_input_alone():
    m1, m2, m3 = sol("01_loop_average.py"), sol("02_tril_average.py"), sol("03_softmax_average.py")
    x = torch.randn(3, 7, 5, dtype=torch.float64)
    before = x.clone()
    loop = m1.causal_mean_loop(x)
    assert loop.shape == x.shape and loop.dtype == x.dtype
    torch.testing.assert_close(loop[:, 0], x[:, 0])
    torch.testing.assert_close(loop[:, -1], x.mean(dim=1))
    torch.testing.assert_close(m2.causal_mean_matmul(x), loop)
    torch.testing.assert_close(m3.causal_mean_softmax(x), loop)
    assert torch.equal(x, before)
    # extra leading batch dims
    x4 = torch.randn(2, 3, 4, 5)
    torch.testing.assert_close(m2.causal_mean_matmul(x4), m1.causal_mean_loop(x4))


def test_weights_and_mask():
    m2, m3 = sol("02_tril_average.py"), sol("03_softmax_average.py")
    w = m2.causal_mean_weights(5, dtype=torch.float64)
    assert w.shape == (5, 5) and w.dtype == torch.float64
    torch.testing.assert_close(w.sum(-1), torch.ones(5, dtype=torch.float64))
    assert torch.all(w.triu(1) == 0)
    torch.testing.assert_close(w[3, :4], torch.full((4,), 0.25, dtype=torch.float64))
    mask = m3.causal_mask(4)
    assert mask.dtype == torch.bool
    assert torch.equal(mask, torch.tensor([[s <= t for s in range(4)] for t in range(4)]))
    soft = m3.masked_uniform_weights(5, dtype=torch.float64)
    assert not soft.isnan().any()
    torch.testing.assert_close(soft, w)


def _count_torch_ops(fn, *args):
    from torch.overrides import TorchFunctionMode

    class Counter(TorchFunctionMode):
        count = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Counter.count += 1
            return func(*args, **(kwargs or {}))

    with Counter():
        fn(*args)
    return Counter.count


def test_vectorised_averages_do_not_loop_over_time():
    m2, m3 = sol("02_tril_average.py"), sol("03_softmax_average.py")
    for fn in (m2.causal_mean_matmul, m3.causal_mean_softmax):
        small = _count_torch_ops(fn, torch.randn(2, 4, 3))
        large = _count_torch_ops(fn, torch.randn(5, 64, 3))
        assert small == large, f"{fn.__name__}: {small} ops for T=4 but {large} for T=64"


def test_softmaxes():
    m4 = sol("04_dot_product_attention.py")
    x = torch.randn(4, 6, dtype=torch.float64)
    for fn in (m4.softmax_naive, m4.softmax_stable):
        torch.testing.assert_close(fn(x), torch.softmax(x, dim=-1))
        torch.testing.assert_close(fn(x, dim=0), torch.softmax(x, dim=0))
    big = torch.tensor([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]])
    out = m4.softmax_stable(big)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, torch.softmax(big, dim=-1))


def test_context_vectors_match_the_notebook_table():
    m4 = sol("04_dot_product_attention.py")
    ctx = m4.context_vectors(INPUTS)
    torch.testing.assert_close(ctx[1], torch.tensor([0.4419, 0.6515, 0.5683]), atol=1e-4, rtol=0)
    weights = m4.attention_weights(m4.attention_scores(INPUTS))
    torch.testing.assert_close(weights.sum(-1), torch.ones(6))
    # batched input gives the same rows
    torch.testing.assert_close(m4.context_vectors(INPUTS.expand(2, 6, 3))[1], ctx)


def test_scaled_scores_variance():
    m5 = sol("05_variance_scaling.py")
    torch.manual_seed(0)
    q, k = torch.randn(2, 5, 8), torch.randn(2, 7, 8)
    torch.testing.assert_close(m5.scaled_scores(q, k), q @ k.transpose(-2, -1) / math.sqrt(8))
    for d_k in (4, 64, 256):
        q, k = torch.randn(4000, d_k), torch.randn(4000, d_k)
        raw = (q * k).sum(-1)
        scaled = m5.scaled_scores(q[:, None], k[:, None]).flatten()  # (N, 1, 1): one score per pair
        assert abs(raw.var().item() / d_k - 1) < 0.15
        assert abs(scaled.var().item() - 1) < 0.15


def test_self_attention_params_matches_the_notebook_table():
    m6 = sol("06_self_attention.py")
    torch.manual_seed(123)
    sa = m6.SelfAttentionParams(3, 2)
    out = sa(INPUTS)
    assert out.shape == (6, 2)
    torch.testing.assert_close(out[1], torch.tensor([0.3061, 0.8210]), atol=1e-4, rtol=0)
    out.sum().backward()
    for name in ("W_query", "W_key", "W_value"):
        assert getattr(sa, name).grad is not None, f"no gradient reaches {name}"


def test_self_attention_linear_matches_reference():
    m6 = sol("06_self_attention.py")
    sa = m6.SelfAttentionLinear(4, 3, qkv_bias=True)
    x = torch.randn(2, 5, 4)
    q, k, v = sa.W_query(x), sa.W_key(x), sa.W_value(x)
    expected = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(3), dim=-1) @ v
    torch.testing.assert_close(sa(x), expected)
    assert isinstance(sa.W_query, nn.Linear) and sa.W_query.bias is not None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("lead", [(2,), (2, 3)])
@pytest.mark.parametrize("t_q,t_k", [(6, 6), (4, 6), (6, 4)])
def test_causal_attention_matches_sdpa(dtype, lead, t_q, t_k):
    m7 = sol("07_causal_attention.py")
    q = torch.randn(*lead, t_q, 8, dtype=dtype)
    k = torch.randn(*lead, t_k, 8, dtype=dtype)
    v = torch.randn(*lead, t_k, 5, dtype=dtype)
    got = m7.causal_attention(q, k, v)
    assert got.dtype == dtype
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, is_causal=True))


def test_causal_self_attention_module():
    m7 = sol("07_causal_attention.py")
    torch.manual_seed(1)
    csa = m7.CausalSelfAttention(4, 6, context_length=10).eval()
    assert "mask" in dict(csa.named_buffers())
    assert isinstance(csa.dropout, nn.Dropout)
    x = torch.randn(2, 7, 4)  # T shorter than context_length
    out = csa(x)
    assert out.shape == (2, 7, 6)
    q, k, v = csa.W_query(x), csa.W_key(x), csa.W_value(x)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    x2 = x.clone()
    x2[:, 4] += 1.0  # change a later step: earlier outputs must not move
    torch.testing.assert_close(csa(x2)[:, :4], out[:, :4])
    csa64 = csa.to(torch.float64)
    assert csa64.mask.dtype == torch.bool
    assert csa64(x.double()).dtype == torch.float64


def test_split_merge_round_trip():
    m8 = sol("08_multi_head_attention.py")
    x = torch.randn(2, 5, 12)
    heads = m8.split_heads(x, 4)
    assert heads.shape == (2, 4, 5, 3)
    torch.testing.assert_close(heads[:, 1], x[..., 3:6])
    torch.testing.assert_close(m8.merge_heads(heads), x)


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_multi_head_matches_torch_multihead_attention(qkv_bias):
    m8 = sol("08_multi_head_attention.py")
    torch.manual_seed(2)
    d, nh, T = 12, 3, 7
    mha = m8.MultiHeadAttention(d, d, nh, context_length=9, qkv_bias=qkv_bias).eval()
    ref = nn.MultiheadAttention(d, nh, bias=True, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if qkv_bias:
            ref.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        else:
            ref.in_proj_bias.zero_()
        ref.out_proj.weight.copy_(mha.out_proj.weight)
        ref.out_proj.bias.copy_(mha.out_proj.bias)
    x = torch.randn(2, T, d)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # True = not allowed
    expected, _ = ref(x, x, x, attn_mask=future, need_weights=False)
    torch.testing.assert_close(mha(x), expected)


def test_multi_head_each_head_is_causal_attention_on_its_slice():
    m7, m8 = sol("07_causal_attention.py"), sol("08_multi_head_attention.py")
    mha = m8.MultiHeadAttention(5, 8, 2, context_length=6).eval()
    x = torch.randn(3, 6, 5)
    q, k, v = mha.W_query(x), mha.W_key(x), mha.W_value(x)
    per_head = [m7.causal_attention(q[..., s], k[..., s], v[..., s]) for s in (slice(0, 4), slice(4, 8))]
    torch.testing.assert_close(mha(x), mha.out_proj(torch.cat(per_head, dim=-1)))


def test_multi_head_rejects_indivisible_width():
    m8 = sol("08_multi_head_attention.py")
    with pytest.raises(ValueError, match="divisible"):
        m8.MultiHeadAttention(8, 10, 4, context_length=5)


def test_key_padding_mask():
    m9 = sol("09_padding_and_cross_attention.py")
    mask = m9.key_padding_mask(torch.tensor([3, 0, 5]), 5)
    assert mask.dtype == torch.bool
    assert mask.tolist() == [[True] * 3 + [False] * 2, [False] * 5, [True] * 5]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("t_q,t_k", [(6, 6), (4, 6), (7, 5)])
def test_masked_attention_matches_sdpa_and_gives_zeros_without_a_key(causal, t_q, t_k):
    m9 = sol("09_padding_and_cross_attention.py")
    q, k, v = torch.randn(3, t_q, 8), torch.randn(3, t_k, 8), torch.randn(3, t_k, 5)
    mask = m9.key_padding_mask(torch.tensor([t_k, 2, 0]), t_k)
    got = m9.masked_attention(q, k, v, key_padding_mask=mask, causal=causal)
    pairs = torch.ones(t_q, t_k, dtype=torch.bool).tril() if causal else torch.ones(t_q, t_k, dtype=torch.bool)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=pairs & mask[:, None, :])
    torch.testing.assert_close(got[:2], expected[:2])  # sequence 2 has no real key: SDPA gives NaN there
    assert torch.equal(got[2], torch.zeros(t_q, 5))
    k2, v2 = k.clone(), v.clone()
    k2[~mask], v2[~mask] = 1e3, -1e3  # padded keys never count
    torch.testing.assert_close(m9.masked_attention(q, k2, v2, key_padding_mask=mask, causal=causal), got)


@pytest.mark.parametrize("d_kv", [6, 3])
def test_cross_attention_matches_torch_multihead_attention(d_kv):
    m9 = sol("09_padding_and_cross_attention.py")
    torch.manual_seed(3)
    ca = m9.CrossAttention(6, d_kv, 6, 3, qkv_bias=True).eval()
    ref = nn.MultiheadAttention(6, 3, kdim=d_kv, vdim=d_kv, batch_first=True).eval()
    with torch.no_grad():
        if ref.in_proj_weight is not None:
            ref.in_proj_weight.copy_(torch.cat([ca.W_query.weight, ca.W_key.weight, ca.W_value.weight]))
        else:
            ref.q_proj_weight.copy_(ca.W_query.weight)
            ref.k_proj_weight.copy_(ca.W_key.weight)
            ref.v_proj_weight.copy_(ca.W_value.weight)
        ref.in_proj_bias.copy_(torch.cat([ca.W_query.bias, ca.W_key.bias, ca.W_value.bias]))
        ref.out_proj.weight.copy_(ca.out_proj.weight)
        ref.out_proj.bias.copy_(ca.out_proj.bias)
    x, context = torch.randn(2, 4, 6), torch.randn(2, 7, d_kv)
    mask = m9.key_padding_mask(torch.tensor([7, 3]), 7)
    expected, _ = ref(x, context, context, key_padding_mask=~mask, need_weights=False)  # its True = ignore
    torch.testing.assert_close(ca(x, context, mask), expected)
    empty = ca(x, context, m9.key_padding_mask(torch.tensor([7, 0]), 7))
    torch.testing.assert_close(empty[1], ca.out_proj.bias.expand(4, 6))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("t_q,t_k,block", [(7, 7, 3), (4, 9, 2), (9, 4, 4), (5, 5, 8), (1, 1, 1)])
def test_blockwise_attention_matches_sdpa(causal, t_q, t_k, block):
    m10 = sol("10_blockwise_attention.py")
    q, k = torch.randn(2, 3, t_q, 4, dtype=torch.float64), torch.randn(2, 3, t_k, 4, dtype=torch.float64)
    v = torch.randn(2, 3, t_k, 5, dtype=torch.float64)
    torch.testing.assert_close(
        m10.blockwise_attention(q, k, v, block, causal), F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    )


def test_online_softmax_matches_softmax_and_is_stable():
    m10 = sol("10_blockwise_attention.py")
    x = torch.randn(3, 11, dtype=torch.float64)
    for block in (1, 3, 11, 16):
        torch.testing.assert_close(m10.online_softmax(x, block), torch.softmax(x, dim=-1))
    big = torch.tensor([[0.0, -1e4, 1e4, 1e4], [-1e4, -1e4, 0.0, -1e4]])
    torch.testing.assert_close(m10.online_softmax(big, 2), torch.softmax(big, dim=-1))


def test_kv_cache_decoding_equals_the_full_forward():
    m11 = sol("11_kv_cache.py")
    torch.manual_seed(3)
    mha = m11.CachedMultiHeadAttention(5, 6, 3, context_length=9, qkv_bias=True)
    x = torch.randn(2, 9, 5)
    full = mha(x)
    cache = m11.KVCache(9)
    steps = [mha(x[:, s:e], cache=cache) for s, e in ((0, 4), (4, 5), (5, 7), (7, 8), (8, 9))]
    torch.testing.assert_close(torch.cat(steps, dim=1), full)
    assert len(cache) == 9
    keys, _ = cache.append(torch.zeros(2, 3, 0, 2), torch.zeros(2, 3, 0, 2))
    torch.testing.assert_close(keys, mha.W_key(x).view(2, 9, 3, 2).transpose(1, 2))
    with pytest.raises(ValueError):
        cache.append(torch.zeros(2, 3, 1, 2), torch.zeros(2, 3, 1, 2))
    cache.reset()
    assert len(cache) == 0
    torch.testing.assert_close(mha(x[:, :3], cache=cache), full[:, :3])


# ---------------------------------------------------------------- the generator

# one call per public name; each must raise NotImplementedError on the stub
CALLS = {
    "causal_mean_loop": lambda m: m.causal_mean_loop(torch.randn(2, 3, 4)),
    "causal_mean_weights": lambda m: m.causal_mean_weights(4),
    "causal_mean_matmul": lambda m: m.causal_mean_matmul(torch.randn(2, 3, 4)),
    "causal_mask": lambda m: m.causal_mask(4),
    "masked_uniform_weights": lambda m: m.masked_uniform_weights(4),
    "causal_mean_softmax": lambda m: m.causal_mean_softmax(torch.randn(2, 3, 4)),
    "softmax_naive": lambda m: m.softmax_naive(torch.randn(3, 4)),
    "softmax_stable": lambda m: m.softmax_stable(torch.randn(3, 4)),
    "attention_scores": lambda m: m.attention_scores(INPUTS),
    "attention_weights": lambda m: m.attention_weights(torch.randn(6, 6)),
    "context_vectors": lambda m: m.context_vectors(INPUTS),
    "scaled_scores": lambda m: m.scaled_scores(torch.randn(2, 3, 4), torch.randn(2, 3, 4)),
    "SelfAttentionParams": lambda m: m.SelfAttentionParams(3, 2)(INPUTS),
    "SelfAttentionLinear": lambda m: m.SelfAttentionLinear(3, 2)(INPUTS),
    "causal_attention": lambda m: m.causal_attention(*torch.randn(3, 2, 5, 4)),
    "CausalSelfAttention": lambda m: m.CausalSelfAttention(3, 2, 6)(INPUTS[None]),
    "split_heads": lambda m: m.split_heads(torch.randn(2, 3, 8), 2),
    "merge_heads": lambda m: m.merge_heads(torch.randn(2, 2, 3, 4)),
    "MultiHeadAttention": lambda m: m.MultiHeadAttention(3, 4, 2, 6)(INPUTS[None]),
    "key_padding_mask": lambda m: m.key_padding_mask(torch.tensor([2, 3]), 4),
    "masked_attention": lambda m: m.masked_attention(*torch.randn(3, 2, 5, 4)),
    "CrossAttention": lambda m: m.CrossAttention(3, 5, 4, 2)(INPUTS[None], torch.randn(1, 7, 5)),
    "online_softmax": lambda m: m.online_softmax(torch.randn(2, 7), 3),
    "blockwise_attention": lambda m: m.blockwise_attention(*torch.randn(3, 2, 5, 4), 2),
    "KVCache": lambda m: m.KVCache(4).append(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)),
    "CachedMultiHeadAttention": lambda m: m.CachedMultiHeadAttention(3, 4, 2, 6)(INPUTS[None]),
}


def test_exercises_are_not_stale():
    stale = _generate.stale_exercises(ROOT)
    assert not stale, f"run `python -m autograder.instructor.generate`; stale: {stale}"
    assert sorted(p.name for p in EXERCISES.glob("*.py")) == sorted(STAGES)


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_stub_raises_not_implemented(stage):
    module = ex(stage)  # imports cleanly
    solution = sol(stage)
    for name in STAGES[stage]:
        CALLS[name](solution)  # the call itself is valid on the reference
        with pytest.raises(NotImplementedError, match="Implement"):
            CALLS[name](module)


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_no_solution_code_leaks_into_exercises(stage):
    source = (SOLUTIONS / stage).read_text()
    exercise = (EXERCISES / stage).read_text()
    exercise_lines = {line.strip() for line in exercise.splitlines()}
    regions = _generate.solution_regions(source)
    assert len(regions) == source.count("### BEGIN SOLUTION")
    for region in regions:
        for line in region.splitlines():
            line = line.strip()
            if len(line) > 12 and not line.startswith("#"):
                assert line not in exercise_lines, f"{stage}: solution line leaked: {line}"
    assert exercise.startswith("# Generated from solutions/" + stage)
    assert "### BEGIN SOLUTION" not in exercise and "### END SOLUTION" not in exercise


GOOD = '''\
def f(x):
    """Double x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION


class C:
    def __init__(self):
        ### BEGIN SOLUTION  # stub: store seven in self.n
        self.n = 7
        ### END SOLUTION
'''


def test_strip_solution_output():
    stub = _generate.strip_solution(GOOD, "good.py")
    assert "return 2 * x" not in stub and "self.n = 7" not in stub
    assert '    # TODO: Implement f: Double x\n    raise NotImplementedError("Implement f: Double x")' in stub
    assert 'raise NotImplementedError("Implement C.__init__: store seven in self.n")' in stub
    namespace: dict = {}
    exec(compile(stub, "good.py", "exec"), namespace)
    with pytest.raises(NotImplementedError):
        namespace["f"](1)
    with pytest.raises(NotImplementedError):
        namespace["C"]()
    assert _generate.solution_regions(GOOD) == ["return 2 * x\n", "self.n = 7\n"]


@pytest.mark.parametrize(
    "bad,line,fragment",
    [
        (GOOD.replace("    ### END SOLUTION\n\n\nclass", "\n\nclass", 1), 9, "nest"),
        (GOOD.replace("    ### BEGIN SOLUTION\n", "", 1), 4, "without a matching"),
        (GOOD.rsplit("        ### END SOLUTION", 1)[0], 10, "never closed"),
        (GOOD.replace("### END SOLUTION", "## END SOLUTION", 1), 5, "malformed"),
        (GOOD.replace("    ### END SOLUTION\n", "### END SOLUTION\n", 1), 5, "indented differently"),
        (GOOD.replace("    return 2 * x\n", "    return 2 * x  ### END SOLUTION\n", 1), 4, "same line"),
    ],
)
def test_strip_solution_rejects_bad_markers(bad, line, fragment):
    with pytest.raises(ValueError, match=fragment) as err:
        _generate.strip_solution(bad, "bad.py")
    assert f"bad.py:{line}:" in str(err.value)


def test_generator_does_not_import_torch():
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('gen', {str(ROOT / 'autograder' / 'instructor' / 'generate.py')!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        f"m.render_exercises(__import__('pathlib').Path({str(ROOT)!r}))\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
