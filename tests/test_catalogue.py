"""The mistake catalogue: each wrong implementation loses points in its own stage, and only there.

Every file in tests/mistakes/ is a stage file with one realistic learner mistake; its docstring's first line says
which known mistake the feedback must name (``MISTAKE: none`` when no name is expected). All of them are graded in
one run, beside the solutions, exactly as a class would be.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder.instructor.catalogue import mistake_files, mistake_source
from autograder.runner import Submission, grade

ROOT = Path(__file__).resolve().parent.parent
MISTAKES = mistake_files(ROOT)


def declared_mistake(path: Path) -> str | None:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    line = doc.strip().splitlines()[0] if doc.strip() else ""
    assert line.startswith("MISTAKE:"), f"{path.name}: first docstring line must be 'MISTAKE: ...'"
    name = line.removeprefix("MISTAKE:").strip()
    return None if name.lower() == "none" else name


def solutions_submission(course, student: str) -> Submission:
    return Submission(student, {s.key: (s.file, (ROOT / "solutions" / s.file).read_text()) for s in course.stages})


@pytest.fixture(scope="module")
def graded(course, sandbox):
    subs = [solutions_submission(course, "reference")]
    for path in MISTAKES:
        stage_key = path.name.split("__")[0]
        sub = solutions_submission(course, path.stem)
        sub.sources[stage_key] = (course.stage(stage_key).file, mistake_source(path, ROOT))
        subs.append(sub)
    return {r.student: r for r in grade(course, subs, sandbox=sandbox, seed=1234)}


def test_the_catalogue_is_large_enough():
    assert len(MISTAKES) >= 30, f"only {len(MISTAKES)} wrong implementations in tests/mistakes/"


def test_reference_has_full_marks(graded):
    result = graded["reference"]
    assert result.score == result.max_score, [(s.key, s.first_failure) for s in result.stages if not s.full_marks]


@pytest.mark.parametrize("path", MISTAKES, ids=[p.stem for p in MISTAKES])
def test_each_mistake_loses_points_in_its_own_stage_only(graded, course, path):
    stage_key = path.name.split("__")[0]
    assert stage_key in course.keys, f"{path.name}: unknown stage {stage_key}"
    result = graded[path.stem]
    for stage in result.stages:
        if stage.key == stage_key:
            assert stage.score < stage.max_score, f"{path.name} got full marks"
        else:
            assert stage.full_marks, f"{path.name} lost points in {stage.key}: {stage.first_failure}"
    expected = declared_mistake(path)
    if expected:
        stage = result.stage(stage_key)
        named = {c.mistake for c in stage.checks if c.mistake}
        assert expected in named, f"{path.name}: expected the mistake {expected!r} to be named, got {named}"
    for check in result.stage(stage_key).checks:
        assert "Traceback" not in check.message


# Files that make a second named mistake on the way to their own: caching the inputs is how this one recomputes.
ALSO_MADE = {
    "kv_cache__recomputes_everything": {"the cache stores the unprojected inputs"},
    # no mask once a cache is given: where a check's step runs on a cache, stage 8's words are true of it too
    "kv_cache__no_mask_when_decoding": {
        "no causal mask, or one that hides nothing (rows taken from its end, self.mask[-T:]): the future leaks in"
    },
    # the buffer's last rows: stage 8's words for them are true where a whole new sequence starts (after reset())
    "kv_cache__mask_rows_from_end": {
        "no causal mask, or one that hides nothing (rows taken from its end, self.mask[-T:]): the future leaks in"
    },
}


@pytest.mark.parametrize("path", [p for p in MISTAKES if declared_mistake(p)], ids=lambda p: p.stem)
def test_no_check_names_a_mistake_that_was_not_made(graded, path):
    """A label is true: where a check names a known mistake, it is the one the file makes (a near-miss of another
    mistake, or an input on which two scales coincide, gets no name rather than a wrong one)."""
    stage = graded[path.stem].stage(path.name.split("__")[0])
    made = {declared_mistake(path)} | ALSO_MADE.get(path.stem, set())
    wrong = {c.name: c.mistake for c in stage.checks if c.mistake and c.mistake not in made}
    assert not wrong, f"{path.name} makes {declared_mistake(path)!r}, but checks named {wrong}"


# A layer built with the wrong bias is one mistake: the structure check finds it, and every other check judges
# the module by the weights it holds, so it costs exactly that check (autograder.graders.attention.load_weights).
ONE_CHECK = {
    "multi_head_attention__out_proj_without_bias": "MultiHeadAttention: W_query, W_key, W_value are nn.Linear",
    "multi_head_attention__qkv_bias_always_on": "MultiHeadAttention: W_query, W_key, W_value are nn.Linear",
    "causal_attention__qkv_bias_always_off": "CausalSelfAttention: nn.Linear(d_in, head_size) projections",
}


@pytest.mark.parametrize("name", sorted(ONE_CHECK))
def test_a_wrong_bias_costs_one_check(graded, name):
    stage = graded[name].stage(name.split("__")[0])
    failed = [c.name for c in stage.checks if not c.passed]
    assert len(failed) == 1 and failed[0].startswith(ONE_CHECK[name]), failed


# Mistakes whose symptom looks like another known mistake, which must not be named for them.
NOT_NAMED = [
    ("kv_cache__len_is_batch", "no ValueError past max_len"),
    # one key dropped where only the last query sees it gives the numbers of a diagonal block skipped
    ("blockwise_attention__causal_stops_one_block_short", "last partial block dropped (T not divisible by block_size)"),
    # an answer of NaN everywhere matches every variant that is NaN everywhere
    ("blockwise_attention__causal_stops_one_block_short", "diagonal masked too (a step cannot see itself)"),
]


@pytest.mark.parametrize("name, other", NOT_NAMED, ids=[n for n, _ in NOT_NAMED])
def test_a_look_alike_mistake_is_not_named(graded, name, other):
    stage = graded[name].stage(name.split("__")[0])
    assert not [c.name for c in stage.checks if c.mistake == other], [c.message for c in stage.checks if c.mistake]


# Hidden checks draw their shapes from each student's seed. Each case below is a draw that once hid the mistake
# (the students and base seeds were found by grading 30 to 60 students per catalogue mistake: with one step,
# T = 1, every mask and head mistake gives the right values; a softmax over the last dim hides an ignored `dim`;
# one head hides how heads are split). The same mistake must cost the same checks whatever the student's seed.
LUCKY_DRAWS = [
    ("multi_head_attention__merge_without_transpose", "MultiHeadAttention: random weights", 3, ["s30"]),
    ("multi_head_attention__split_without_transpose", "MultiHeadAttention: random weights", 3, ["s30"]),
    ("multi_head_attention__scale_by_d_out", "MultiHeadAttention: random weights", 3, ["s30"]),
    ("multi_head_attention__merge_without_transpose", "split_heads and merge_heads on random", 11, ["s2", "s4"]),
    ("multi_head_attention__split_without_transpose", "MultiHeadAttention: equals torch.nn", 11, ["s4", "s5"]),
    ("causal_attention__mask_after_softmax", "causal_attention: random q, k, v", 11, ["s0"]),
    ("causal_attention__scale_by_value_size", "causal_attention: random q, k, v", 11, ["s0"]),
    ("causal_attention__zero_instead_of_inf", "causal_attention: random q, k, v", 11, ["s0"]),
    ("dot_product_attention__ignores_dim", "softmax: random shapes and dims", 11, ["s3", "s5"]),
    ("dot_product_attention__no_keepdim", "softmax: random shapes and dims", 11, ["s2", "s5"]),
    ("dot_product_attention__sum_normalisation", "softmax: random shapes and dims", 11, ["s22"]),
]


@pytest.mark.parametrize(
    "name, check, seed, students",
    LUCKY_DRAWS,
    ids=[f"{n}-{c.split(':')[0].split()[0]}-{seed}" for n, c, seed, _ in LUCKY_DRAWS],
)
def test_a_hidden_check_catches_its_mistake_whatever_the_seed(course, sandbox, name, check, seed, students):
    stage = course.stage(name.split("__")[0])
    source = mistake_source(ROOT / "tests" / "mistakes" / f"{name}.py", ROOT)
    subs = [Submission(student, {stage.key: (stage.file, source)}) for student in students]
    for result in grade(course, subs, stages=[stage.key], seed=seed, sandbox=sandbox):
        verdicts = [c for c in result.stage(stage.key).checks if c.name.startswith(check)]
        assert verdicts and not any(c.passed for c in verdicts), f"{result.student}: {name} passed {check!r}"


# The same file graded at another base seed (each file alone, its own stage only): every student's hidden inputs
# are drawn again, and a mistake must get the same points and the same names in the same checks. A draw on which
# two mistakes give the same numbers names neither, so such draws are kept out of the case a check fails first.
SECOND_SEED = 7


@pytest.fixture(scope="module")
def graded_again(course, sandbox):
    by_stage: dict[str, list[Submission]] = {}
    for path in MISTAKES:
        key = path.name.split("__")[0]
        by_stage.setdefault(key, []).append(
            Submission(path.stem, {key: (course.stage(key).file, mistake_source(path, ROOT))})
        )
    return {
        r.student: r
        for key, subs in by_stage.items()
        for r in grade(course, subs, stages=[key], seed=SECOND_SEED, sandbox=sandbox)
    }


@pytest.mark.parametrize("path", MISTAKES, ids=[p.stem for p in MISTAKES])
def test_a_mistake_gets_the_same_names_whatever_the_seed(graded, graded_again, path):
    key = path.name.split("__")[0]
    first, again = graded[path.stem].stage(key), graded_again[path.stem].stage(key)

    def verdicts(stage):
        return sorted((c.name, c.mistake or "") for c in stage.checks if not c.passed)

    assert round(first.score, 3) == round(again.score, 3)
    assert verdicts(first) == verdicts(again)


# One mistake, one loss: a file whose only fault is one of these loses exactly the check that says so (and keeps
# every value and gradient check: computing float64 at float32 precision is not 21 wrong answers).
ONE_LOSS = [
    ("causal_attention__float32_scale", "keeps the input's precision"),
    ("multi_head_attention__float_softmax", "keeps the input's precision"),
    ("causal_attention__fill_minus_1e9", "float16 and bfloat16"),
    ("causal_attention__float_future_mask", "CausalSelfAttention: nn.Linear(d_in, head_size) projections"),
    ("causal_attention__mask_from_T_q", "causal_attention: equals scaled_dot_product_attention"),
    ("multi_head_attention__mask_in_forward", "MultiHeadAttention: W_query, W_key, W_value are nn.Linear"),
    ("loop_average__view_on_input", "non-contiguous input with two leading dims"),
    ("self_attention__seeds_itself", "SelfAttentionParams: weights drawn with torch.rand"),
    ("self_attention__unsqueeze_input", "input unchanged (one sequence (T, d_in) too)"),
    ("causal_attention__future_buffer", "CausalSelfAttention: nn.Linear(d_in, head_size) projections"),
    ("padding_and_cross_attention__additive_mask_nan_to_num", "CrossAttention: gradients reach"),
    ("kv_cache__overflow_ignores_new", "KVCache: ValueError past max_len"),
    ("kv_cache__refuses_a_full_cache", "KVCache: ValueError past max_len"),
    ("dot_product_attention__weights_naive", "weights and context: rows sum to 1, finite for scores of a few hundred"),
    ("dot_product_attention__context_naive_softmax", "weights and context: rows sum to 1, finite for scores of a few"),
    ("causal_attention__dropout_never_applied", "CausalSelfAttention: dropout acts on the attention weights"),
    # no nn.Dropout at all: the structure check says so, the training-mode check does not take a second point
    ("causal_attention__no_dropout_module", "CausalSelfAttention: nn.Linear(d_in, head_size) projections"),
    # answers in float32 whatever the input: the float64 call, the precision check and the float16 call all see
    # the dtype; the first of them loses its points, the others say so and keep theirs
    ("loop_average__float32_always", "dtype and device follow the input"),
    ("dot_product_attention__softmax_float32", "dtype and device follow the input"),
    ("variance_scaling__float32_inputs", "dtype and device follow the inputs"),
]


@pytest.mark.parametrize("name, check", ONE_LOSS, ids=[n for n, _ in ONE_LOSS])
def test_one_mistake_loses_one_check(graded, name, check):
    stage = graded[name].stage(name.split("__")[0])
    lost = [c.name for c in stage.checks if c.points < c.max_points]
    assert len(lost) == 1 and lost[0].startswith(check), f"{name} lost points in {lost}"
    # a check that failed for the same constraint again says it, and keeps its points
    for c in stage.checks:
        if not c.passed and c.name != lost[0]:
            assert "it is counted once" in c.message and c.points == c.max_points, (c.name, c.message)


# A mistake is named in every check whose failure it explains, not only in the first one written for it.
NAMED_IN = [
    ("kv_cache__cache_not_used", ["decoding one token at a time", "a prompt of 3 tokens", "decoding with random"]),
    (
        "kv_cache__wrong_dim",
        [
            "decoding one token at a time",
            "a prompt of 3 tokens",
            "decoding with random",
            "keeps the input's precision",
            "float16 and bfloat16",
        ],
    ),
]


@pytest.mark.parametrize("name, checks", NAMED_IN, ids=[n for n, _ in NAMED_IN])
def test_a_mistake_is_named_wherever_it_explains_the_answer(graded, name, checks):
    expected = declared_mistake(ROOT / "tests" / "mistakes" / f"{name}.py")
    stage = graded[name].stage(name.split("__")[0])
    for start in checks:
        (verdict,) = [c for c in stage.checks if c.name.startswith(start)]
        assert not verdict.passed and verdict.mistake == expected, (start, verdict.mistake, verdict.message[:300])


# A failure says what went wrong for this mistake, not for another with the same symptom (a NaN).
SAYS = [
    ("blockwise_attention__future_blocks_first", "blockwise_attention stays finite", "comes from the hidden keys"),
    # the judge's own backward of a wrong-shaped output is not the learner's error
    (
        "causal_attention__returns_weights",
        "CausalSelfAttention: gradients reach",
        "expected an output of shape (2, 8, 3)",
    ),
    ("causal_attention__softmax_dtype_float32", "CausalSelfAttention: values with", "two tensors of different dtypes"),
    ("kv_cache__cat_along_batch", "a prompt of 3 tokens", "torch.cat joins tensors along the dim it is given"),
    ("kv_cache__cat_along_batch", "KVCache: append returns every key", "expected shape (2, 2, 4, 3), got (4, 2, 2, 3)"),
]


@pytest.mark.parametrize("name, check, words", SAYS, ids=[n for n, _, _ in SAYS])
def test_a_failure_says_what_went_wrong(graded, name, check, words):
    stage = graded[name].stage(name.split("__")[0])
    failed = [c for c in stage.checks if c.name.startswith(check)]
    assert failed and not failed[0].passed and words in failed[0].message, [c.message for c in failed]


# An honest mistake of a stateful call (a decoding step given the cache it appends to) is a wrong answer, never a
# forfeit: a second, untraced call would find the cache changed, so the judge does not hold its answer against
# the graph's (evidence.verify), and the stage keeps the points of every check it passes.
STATEFUL = [p.stem for p in MISTAKES if p.stem.startswith("kv_cache__")]


@pytest.mark.parametrize("name", STATEFUL)
def test_a_wrong_stateful_call_is_not_taken_for_a_forged_graph(graded, name):
    stage = graded[name].stage("kv_cache")
    forfeited = [c.name for c in stage.checks if c.message.startswith("no credit")]
    assert not forfeited and stage.score > 0, (stage.score, forfeited, stage.first_failure)


# A dropout left on where the module was built with dropout=0.0 (a rate hard-coded) is judged by the dropout checks
# alone: modules are called for their values in eval mode (graders.attention.new_module). In training mode every
# value check differed by chance, and the recorded calls' graphs (whose dropout the judge's replay draws again)
# could not be verified, which forfeited the stage.
DROPOUT_LEFT_ON = [("causal_attention__dropout_rate_hard_coded", "CausalSelfAttention: dropout")]


@pytest.mark.parametrize("name, checks", DROPOUT_LEFT_ON, ids=[n for n, _ in DROPOUT_LEFT_ON])
def test_a_dropout_left_on_costs_only_the_dropout_checks(graded, name, checks):
    stage = graded[name].stage(name.split("__")[0])
    failed = [c.name for c in stage.checks if not c.passed]
    assert failed and all(n.startswith(checks) for n in failed), failed
