"""What the class grader writes for people: grades.csv, Gradescope's results.json, report.html, the summary.

Everything here reads results only (``SubmissionResult`` + the notes stored beside it); no learner code runs and
nothing is imported from the graders. Every string that may come from a learner (student ids are folder names,
messages quote their errors and values, file names are theirs) is escaped before it reaches HTML, and the report
loads nothing from outside itself: one self-contained file with inline CSS and SVG and one inline script of ours.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import io
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from urllib.parse import quote

from ..course import Course
from ..results import CheckResult, StageResult, SubmissionResult
from .store import FEEDBACK_FILE


@dataclass
class Graded:
    """One student's result as the reports see it. ``stored`` is the result's JSON as written when it was graded:
    its stage scores and total were rounded once from the exact sums, whereas sums of the stored (rounded) check
    points can miss them by a few 1e-4; the reports use the stored figures, as Gradescope's file does."""

    result: SubmissionResult
    notes: list[str] = field(default_factory=list)
    layout: str = "files"
    stored: dict | None = None

    @property
    def student(self) -> str:
        return self.result.student

    @property
    def total(self) -> float:
        if self.stored and isinstance(self.stored.get("score"), (int, float)):
            return float(self.stored["score"])
        return self.result.score

    def stage_score(self, key: str) -> float | None:
        for s in (self.stored or {}).get("stages", []):
            if s.get("key") == key and isinstance(s.get("score"), (int, float)):
                return float(s["score"])
        stage = _stage(self.result, key)
        return stage.score if stage is not None else None


FULL = 1e-3  # stored check points are rounded to 4 decimals: a sum may miss the maximum by a few 1e-4


def _num(x: float) -> str:
    return f"{round(x, 2):g}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def stage_key_of(check_name: str) -> str:
    return check_name.split(":", 1)[0]


# ───────────────────────────── Gradescope ─────────────────────────────


def split_points(points: list[float], total: float, places: int = 4) -> list[float]:
    """``points`` rounded to ``places`` decimals so that they add up to ``total`` (rounded alike) exactly: the
    rounding error goes to the entries that rounding moved most (largest remainders). Gradescope adds the
    tests' max_score up; seven checks of 15/7 points each rounded alone add up to 15.0003."""
    unit = 10**places
    exact = [p * unit for p in points]
    units = [math.floor(e + 0.5) for e in exact]
    short = round(total * unit) - sum(units)
    order = sorted(range(len(points)), key=lambda i: (exact[i] - units[i]) * (1 if short > 0 else -1), reverse=True)
    for i in order[: abs(short)] if abs(short) <= len(points) else []:
        units[i] += 1 if short > 0 else -1
    return [u / unit for u in units]


def gradescope_json(result: SubmissionResult, *, notes: list[str] | None = None) -> dict:
    """The result in Gradescope's autograder format (results.json): ``score``, ``tests[]`` with ``name`` =
    ``"<stage key>: <check>"``, ``score``, ``max_score``, ``status``, ``output`` (the teaching message) and
    ``visibility``; the seeds of the hidden inputs in ``extra_data``. Public checks are visible at once, hidden
    ones after the grades are published."""
    tests = []
    for s_index, stage in enumerate(result.stages, 1):
        maxima = split_points([c.max_points for c in stage.checks], sum(c.max_points for c in stage.checks))
        for c_index, (check, max_points) in enumerate(zip(stage.checks, maxima), 1):
            extra = {"stage": stage.key, "hidden": check.hidden}
            if check.hidden and stage.seed is not None:
                extra["seed"] = stage.seed
            if check.mistake:
                extra["mistake"] = check.mistake
            if check.device:
                extra["device"] = check.device
            output = check.message if not check.passed else ""
            if not check.passed and check.mistake and check.mistake not in output:
                output += f"\nknown mistake: {check.mistake}"
            tests.append(
                {
                    "name": f"{stage.key}: {check.name}",
                    "number": f"{s_index}.{c_index}",
                    "score": max_points
                    if check.points >= check.max_points
                    else min(round(check.points, 4), max_points),
                    "max_score": max_points,
                    "status": "passed" if check.passed else "failed",
                    "output": output,
                    "visibility": "after_published" if check.hidden else "visible",
                    "extra_data": extra,
                }
            )
    lines = [
        f"{stage.key}: {_num(stage.score)}/{_num(stage.max_score)}" + (f" ({stage.note})" if stage.note else "")
        for stage in result.stages
    ]
    if notes:
        lines += ["", *notes]
    return {
        "score": round(result.score, 4),
        "output": "\n".join(lines),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "seeds": {s.key: s.seed for s in result.stages},
            "isolation": result.isolation,
            "max_score": result.max_score,
        },
    }


# ───────────────────────────── grades.csv ─────────────────────────────


def grades_csv(course: Course, graded: list[Graded]) -> str:
    """``student,<stage keys in course order>,total``; a stage that has no graders is left empty."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["student", *course.keys, "total"])
    for g in graded:
        row = [_csv_safe(g.student)]
        for key in course.keys:
            score = g.stage_score(key)
            row.append(_num(score) if score is not None else "")
        row.append(_num(g.total))
        w.writerow(row)
    return out.getvalue()


def _csv_safe(text: str) -> str:
    """Spreadsheets run cells that start with = + - @ as formulas: a student id never does."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _stage(result: SubmissionResult, key: str) -> StageResult | None:
    return next((s for s in result.stages if s.key == key), None)


# ───────────────────────────── class statistics ─────────────────────────────


@dataclass
class ClassStats:
    n: int
    max_score: float
    totals: list[float]
    stage_means: dict[str, float]
    stage_full: dict[str, int]
    stage_status: dict[str, Counter]
    # stage → [(check, passed, run)], over the students whose stage was graded (not missing, a stub, or broken)
    check_rates: dict[str, list[tuple[str, int, int]]]
    mistakes: list[tuple[str, str, int]]  # (stage, mistake, students)


def class_stats(course: Course, graded: list[Graded]) -> ClassStats:
    totals = [g.total for g in graded]
    max_score = max((g.result.max_score for g in graded), default=0)
    means, full, status = {}, {}, {}
    rates: dict[str, dict[str, list[int]]] = {}
    mistakes: Counter = Counter()
    for key in course.keys:
        stages = [s for g in graded if (s := _stage(g.result, key)) is not None]
        if not stages:
            continue
        means[key] = sum(g.stage_score(key) or 0.0 for g in graded if _stage(g.result, key) is not None) / len(stages)
        full[key] = sum(s.full_marks for s in stages)
        status[key] = Counter(s.status for s in stages)
        per = rates.setdefault(key, {})
        for s in stages:
            seen = set()
            for c in s.checks:
                counts = per.setdefault(c.name, [0, 0])
                if s.status == "graded":  # a missing file, a stub or an import error fails every check alike
                    counts[0] += c.passed
                    counts[1] += 1
                if c.mistake and not c.passed and c.mistake not in seen:
                    seen.add(c.mistake)
                    mistakes[(key, c.mistake)] += 1
    return ClassStats(
        n=len(graded),
        max_score=max_score,
        totals=totals,
        stage_means=means,
        stage_full=full,
        stage_status=status,
        check_rates={k: [(name, p, r) for name, (p, r) in v.items()] for k, v in rates.items()},
        mistakes=[(k, m, n) for (k, m), n in mistakes.most_common()],
    )


# ───────────────────────────── the terminal summary ─────────────────────────────


def summary_table(course: Course, graded: list[Graded]):
    """A rich Table: per stage, the class mean, how many have full marks, the most common named mistake."""
    from rich.markup import escape
    from rich.table import Table

    stats = class_stats(course, graded)
    table = Table(title=f"{course.title}: {plural(stats.n, 'submission')}", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("stage")
    table.add_column("mean", justify="right")
    table.add_column("full marks", justify="right")
    table.add_column("not graded", justify="right")
    table.add_column("most common mistake")
    for stage in course.stages:
        if stage.key not in stats.stage_means:
            table.add_row(str(stage.number), stage.key, "[dim]no graders[/dim]", "", "", "")
            continue
        st = stats.stage_status[stage.key]
        off = st.get("missing", 0) + st.get("not implemented", 0) + st.get("error", 0)
        top = next(((m, n) for k, m, n in stats.mistakes if k == stage.key), None)
        table.add_row(
            str(stage.number),
            stage.key,
            f"{_num(stats.stage_means[stage.key])}/{stage.points}",
            f"{stats.stage_full[stage.key]}/{stats.n}",
            str(off) if off else "",
            f"{escape(top[0])} ({top[1]})" if top else "",
        )
    if stats.totals:
        mean = sum(stats.totals) / len(stats.totals)
        table.caption = (
            f"total: mean {_num(mean)}/{_num(stats.max_score)}, median {_num(_median(stats.totals))}, "
            f"{sum(t >= stats.max_score - FULL for t in stats.totals)} with full marks"
        )
    return table


def failure_summary(graded: list[Graded]) -> str | None:
    """One line for the end of a run: how many stages ran out of time and how many crashed, and whose; None
    when none did. A stage counts once however many of its checks the hang or crash cost."""
    found: dict[str, list[str]] = {"timeout": [], "crash": []}
    for g in graded:
        for stage in g.result.stages:
            kinds = {c.failure for c in stage.checks if c.failure}
            for kind in ("timeout", "crash"):
                if kind in kinds:
                    found[kind].append(f"{g.student} ({stage.key})")
    if not any(found.values()):
        return None

    def part(items: list[str], what: str) -> str:
        return f"{plural(len(items), 'stage')} {what}" + (
            ": " + ", ".join(items[:4]) + (f" and {len(items) - 4} more" if len(items) > 4 else "") if items else ""
        )

    return f"{part(found['timeout'], 'ran out of time')}; {part(found['crash'], 'crashed')}"


def _median(values: list[float]) -> float:
    v = sorted(values)
    if not v:
        return 0.0
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


# ───────────────────────────── HTML ─────────────────────────────
#
# Both pages are one self-contained file: inline CSS, inline SVG, and one inline script of ours
# (templates/report.js: sorting and filtering the grade table, a student's detail on demand, drawing heatmaps),
# which the page's Content-Security-Policy names by its hash, so no other script can run even if some learner
# string escaped its escaping. Learner strings reach the page only through ``esc`` (text and attributes);
# the script reads them back from attributes and writes them with textContent, never as markup.

TEMPLATES = resources.files("autograder") / "templates"  # wherever in the package this module lives
CSS = (TEMPLATES / "report.css").read_text(encoding="utf-8")
SCRIPT = (TEMPLATES / "report.js").read_text(encoding="utf-8")
HARDEST = 10  # checks listed under "hardest checks" (all of them are one click away)


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def _head(title: str) -> str:
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode()
    policy = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
    )


def _foot() -> str:
    return f"<script>{SCRIPT}</script></body></html>"


def _score_class(score: float, max_score: float) -> str:
    if max_score <= 0:
        return "none"
    if score >= max_score - FULL:
        return "full"
    return "zero" if score <= FULL else "part"


def _stage_label(stage) -> str:
    """A stage's column heading: its number and key, wrapped at the underscores."""
    return f'<span class="num">{stage.number}</span> {esc(stage.key.replace("_", " "))}'


def histogram_svg(totals: list[float], max_score: float, bins: int = 10) -> str:
    """Totals in ``bins`` equal bins of the maximum, labelled at the bin edges (0 %, 10 %, ... 100 %) under an
    axis, with each bar's count above it and a y axis of students."""
    counts = [0] * bins
    for t in totals:
        frac = t / max_score if max_score else 0.0
        counts[min(bins - 1, max(0, int(frac * bins)))] += 1
    top = max(counts) or 1
    bw, h, left, right, above, below = 40, 140, 34, 12, 16, 40
    width = left + bins * bw + right
    base = above + h
    parts = [
        f'<svg class="hist" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{base + below}" '
        f'role="img" aria-label="distribution of total scores">'
    ]
    for tick in sorted({top // 2, top} - {0}):  # y axis: students, whole numbers
        y = base - h * tick / top
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#e3e5ee"/>'
            f'<text x="{left - 5}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{tick}</text>'
        )
    for i, n in enumerate(counts):
        bh = h * n / top
        x = left + i * bw
        lo, hi = i * 100 // bins, (i + 1) * 100 // bins
        parts.append(
            f'<rect x="{x + 3}" y="{base - bh:.1f}" width="{bw - 6}" height="{bh:.1f}" fill="#4a72c4">'
            f"<title>{lo}–{hi} %: {plural(n, 'student')}</title></rect>"
        )
        if n:
            parts.append(
                f'<text x="{x + bw / 2}" y="{base - bh - 4:.1f}" font-size="11" text-anchor="middle">{n}</text>'
            )
    for i in range(bins + 1):
        x = left + i * bw
        parts.append(
            f'<line x1="{x}" y1="{base}" x2="{x}" y2="{base + 4}" stroke="#889"/>'
            f'<text x="{x}" y="{base + 16}" font-size="10.5" text-anchor="middle">{i * 100 // bins}</text>'
        )
    parts.append(
        f'<line x1="{left}" y1="{base}" x2="{width - right}" y2="{base}" stroke="#889"/>'
        f'<text x="{left + bins * bw / 2}" y="{base + 33}" font-size="11" text-anchor="middle" '
        f'fill="#556">total score, % of {_num(max_score)} points</text></svg>'
    )
    return "".join(parts)


def _finite(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _short(v):
    """A heatmap value for the page: 3 significant digits (the cell shows 2), non-finite ones as strings."""
    f = _finite(v)
    if f is None:
        return str(v)[:8]
    return float(f"{f:.3g}")


def heatmap_data(figure: dict) -> dict | None:
    """What the page's script draws for one figure: the title and both matrices (at most 24 x 24, 3 significant
    digits); the script outlines the cells that differ by more than 1e-3 + 1e-3 |expected| (the 3 digits kept
    here are finer than that) and gives both one colour scale."""
    exp, got = figure.get("expected"), figure.get("got")
    if not isinstance(exp, list) or not isinstance(got, list):
        return None
    exp = [[_short(x) for x in row[:24]] for row in exp[:24] if isinstance(row, list)]
    got = [[_short(x) for x in row[:24]] for row in got[:24] if isinstance(row, list)]
    if not exp or not got:
        return None
    return {"title": str(figure.get("title", "")), "expected": exp, "got": got}


class Matrices:
    """The heatmaps' matrices of a page, each stored once (a public check's expected weights are the same for
    every student, and one mistake's wrong weights often are): figures refer to them by index."""

    def __init__(self):
        self.index: dict[str, int] = {}

    def ref(self, matrix: list) -> int:
        return self.index.setdefault(json.dumps(matrix, separators=(",", ":"), allow_nan=False), len(self.index))

    def html(self) -> str:
        """The store as a JSON data block (not run: the page's policy runs only its own script)."""
        text = "[" + ",".join(self.index) + "]"
        return '<script type="application/json" id="matrices">' + text.replace("<", "\\u003c") + "</script>"


def figures_html(figures: dict | None, matrices: Matrices) -> str:
    """Placeholders the script turns into heatmaps (rows: query position i, columns: key position j, a colour
    scale, values in the cells when small, red outlines where the submission differs)."""
    if not isinstance(figures, dict):
        return ""
    out = []
    for fig in (figures.get("heatmaps") or [])[:2]:
        data = heatmap_data(fig) if isinstance(fig, dict) else None
        if data is not None:
            data["expected"], data["got"] = matrices.ref(data["expected"]), matrices.ref(data["got"])
            payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
            out.append(
                f'<div class="heatmap" data-heatmap="{esc(payload)}">'
                f'<span class="dim">heatmap: {esc(data["title"])}</span></div>'
            )
    return "".join(out)


def _stage_cell(stage: StageResult | None, score: float | None = None) -> str:
    if stage is None:
        return '<td class="none n dim" data-v="-1">–</td>'
    score = stage.score if score is None else score
    cls = _score_class(score, stage.max_score)
    title = f' title="{esc(stage.note)}"' if stage.note else ""
    return f'<td class="{cls} n" data-v="{_num(score)}"{title}>{_num(score)}</td>'


def _hidden_summary(stage: StageResult) -> str:
    hidden = [c for c in stage.checks if c.hidden]
    passed = [c for c in hidden if c.passed]
    return (
        f"{plural(len(hidden), 'hidden check')} ({_num(sum(c.max_points for c in hidden))} pts): "
        f"{len(passed)} passed ({_num(sum(c.points for c in hidden))} pts)"
    )


def student_section(
    course: Course,
    g: Graded,
    matrices: Matrices,
    *,
    hidden_detail: bool = True,
    stage_table: bool = True,
    brief: bool = False,
) -> str:
    """One student's detail: notes, a table of stages (score, status, seed), then every failed check with its
    message, named mistake and heatmaps. Without ``hidden_detail`` (what a student sees before the grades are
    published) hidden checks are summarised per stage (how many, their points) and their names, messages,
    inputs, expected values and seeds are left out. ``stage_table``: False in the class report, whose grade
    table already shows the stages' scores. ``brief`` (the class report): each message's first line only (what
    failed and by how much; the value previews and the known mistake's line are in feedback.html)."""
    r = g.result
    parts = []
    if g.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in g.notes) + "</ul>")
    head = "<th>seed</th>" if hidden_detail else "<th>hidden checks</th>"
    if stage_table:
        parts.append(f'<table class="stages"><tr><th>#</th><th>stage</th><th>score</th><th>status</th>{head}</tr>')
    for stage in r.stages if stage_table else []:
        number = course.stage(stage.key).number if stage.key in course.keys else ""
        status = "full marks" if stage.full_marks else (stage.note or stage.status)
        if stage.status == "graded" and not stage.full_marks:
            shown = [c for c in stage.checks if hidden_detail or not c.hidden]
            status = f"{sum(c.passed for c in shown)}/{len(shown)} {'' if hidden_detail else 'public '}checks pass"
        last = (
            esc(stage.seed if stage.seed is not None else "")
            if hidden_detail
            else (esc(_hidden_summary(stage)) if any(c.hidden for c in stage.checks) else "")
        )
        parts.append(
            f'<tr><td class="n">{number}</td><td>{esc(stage.key)}</td>'
            f"{_stage_cell(stage, g.stage_score(stage.key))}<td>{esc(status)}</td>"
            f'<td class="dim">{last}</td></tr>'
        )
    if stage_table:
        parts.append("</table>")
    for stage in r.stages:
        failed = [c for c in stage.checks if not c.passed and (hidden_detail or not c.hidden)]
        hidden_failed = [c for c in stage.checks if not c.passed and c.hidden and not hidden_detail]
        if not failed and not hidden_failed:
            continue
        if stage.status in ("missing", "not implemented", "error") and stage.note:
            parts.append(f"<h4>{esc(stage.key)}: {esc(stage.status)}</h4><pre>{esc(stage.note)}</pre>")
            failed = [c for c in failed if c.message != stage.note][:3]
        else:
            parts.append(
                f"<h4>{esc(stage.key)}: {plural(len(failed) + len(hidden_failed), 'failed check')}"
                + (f" ({len(hidden_failed)} hidden)" if hidden_failed else "")
                + "</h4>"
            )
        groups: dict[str, list[CheckResult]] = {}  # one message, shown once under the checks that gave it
        for c in failed:
            groups.setdefault(c.message, []).append(c)
        for message, checks in groups.items():
            for c in checks:
                tags = f'<b class="mistake">{esc(c.mistake)}</b>' if c.mistake else ""
                if c.hidden:
                    tags += f"<b>hidden, seed {esc(stage.seed)}</b>"
                parts.append(f'<div class="check">{esc(c.name)} <i>{_num(c.max_points)} pts</i>{tags}</div>')
            figures = next((c.figures for c in checks if c.figures), None)
            text = message.split("\n", 1)[0] if brief else message
            parts.append(f"<pre>{esc(text)}</pre>{figures_html(figures, matrices)}")
        if hidden_failed:
            parts.append(
                f'<p class="dim">{plural(len(hidden_failed), "hidden check")} failed '
                f"({_num(sum(c.max_points - c.points for c in hidden_failed))} pts): which, and on what "
                "input, is shown once the grades are published.</p>"
            )
    if r.isolation:
        parts.append(f'<p class="dim">isolation: {esc(r.isolation)}</p>')
    return "".join(parts)


def _mistakes_of(g: Graded) -> list[str]:
    return sorted({c.mistake for s in g.result.stages for c in s.checks if c.mistake and not c.passed})


def render_report(
    course: Course, graded: list[Graded], *, meta: dict | None = None, feedback_links: bool = False
) -> str:
    """The class on one page, in the order an instructor reads it: the header (how many, mean, median, full
    marks), the distribution and the stages (named as in course.yml, however many there are), the hardest
    checks, the named mistakes the graders recognised, then the grade table: sortable by any column,
    filtered by name, mistake or state, each student's detail opened on demand from an inert <template>
    (brief: first lines of messages; ``feedback_links``: a link to <student>/feedback.html, as ``grade``
    writes it beside the report, for the rest)."""
    meta = meta or {}
    stats = class_stats(course, graded)
    graded_stages = [s for s in course.stages if s.key in stats.stage_means]
    p = [
        _head(f"{course.title}: class report"),
        f'<header><h1>Class report</h1><p class="course">{esc(course.title)}</p><div class="cards">',
    ]
    totals = stats.totals
    full = sum(t >= stats.max_score - FULL for t in totals) if totals else 0
    not_graded = sum(1 for g in graded if all(s.status != "graded" for s in g.result.stages))
    cards = [("submissions", str(stats.n))]
    if totals:
        cards += [
            ("mean", f"{_num(sum(totals) / len(totals))} / {_num(stats.max_score)}"),
            ("median", _num(_median(totals))),
            ("full marks", str(full)),
        ]
    cards.append(("nothing graded", str(not_graded)))
    p += [f'<div class="card"><div class="v">{esc(v)}</div><div class="k">{esc(k)}</div></div>' for k, v in cards]
    p.append("</div>")
    facts = [f"{k}: {meta[k]}" for k in ("seed", "isolation", "devices") if meta.get(k) not in (None, "")]
    if facts:
        p.append(f'<p class="facts">{esc(" · ".join(facts))}</p>')
    ungraded = [s.key for s in course.stages if s.key not in stats.stage_means]
    if ungraded:
        p.append(f'<p class="facts">stages without graders (not scored): {esc(", ".join(ungraded))}</p>')
    p.append("</header>")

    p.append('<section id="class"><h2>The class</h2><div class="row"><div>')
    p.append(histogram_svg(totals, stats.max_score) if totals else "<p>no submissions</p>")
    p.append(
        '</div><div class="grow"><table class="stagetable"><tr><th>stage</th><th>mean</th>'
        '<th>full marks</th><th title="no file for this stage">missing</th>'
        '<th title="still the stub">not implemented</th><th title="does not import">error</th></tr>'
    )
    for s in graded_stages:
        st = stats.stage_status[s.key]
        frac = stats.stage_means[s.key] / s.points if s.points else 0.0
        p.append(
            f'<tr><td>{_stage_label(s)}<div class="dim small">{esc(s.title)}</div></td>'
            f'<td class="n">{_bar(frac)} {_num(stats.stage_means[s.key])}/{s.points}</td>'
            f'<td class="n">{stats.stage_full[s.key]}/{stats.n}</td>'
            + "".join(f'<td class="n">{st.get(k, 0) or ""}</td>' for k in ("missing", "not implemented", "error"))
            + "</tr>"
        )
    p.append("</table></div></div></section>")

    checks = [(s, name, passed, run) for s in graded_stages for name, passed, run in stats.check_rates.get(s.key, [])]
    check_mistakes: Counter = Counter()
    for g in graded:
        for done in g.result.stages:
            for c in done.checks:
                if c.mistake and not c.passed:
                    check_mistakes[(done.key, c.name, c.mistake)] += 1
    top_mistake: dict[tuple[str, str], tuple[str, int]] = {}
    for (key, name, mistake), n in check_mistakes.most_common():
        top_mistake.setdefault((key, name), (mistake, n))
    hardest = sorted((c for c in checks if c[3] and c[2] < c[3]), key=lambda c: (c[2] / c[3], c[0].index))
    p.append('<div class="row">')
    p.append(
        f'<section id="hardest"><h2>Hardest checks</h2><p class="dim">the {min(HARDEST, len(hardest))} '
        f"checks the fewest students pass, of {len(checks)}; pass rates count the students whose stage "
        "was graded (the columns missing, not implemented and error count the others)"
    )
    p.append("</p>" + _check_table(hardest[:HARDEST], top_mistake))
    if len(checks) > HARDEST:
        p.append(
            f"<details><summary>every check ({len(checks)}), in course order</summary>"
            + _check_table(checks, top_mistake)
            + "</details>"
        )
    p.append("</section>")

    p.append('<section id="mistakes"><h2>Common mistakes</h2>')
    if stats.mistakes:
        p.append(
            '<p class="dim">named by the graders when a known wrong variant explains a failed check; '
            "counted once per student and stage. Click one to list its students.</p>"
            '<table class="mistaketable"><tr><th>mistake</th><th>stage</th><th>students</th></tr>'
        )
        for key, mistake, n in stats.mistakes[:15]:
            p.append(
                f'<tr><td><button type="button" class="linkish" data-filter="{esc(mistake)}">{esc(mistake)}'
                f'</button></td><td>{esc(key)}</td><td class="n">{n} '
                f'<span class="dim">({round(100 * n / max(1, stats.n))} %)</span></td></tr>'
            )
        p.append("</table>")
    else:
        p.append('<p class="dim">no known mistake was recognised</p>')
    p.append("</section></div>")

    p.append(
        '<section id="grades"><h2>Grades</h2><div class="controls">'
        '<input type="search" id="filter" placeholder="filter: student, mistake or note" '
        'aria-label="filter students">'
        '<select id="show" aria-label="which students"><option value="all">everyone</option>'
        '<option value="partial">below full marks</option><option value="full">full marks</option>'
        '<option value="off">a stage not graded (missing, stub, error)</option>'
        '<option value="mistake">a named mistake</option></select>'
        f'<span id="count" class="dim">{plural(stats.n, "student")}</span></div>'
        '<p class="dim small">click a column to sort, a student to see their failed checks</p>'
        '<table id="gradetable"><thead><tr><th data-sort="text">student</th>'
        + "".join(
            f'<th data-sort="num" class="st" title="{esc(s.title)} ({s.points} pts)">{_stage_label(s)}</th>'
            for s in graded_stages
        )
        + f'<th data-sort="num">total<div class="dim small">of {_num(stats.max_score)}</div></th>'
        '<th data-sort="num">mistakes</th></tr></thead><tbody>'
    )
    templates = []
    matrices = Matrices()
    for i, g in enumerate(graded):
        mistakes = _mistakes_of(g)
        off = any(s.status in ("missing", "not implemented", "error") for s in g.result.stages)
        state = "full" if g.total >= g.result.max_score - FULL else "partial"
        search = " ".join([g.student, *mistakes, *g.notes]).lower()
        p.append(
            f'<tr data-i="{i}" data-state="{state}" data-off="{int(off)}" data-m="{int(bool(mistakes))}" '
            f'data-search="{esc(search)}"><td><button type="button" class="linkish open">{esc(g.student)}'
            "</button></td>"
            + "".join(_stage_cell(_stage(g.result, s.key), g.stage_score(s.key)) for s in graded_stages)
            + f'<td class="n total {_score_class(g.total, g.result.max_score)}" data-v="{_num(g.total)}">'
            f"{_num(g.total)}</td>"
            f'<td class="n" data-v="{len(mistakes)}" title="{esc("; ".join(mistakes))}">'
            f"{len(mistakes) or ''}</td></tr>"
        )
        link = (
            f' <a class="small" href="{esc(quote(g.student, safe=""))}/{FEEDBACK_FILE}">their feedback page</a>'
            if feedback_links
            else ""
        )
        section = student_section(course, g, matrices, stage_table=False, brief=True)
        templates.append(
            f'<template id="t{i}"><div class="student"><h3>{esc(g.student)} — '
            f"{_num(g.total)}/{_num(g.result.max_score)}{link}</h3>{section}</div></template>"
        )
    p.append("</tbody></table>")
    p.append("<noscript><p>sorting, filtering and the students' details need JavaScript</p></noscript>")
    p.append("".join(templates) + matrices.html() + "</section>")
    if meta.get("generated"):
        p.append(f'<p class="dim">generated {esc(meta["generated"])}</p>')
    p.append(_foot())
    return "\n".join(p)


def _bar(frac: float) -> str:
    return (
        f'<span class="barbg"><span class="bar" style="width:{round(100 * max(0.0, min(1.0, frac)))}%"></span></span>'
    )


def _check_table(rows, top_mistake: dict) -> str:
    out = [
        '<table class="checktable"><tr><th>stage: check</th><th>pass rate</th><th>most common named mistake</th></tr>'
    ]
    for s, name, passed, run in rows:
        frac = passed / run if run else 0.0
        top = top_mistake.get((s.key, name))
        out.append(
            f'<tr><td><span class="num" title="{esc(s.key)}: {esc(s.title)}">{s.number}</span> '
            f'<span class="dim">{esc(s.key)}:</span> {esc(name)}</td><td class="n">{_bar(frac)} {passed}/{run} '
            f'<span class="dim">({round(100 * frac)} %)</span></td>'
            f"<td>{esc(top[0]) + f' <span class=dim>({top[1]})</span>' if top else ''}</td></tr>"
        )
    out.append("</table>")
    return "".join(out)


def render_feedback(course: Course, g: Graded, *, hidden_detail: bool = False) -> str:
    """One student's page, to hand back. By default hidden checks are summarised (how many, their points) as
    results.json shows them before publication (``after_published``); ``hidden_detail`` shows them in full."""
    matrices = Matrices()
    section = student_section(course, g, matrices, hidden_detail=hidden_detail)
    return (
        _head(f"{course.title}: {g.student}") + f"<header><h1>{esc(g.student)} — {_num(g.total)}/"
        f'{_num(g.result.max_score)}</h1><p class="course">{esc(course.title)}</p></header>'
        + f'<div class="student">{section}</div>'
        + matrices.html()
        + _foot()
    )


__all__ = [
    "Graded",
    "gradescope_json",
    "grades_csv",
    "class_stats",
    "summary_table",
    "render_report",
    "render_feedback",
    "failure_summary",
    "heatmap_data",
    "histogram_svg",
    "split_points",
    "CheckResult",
]
