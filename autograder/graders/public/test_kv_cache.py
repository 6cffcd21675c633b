"""Stage 11, public checks: the key/value cache and decoding with it.

Expected values: the full causal forward of stage 8 (the oracle's reference, float64, CPU), whose rows decoding with
a cache must reproduce. The size of the tensors a decoding step creates and the number of its operations are read
from the judge's record of the recorded step: the graph it was traced into, replayed by the judge
(autograder/sandbox/evidence.py); the cache's contents are read through its own ``append``. Fixed inputs only.
"""

import torch

from autograder import oracle
from autograder.checks import (
    CheckFailed,
    as_tensor,
    check,
    diagnose,
    expect_close,
    expect_kept,
    expect_meta,
    expect_precise,
    expect_shape,
    fail,
    tolerance,
)
from autograder.graders import attention as a
from autograder.graders import blockwise as b
from autograder.graders.attention import biased, expect_close_by_hand, explained, linear_weights, mha_layers, new_module
from autograder.graders.inputs import fixed
from autograder.sandbox.errors import MissingName, StudentCodeError, SubmissionLoadError, raised_a
from autograder.sandbox.values import Out

STAGE = "kv_cache"
F64 = torch.float64
D_IN, D_OUT, NH, L = 4, 6, 2, 8
HINT = (
    "Create self.W_query, self.W_key, self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias), "
    "self.out_proj = nn.Linear(d_out, d_out) and the mask buffer, as in stage 8"
)
X = fixed(2, L, D_IN, seed=301, low=-2, high=2)  # (B, T = context_length, d_in)
# two appends of 2 positions each, (B, nh, T, hs): hs differs between keys and values
K1, V1 = fixed(2, NH, 2, 3, seed=310), fixed(2, NH, 2, 4, seed=311)
K2, V2 = fixed(2, NH, 2, 3, seed=312), fixed(2, NH, 2, 4, seed=313)


layers = mha_layers


def module(
    student,
    *,
    d_in=D_IN,
    d_out=D_OUT,
    nh=NH,
    L=L,
    bias=False,
    wseed=302,
    dtype=F64,
    weights=None,
    hint=HINT,
    bias_values=False,
):
    """CachedMultiHeadAttention(d_in, d_out, nh, L) holding ``weights`` (default: fixed ones from ``wseed``, zero
    biases unless ``bias_values``, see :func:`linear_weights`); returns (handle, weights)."""
    w = (
        weights
        if weights is not None
        else linear_weights(layers(d_in, d_out), bias=biased(bias), seed=wseed, bias_values=bias_values)
    )
    handle = new_module(
        student,
        "CachedMultiHeadAttention",
        d_in,
        d_out,
        nh,
        L,
        qkv_bias=bias,
        weights=w,
        what=f"CachedMultiHeadAttention({d_in}, {d_out}, n_heads={nh}, context_length={L}, qkv_bias={bias})",
        hint=hint,
        dtype=dtype,
    )
    return handle, handle.held


def pair(got, what):
    """``append``'s answer: a (keys, values) pair of tensors."""
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        if isinstance(got, Out):  # one tensor: unpacking it would split its first (batch) dim, silently
            found = f"one tensor of shape {got.shape}"
        elif isinstance(got, (tuple, list)):
            found = f"{type(got).__name__} of {len(got)} values"
        else:
            found = type(got).__name__
        fail(f"{what}: expected a pair (keys, values), got {found}: return the keys and the values so far, both")
    return as_tensor(got[0], what + " keys"), as_tensor(got[1], what + " values")


def length(student, cache, what):
    with explained(student, what):
        n = cache.method("__len__")
    if type(n) is not int:
        fail(f"{what}: len(cache) should be an int, got {n!r}")
    return n


def decode(student, handle, x, chunks, cache, what, d_out=D_OUT, cast=F64, reference=None):
    """Feed ``x`` chunk by chunk through ``handle`` with ``cache``; the outputs, concatenated along time. A step
    after the first that fails (an error, a wrong shape) is explained by the cache when the learner's KVCache,
    probed on its own, concatenates along the wrong dim; otherwise, with ``reference`` (the expected outputs and
    their known mistakes), by the steps before it when they were already wrong (the first wrong output is what
    the learner needs to see, not the crash it led to)."""
    steps: list = []
    for n_new in chunks:
        done = sum(s.shape[-2] for s in steps)
        step = f"{what}: step with x[:, {done}:{done + n_new}]"
        try:
            with explained(student, step):
                got = handle(x[:, done : done + n_new], cast=cast, cache=cache)
            steps.append(expect_shape(got, (x.shape[0], n_new, d_out), step).t)
        except (StudentCodeError, CheckFailed) as exc:
            if not steps or isinstance(exc, (MissingName, SubmissionLoadError)):
                raise
            if reference is not None:
                expected, mistakes = reference
                expect_close(
                    torch.cat(steps, dim=-2),
                    expected[..., :done, :],
                    what=f"{what}: the steps before x[:, {done}:] (compared with the full causal forward)",
                    dtype=cast,
                    mistakes={name: out[..., :done, :] for name, out in (mistakes or {}).items()},
                )
            if getattr(exc, "mistake", None):
                raise
            mistake = cache_mistake(student)
            if mistake != b.WRONG_CACHE_DIM:
                raise
            said = str(exc) if isinstance(exc, CheckFailed) else f"{step}: {exc}"
            fail(
                f"{said}\n  the cached keys and values returned by append are (B, nh, T, hs), and "
                "time is dim -2: KVCache(...).append on its own gives keys of the wrong shape after two appends"
                f"\n  this looks like a known mistake: {mistake}",
                mistake,
            )
    return torch.cat(steps, dim=-2)


def cache_mistake(student) -> str | None:
    """The known mistake the learner's KVCache shows when two appends are probed on their own (the inputs of
    test_cache), or None: named only when its answer is the variant's and the variant's is not the right one."""
    try:
        cache = student.new("KVCache", 6)
        cache.method("append", K1, V1, cast=F64)
        keys, _ = pair(cache.method("append", K2, V2, cast=F64), "append")
    except Exception:  # noqa: BLE001 - a cache that cannot be probed explains nothing
        return None
    return diagnose(
        keys.t,
        oracle.mistakes("kv_cache_keys", K1, K2),
        *tolerance(F64),
        expected=oracle.expected("kv_cache_keys", K1, K2),
    )


# ───────────────────────────── KVCache ─────────────────────────────


@check(
    "KVCache: append returns every key and value so far (time is dim -2), len() counts them, reset() empties it",
    weight=2,
)
def test_cache(student):
    k1, v1, k2, v2 = K1, V1, K2, V2
    cache = student.new("KVCache", 6)
    with explained(student, "KVCache(6).append(k, v)"):
        keys, values = pair(cache.method("append", k1, v1, cast=F64), "KVCache(6).append(k (2, 2, 2, 3), v)")
    expect_close(keys, k1, what="the keys returned by the first append (the new keys themselves)")
    expect_close(values, v1, what="the values returned by the first append")
    if (n := length(student, cache, "len(cache) after one append")) != 2:
        fail(f"len(cache) is {n} after appending 2 positions, expected 2")
    what = "the second append(k, v) of 2 more positions"
    with explained(student, what):
        keys, values = pair(cache.method("append", k2, v2, cast=F64), what)
    expect_close(
        keys,
        oracle.expected("kv_cache_keys", k1, k2),
        what=what + ": keys (both appends, along time)",
        mistakes=oracle.mistakes("kv_cache_keys", k1, k2),
    )
    expect_close(
        values,
        oracle.expected("kv_cache_values", v1, v2),
        what=what + ": values (both appends)",
        mistakes=oracle.mistakes("kv_cache_values", v1, v2),
    )
    if (n := length(student, cache, "len(cache) after two appends")) != 4:
        fail(f"len(cache) is {n} after appending 2 + 2 positions, expected 4")
    with explained(student, "cache.reset()"):
        cache.method("reset")
    if (n := length(student, cache, "len(cache) after reset()")) != 0:
        fail(f"len(cache) is {n} after reset(), expected 0", b.RESET_KEEPS)
    with explained(student, "append(k, v) after reset()"):
        keys, _ = pair(cache.method("append", k2, v2, cast=F64), "append(k, v) after reset()")
    if keys.shape != tuple(k2.shape):
        fail(
            f"append(k, v) after reset() returned keys of shape {keys.shape}, expected {tuple(k2.shape)}: reset() "
            "must forget every cached position",
            b.RESET_KEEPS,
        )
    expect_close(keys, k2, what="append(k, v) after reset(): keys (only the new ones)")


@check("KVCache: ValueError past max_len (filling it exactly is allowed), and nothing added then", construction=True)
def test_overflow(student):
    k, v = fixed(1, NH, 3, 3, seed=320), fixed(1, NH, 3, 3, seed=321)
    # a full cache given one more position, and a half-full one given more positions than are left
    for held, extra in (((3, 1), 1), ((2,), 3)):
        cache = student.new("KVCache", 4)
        what = f"KVCache(4) holding {sum(held)} positions"
        with explained(student, f"KVCache(4): appending {' then '.join(map(str, held))} positions"):
            try:
                for n in held:
                    cache.method("append", k[..., :n, :], v[..., :n, :], cast=F64)
            except StudentCodeError as exc:
                if raised_a(exc.error, "ValueError") and not isinstance(exc, MissingName):
                    fail(
                        f"KVCache(4) raised ValueError while being filled to {sum(held)} positions, which fit: raise "
                        "only when len(cache) + T_new would exceed max_len (> max_len, not >=: a cache may be full)"
                    )
                raise
            before = cache.method("__len__")
        # a wrong len() is its own mistake (test_cache names it); an overflow test written with it fails here too
        blame = b.NO_OVERFLOW_CHECK if before == sum(held) else None
        why_len = (
            ""
            if blame
            else f" (len(cache) says {before}, not {sum(held)}: an overflow test that reads len() needs a right "
            "__len__ first)"
        )
        try:
            cache.method("append", k[..., :extra, :], v[..., :extra, :], cast=F64)
        except MissingName:
            raise
        except StudentCodeError as exc:
            if not raised_a(exc.error, "ValueError"):
                fail(
                    f"{what}: append({extra} more) raised {exc.error.get('type')}, expected a ValueError that says "
                    "the cache is full" + why_len,
                    blame,
                )
            with explained(student, "len(cache) after the refused append"):
                after = cache.method("__len__")
            if after != before:  # compared with len() before, so that a wrong __len__ loses points in its own check
                fail(
                    f"{what} raised ValueError for {extra} more but len(cache) went from {before} to {after}: "
                    "check whether the new positions fit before adding them (the docstring: nothing is added then)"
                )
            continue
        fail(
            f"{what} accepted {extra} more: raise ValueError in append when len(cache) + T_new would exceed max_len "
            "(a model must not silently attend past the length it was built for)" + why_len,
            blame,
        )


# ───────────────────────────── CachedMultiHeadAttention ─────────────────────────────


def roomy_cache(student, positions: int = L):
    """A KVCache for decoding ``positions`` positions, with room for one more: a cache that refuses to be filled
    exactly (an off-by-one in its overflow test) loses the overflow check, not every decoding check too."""
    return student.new("KVCache", positions + 1)


@check(
    "CachedMultiHeadAttention: W_query, W_key, W_value are nn.Linear(d_in, d_out), out_proj nn.Linear(d_out, d_out), "
    "the mask a registered bool buffer",
    construction=True,
)
def test_structure(student):
    for bias in (False, True):
        handle = student.new("CachedMultiHeadAttention", D_IN, D_OUT, NH, L, qkv_bias=bias, seed=123)
        a.expect_structure(
            handle.info,
            linears={
                "W_query": (D_IN, D_OUT, bias),
                "W_key": (D_IN, D_OUT, bias),
                "W_value": (D_IN, D_OUT, bias),
                "out_proj": (D_OUT, D_OUT, True),
            },
            mask=L,
            what=f"CachedMultiHeadAttention({D_IN}, {D_OUT}, n_heads={NH}, context_length={L}, qkv_bias={bias})",
            state=handle.state() if "mask" in handle.info.get("buffers", {}) else None,
        )


@check(
    "CachedMultiHeadAttention without a cache equals causal multi-head attention (stage 8), written by hand", weight=2
)
def test_no_cache(student):
    for bias in (False, True):
        handle, w = module(student, bias=bias, bias_values=True)  # the biases' one check
        what = f"CachedMultiHeadAttention({D_IN}, {D_OUT}, n_heads={NH}, context_length={L}, qkv_bias={bias})(x (2, {L}, {D_IN}))"
        with explained(student, what):
            reply = handle(
                X,
                cast=F64,
                full=True,
                record=not bias and (lambda x, w=w: oracle.expected("multi_head_attention", x, w, NH)),
            )
        expect_close_by_hand(
            reply,
            oracle.expected("multi_head_attention", X, w, NH),
            what=what,
            mistakes=oracle.mistakes("multi_head_attention", X, w, NH),
        )


@check("decoding one token at a time with a cache gives the rows of the full forward", weight=3)
def test_one_at_a_time(student):
    handle, w = module(student, wseed=330)
    chunks = (1,) * L
    expected, mistakes = oracle.expected("kv_decode", X, chunks, w, NH), oracle.mistakes("kv_decode", X, chunks, w, NH)
    what = "decoding x (2, 8, 4) one token at a time"
    got = decode(student, handle, X, chunks, roomy_cache(student), what, reference=(expected, mistakes))
    expect_close(
        got,
        expected,
        what="the outputs of the 8 decoding steps, compared with the full causal forward",
        mistakes=mistakes,
    )


@check("a prompt of 3 tokens, then chunks of 2, 2 and 1: the rows of the full forward", weight=2)
def test_chunks(student):
    handle, w = module(student, wseed=340, bias=True)
    chunks = (3, 2, 2, 1)
    expected, mistakes = oracle.expected("kv_decode", X, chunks, w, NH), oracle.mistakes("kv_decode", X, chunks, w, NH)
    what = "decoding x (2, 8, 4) in chunks 3, 2, 2, 1"
    got = decode(student, handle, X, chunks, roomy_cache(student), what, reference=(expected, mistakes))
    expect_close(
        got, expected, what="the outputs of the chunks, compared with the full causal forward", mistakes=mistakes
    )


@check(
    "the cache holds exactly the projected, head-split keys and values (B, nh, T, hs), and the next step reads them",
    weight=2,
)
def test_cache_contents(student):
    handle, w = module(student, wseed=350)
    cache = student.new("KVCache", L)
    x = X[:, :5]
    what = (
        f"CachedMultiHeadAttention({D_IN}, {D_OUT}, n_heads={NH}, context_length={L})(x (2, 5, 4), cache=KVCache({L}))"
    )
    with explained(student, what):
        got = handle(x, cast=F64, cache=cache)
    expect_close(
        got,
        oracle.expected("multi_head_attention", x, w, NH),
        what=what + " (an empty cache)",
        mistakes=oracle.mistakes("multi_head_attention", x, w, NH),
    )
    k0, v0 = fixed(2, NH, 1, D_OUT // NH, seed=351), fixed(2, NH, 1, D_OUT // NH, seed=352)
    probe = "then cache.append(k, v) with one more position, k and v of shape (2, 2, 1, 3)"
    try:
        keys, values = pair(cache.method("append", k0, v0, cast=F64), probe)
    except StudentCodeError as exc:
        if isinstance(exc, MissingName) or str(exc).startswith("your file could not be imported"):
            raise
        raw = _holds_raw_inputs(student, x)
        fail(
            f"after {what}, {probe} raised: {exc}. The cache must hold what attention needs later: the projected "
            "keys and values split into heads, (B, nh, T, hs)"
            + (", not the inputs x: with them every step projects the whole sequence again" if raw else ""),
            b.UNPROJECTED if raw else None,
        )
    for name, got, ref, new in (("keys", keys, "kv_cached_keys", k0), ("values", values, "kv_cached_values", v0)):
        want = oracle.expected(ref, x, w, NH)
        expect_shape(got, (2, NH, 6, D_OUT // NH), f"{probe}: {name} returned")
        expect_close(
            got.t[..., :5, :],
            want,
            what=f"the cached {name} of x (the first 5 positions returned by "
            f"append), compared with x's projected, head-split {name}",
        )
        expect_close(got.t[..., 5:, :], new, what=f"the appended {name} (the last position returned by append)")
    # the next step attends over what the cache holds: the keys and values projected when they were appended, and
    # the position the judge appended. It is taken by a second module with other weights, so a forward that
    # projects the earlier positions again (from inputs it kept) gets other keys, and never sees the judge's one
    x_new = X[:, 5:6]
    other, w2 = module(student, wseed=353)
    step = (
        "then a second CachedMultiHeadAttention (other weights) takes the step x (2, 1, 4) with that cache, which "
        "holds 6 positions (x's 5, projected by the first module, and the one appended): it attends over them as "
        "they are"
    )
    with explained(student, step):
        got = other(x_new, cast=F64, cache=cache)
    expect_close(
        got,
        oracle.expected("kv_step_cached", x, w, k0, v0, x_new, w2, NH),
        what=step,
        mistakes=oracle.mistakes("kv_step_cached", x, w, k0, v0, x_new, w2, NH),
    )


def _holds_raw_inputs(student, x):
    """Does a fresh cache filled by a forward keep ``x`` itself? (appending another input row returns x first)"""
    handle, _ = module(student, wseed=350)
    cache = student.new("KVCache", L)
    try:
        handle(x, cast=F64, cache=cache)
        keys, _ = pair(cache.method("append", x[:, :1], x[:, :1], cast=F64), "append")
    except Exception:  # noqa: BLE001 - any failure: the cache does not hold the inputs in their own shape
        return False
    return keys.shape == (2, 6, D_IN) and bool(torch.allclose(keys.t[:, :5].to(F64), x, atol=1e-6))


# cached positions before the second measured step: more than the operations of any whole step (about 25)
LONG_CACHE = 100
# operations a step may add after 100 cached positions over one after 8: a buffer grown now and then (doubled, or
# one more page) costs a new buffer and a copy of the old one on the step that grows it, about 8
GROWTH = 10


@check(
    "a decoding step's scores are (B, nh, T_new, T_cached + T_new), never T x T, and its operations do not grow "
    "with the cached positions",
    weight=2,
)
def test_step_cost(student):
    L = 112
    x = fixed(2, L, D_IN, seed=360, low=-2, high=2)
    handle, w = module(student, L=L, wseed=361)
    n_ops: dict = {}
    for T_c in (8, LONG_CACHE):
        cache = student.new("KVCache", L)
        prompt = (
            f"CachedMultiHeadAttention({D_IN}, {D_OUT}, n_heads={NH}, context_length={L})(x (2, {T_c}, 4), "
            f"cache=KVCache({L}))"
        )
        with explained(student, prompt):
            handle(x[:, :T_c], cast=F64, cache=cache)
        # two consecutive steps, the costlier one counted (work done on every other step only counts too); a
        # cache that grows its buffer now and then (doubling, pages) does a few more operations on the step that
        # grows it, which GROWTH allows
        counts = []
        for T_s in (T_c, T_c + 1):
            counts.append(_measured_step(student, handle, cache, w, x, T_s, L))
        n_ops[T_c] = None if None in counts else max(counts)
    if not isinstance(n_ops[8], int) or not isinstance(n_ops[LONG_CACHE], int) or n_ops[LONG_CACHE] > n_ops[8] + GROWTH:
        fail(
            f"a decoding step ran {n_ops[8]} tensor operations after 8 cached positions and {n_ops[LONG_CACHE]} after "
            f"{LONG_CACHE} (the costlier of two steps each; {GROWTH} more are allowed for a buffer that grows): its "
            "work must not grow with the cache. Append the new keys and values with one torch.cat and compare the "
            "queries with all keys in one matrix product, not position by position"
        )
    if n_ops[LONG_CACHE] >= LONG_CACHE:
        # a count kept flat by extra operations: a loop over the cached positions runs at least one per position
        fail(
            f"a decoding step ran {n_ops[LONG_CACHE]} tensor operations after {LONG_CACHE} cached positions, at least "
            "one per cached position, as a Python loop over them does (a whole step needs a few dozen). Compare the "
            "queries with all cached keys in one matrix product"
        )


def _measured_step(student, handle, cache, w, x, T_c: int, L: int):
    """A recorded step with x[:, T_c] after ``T_c`` positions (which ``cache`` holds): its values and the size of
    its tensors checked, its operation count returned."""
    what = (
        f"CachedMultiHeadAttention({D_IN}, {D_OUT}, n_heads={NH}, context_length={L}): a step with x (2, 1, 4) "
        f"after {T_c} cached positions"
    )
    with explained(student, what):
        # the cache makes the call stateful: the reference must answer for the fresh inputs itself (a second
        # call would see one more cached position), so it is PyTorch's own attention, not a stored value
        reply = handle(
            x[:, T_c : T_c + 1],
            cast=F64,
            cache=cache,
            full=True,
            record=lambda new: b.causal_forward(torch.cat([x[:, :T_c], new], 1), w, NH)[:, -1:],
        )
    expect_close_by_hand(
        reply,
        oracle.expected("kv_step", x[:, :T_c], x[:, T_c : T_c + 1], w, NH),
        what=what + ", compared with the last row of the full forward",
        mistakes=None,
    )
    record = b.record_of(reply)
    largest, T = record.get("largest"), T_c + 1
    # (B, nh, 1, T) scores; keys and values up to max_len, apart or packed in one tensor: still far below the
    # (B, nh, T, T) scores of a recomputed sequence after 100 positions
    limit = 2 * 2 * max(NH * 1, D_OUT, D_IN) * L
    if not isinstance(largest, int):
        fail(f"{what}: the autograder could not measure the tensors your step creates")
    elif largest > limit:
        # named only when the size is that of the whole sequence's (B, nh, T, T) scores: a (L, L) tensor made
        # each step (the whole mask buffer negated before slicing) is as costly, but recomputes nothing
        full = 2 * NH * T * T <= largest <= 4 * 2 * NH * T * T
        fail(
            f"{what} created a tensor of {largest} elements, more than the (B, nh, T_new, T_cached + T_new) = "
            f"(2, {NH}, 1, {T}) scores and the cached keys and values need (at most {limit}). A step projects "
            "only the new positions and compares their queries with every cached key: it never builds the "
            f"(T, T) scores of the whole sequence, nor a ({L}, {L}) tensor of context_length (slice the causal "
            "mask before you negate or convert it)"
            + (f"\n  this looks like a known mistake: {b.RECOMPUTES}" if full else ""),
            b.RECOMPUTES if full else None,
        )
    return record.get("n_ops")


@check("reset() starts a new sequence at position 0")
def test_reset(student):
    handle, w = module(student, wseed=370)
    cache = student.new("KVCache", L)
    what = "forward(x[:, :5], cache), cache.reset(), then forward(x[:, 5:8], cache)"
    with explained(student, what):
        handle(X[:, :5], cast=F64, cache=cache)
        cache.method("reset")
        got = handle(X[:, 5:8], cast=F64, cache=cache)
    expect_close(
        got,
        oracle.expected("multi_head_attention", X[:, 5:8], w, NH),
        what=what + ": after reset() the new sequence starts at position 0",
        mistakes=oracle.mistakes("multi_head_attention", X[:, 5:8], w, NH),
    )


@check("CachedMultiHeadAttention: input unchanged, non-contiguous input, dtype and device kept, with a cache")
def test_meta(student, device):
    handle, w = module(student, wseed=380, dtype=torch.float32)
    handle.to(device, torch.float32)
    cache = student.new("KVCache", L)
    what = (
        f"CachedMultiHeadAttention({D_IN}, {D_OUT}, n_heads={NH}, context_length={L})(x (2, 3, 4) non-contiguous "
        f"float32 on {device}, cache)"
    )
    with explained(student, what):
        reply = handle(
            X[:, :3], to=device, cast=torch.float32, noncontig=True, cache=cache, full=True, return_inputs=True
        )
    expected = oracle.expected("multi_head_attention", X[:, :3], w, NH)
    expect_kept(reply, what, expected, shape=(2, 3, D_OUT), dtype=torch.float32, device=device)
    what = f"then a step with x (2, 1, 4) float32 on {device}"
    with explained(student, what):
        got = handle(X[:, 3:4], to=device, cast=torch.float32, cache=cache)
    expect_meta(
        expect_shape(got, (2, 1, D_OUT), what),
        dtype=torch.float32,
        device=device,
        what=what,
        expected=oracle.expected("kv_step", X[:, :3], X[:, 3:4], w, NH),
    )


@check("keeps the input's precision (float64 in, float64 accuracy out)")
def test_precision(student):
    handle, w = module(student, wseed=390, bias=True)
    chunks = (3, 1, 1)
    what = "decoding x (2, 5, 4) float64 in chunks 3, 1, 1 with a cache"
    got = decode(student, handle, X[:, :5], chunks, student.new("KVCache", L), what)
    expect_precise(
        got,
        oracle.expected("kv_decode", X[:, :5], chunks, w, NH),
        what=what,
        mistakes=oracle.mistakes("kv_decode", X[:, :5], chunks, w, NH),
    )
