"""What the class grader writes for people: grades.csv, Gradescope's results.json, report.html, the summary.

Everything here reads results only (``SubmissionResult`` + the notes stored beside it); no learner code runs and
nothing is imported from the graders. Every string that may come from a learner (student ids are folder names,
messages quote their errors and values, file names are theirs) is escaped before it reaches HTML, and the report
loads nothing from outside itself: one self-contained file with inline CSS and SVG, no scripts.
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections import Counter
from dataclasses import dataclass, field

from ..course import Course
from ..results import CheckResult, StageResult, SubmissionResult


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


def gradescope_json(result: SubmissionResult, *, notes: list[str] | None = None) -> dict:
    """The result in Gradescope's autograder format (results.json): ``score``, ``tests[]`` with ``name`` =
    ``"<stage key>: <check>"``, ``score``, ``max_score``, ``status``, ``output`` (the teaching message) and
    ``visibility``; the seeds of the hidden inputs in ``extra_data``. Public checks are visible at once, hidden
    ones after the grades are published."""
    tests = []
    for s_index, stage in enumerate(result.stages, 1):
        for c_index, check in enumerate(stage.checks, 1):
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
            tests.append({
                "name": f"{stage.key}: {check.name}",
                "number": f"{s_index}.{c_index}",
                "score": round(check.points, 4),
                "max_score": round(check.max_points, 4),
                "status": "passed" if check.passed else "failed",
                "output": output,
                "visibility": "after_published" if check.hidden else "visible",
                "extra_data": extra,
            })
    lines = [f"{stage.key}: {_num(stage.score)}/{_num(stage.max_score)}" + (f" ({stage.note})" if stage.note else "")
             for stage in result.stages]
    if notes:
        lines += ["", *notes]
    return {
        "score": round(result.score, 4),
        "output": "\n".join(lines),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"seeds": {s.key: s.seed for s in result.stages}, "isolation": result.isolation,
                       "max_score": result.max_score},
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
    check_rates: dict[str, list[tuple[str, int, int]]]  # stage → [(check, passed, run)]
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
                counts[0] += c.passed
                counts[1] += 1
                if c.mistake and c.mistake not in seen:
                    seen.add(c.mistake)
                    mistakes[(key, c.mistake)] += 1
    return ClassStats(
        n=len(graded), max_score=max_score, totals=totals, stage_means=means, stage_full=full, stage_status=status,
        check_rates={k: [(name, p, r) for name, (p, r) in v.items()] for k, v in rates.items()},
        mistakes=[(k, m, n) for (k, m), n in mistakes.most_common()])


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
        table.add_row(str(stage.number), stage.key, f"{_num(stats.stage_means[stage.key])}/{stage.points}",
                      f"{stats.stage_full[stage.key]}/{stats.n}", str(off) if off else "",
                      f"{escape(top[0])} ({top[1]})" if top else "")
    if stats.totals:
        mean = sum(stats.totals) / len(stats.totals)
        table.caption = (f"total: mean {_num(mean)}/{_num(stats.max_score)}, median {_num(_median(stats.totals))}, "
                         f"{sum(t >= stats.max_score - FULL for t in stats.totals)} with full marks")
    return table


def _median(values: list[float]) -> float:
    v = sorted(values)
    if not v:
        return 0.0
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


# ───────────────────────────── HTML ─────────────────────────────


def esc(text) -> str:
    return html.escape(str(text), quote=True)


CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:16px;
color:#1d2330;background:#fff}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde}
h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #dde;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f3f4f8}
td.n{text-align:right;font-variant-numeric:tabular-nums}.dim{color:#778}.ok{color:#176c2c}.bad{color:#b3261e}
.full{background:#e3f4e6}.part{background:#fff4d6}.zero{background:#fbe3e1}.none{background:#f2f2f2}
.bar{display:inline-block;height:10px;background:#4a72c4;vertical-align:middle}
.barbg{display:inline-block;width:120px;height:10px;background:#e6e8f0;vertical-align:middle}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7fa;border:1px solid #e4e4ee;padding:6px 8px;
margin:4px 0;font-size:12.5px}details{border:1px solid #dde;border-radius:6px;margin:8px 0;padding:4px 10px}
summary{cursor:pointer;font-weight:600}.tag{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;
background:#eef;margin-left:6px}.mistake{background:#f6e7ff}.figs{display:flex;gap:18px;flex-wrap:wrap}
.fig{font-size:12px}.fig svg{display:block;margin-top:2px}
"""


def _score_class(score: float, max_score: float) -> str:
    if max_score <= 0:
        return "none"
    if score >= max_score - FULL:
        return "full"
    return "zero" if score <= FULL else "part"


def histogram_svg(totals: list[float], max_score: float, bins: int = 10) -> str:
    counts = [0] * bins
    for t in totals:
        frac = t / max_score if max_score else 0.0
        counts[min(bins - 1, max(0, int(frac * bins)))] += 1
    top = max(counts) or 1
    bw, h, pad = 44, 120, 18
    width = bins * bw + 2 * pad
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h + 40}" role="img" '
             f'aria-label="score distribution">']
    for i, n in enumerate(counts):
        bh = int(round(h * n / top))
        x = pad + i * bw
        lo, hi = i * 100 // bins, (i + 1) * 100 // bins
        parts.append(f'<rect x="{x + 3}" y="{10 + h - bh}" width="{bw - 6}" height="{bh}" fill="#4a72c4">'
                     f'<title>{lo}–{hi}%: {n}</title></rect>')
        if n:
            parts.append(f'<text x="{x + bw / 2}" y="{6 + h - bh}" font-size="11" text-anchor="middle">{n}</text>')
        parts.append(f'<text x="{x + bw / 2}" y="{h + 26}" font-size="10" text-anchor="middle">{lo}–{hi}%</text>')
    parts.append(f'<line x1="{pad}" y1="{10 + h}" x2="{width - pad}" y2="{10 + h}" stroke="#889"/></svg>')
    return "".join(parts)


def _finite(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _color(v: float | None, raw, lo: float, hi: float) -> str:
    if v is None:
        return {"inf": "#3b0d0d", "-inf": "#0d1f3b"}.get(str(raw), "#9a9a9a")  # nan: grey
    if lo >= 0:
        f = 0.0 if hi <= 0 else min(1.0, max(0.0, v / hi))
        r, g, b = int(255 - 180 * f), int(255 - 140 * f), int(255 - 50 * f)
    else:
        m = max(abs(lo), abs(hi)) or 1.0
        f = min(1.0, abs(v) / m)
        r, g, b = (int(255 - 40 * f), int(255 - 160 * f), int(255 - 160 * f)) if v < 0 else \
            (int(255 - 180 * f), int(255 - 140 * f), int(255 - 50 * f))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(matrix, *, lo: float, hi: float, against=None, cell: int = 16) -> str:
    """One matrix as an SVG grid; cells that differ from ``against`` get a red outline. Hover shows values."""
    rows = [r for r in matrix if isinstance(r, list)][:64]
    n_rows = len(rows)
    n_cols = max((len(r) for r in rows), default=0)
    n_cols = min(n_cols, 64)
    w, h = n_cols * cell + 1, n_rows * cell + 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">']
    for i, row in enumerate(rows):
        for j, raw in enumerate(row[:n_cols]):
            v = _finite(raw)
            label = f"{v:.4g}" if v is not None else str(raw)[:12]
            stroke = ""
            if against is not None:
                try:
                    other = against[i][j]
                except (IndexError, TypeError, KeyError):
                    other = None
                ov = _finite(other)
                differs = (v is None) != (ov is None) or (v is not None and ov is not None
                                                          and abs(v - ov) > 1e-3 + 1e-3 * abs(ov))
                if v is None and ov is None:
                    differs = str(raw) != str(other)
                if differs:
                    stroke = ' stroke="#d4141a" stroke-width="2"'
            parts.append(f'<rect x="{j * cell + 0.5}" y="{i * cell + 0.5}" width="{cell}" height="{cell}" '
                         f'fill="{_color(v, raw, lo, hi)}"{stroke}><title>[{i}, {j}] {esc(label)}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def figures_html(figures: dict | None) -> str:
    if not isinstance(figures, dict):
        return ""
    out = []
    for fig in (figures.get("heatmaps") or [])[:4]:
        if not isinstance(fig, dict):
            continue
        exp, got = fig.get("expected"), fig.get("got")
        if not isinstance(exp, list) or not isinstance(got, list):
            continue
        values = [v for m in (exp, got) for row in m if isinstance(row, list) for x in row
                  if (v := _finite(x)) is not None]
        lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
        out.append('<div class="figs">'
                   f'<div class="fig">expected<br>{heatmap_svg(exp, lo=min(lo, 0.0), hi=hi)}</div>'
                   f'<div class="fig">submitted (red outline: differs)<br>'
                   f'{heatmap_svg(got, lo=min(lo, 0.0), hi=hi, against=exp)}</div></div>'
                   f'<div class="dim">{esc(fig.get("title", ""))}</div>')
    return "".join(out)


def _stage_cell(stage: StageResult | None, score: float | None = None) -> str:
    if stage is None:
        return '<td class="none n dim">–</td>'
    score = stage.score if score is None else score
    cls = _score_class(score, stage.max_score)
    title = stage.note or stage.status
    return f'<td class="{cls} n" title="{esc(title)}">{_num(score)}</td>'


def student_section(course: Course, g: Graded, anchor: str, *, open_: bool = False) -> str:
    r = g.result
    parts = [f'<details id="{anchor}"{" open" if open_ else ""}><summary>{esc(r.student)} — '
             f'{_num(g.total)}/{_num(r.max_score)}</summary>']
    if g.notes:
        parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in g.notes) + "</ul>")
    parts.append('<table><tr><th>#</th><th>stage</th><th>score</th><th>status</th><th>seed</th></tr>')
    for stage in r.stages:
        number = course.stage(stage.key).number if stage.key in course.keys else ""
        status = "full marks" if stage.full_marks else (stage.note or stage.status)
        if stage.status == "graded" and not stage.full_marks:
            status = f"{sum(c.passed for c in stage.checks)}/{len(stage.checks)} checks pass"
        parts.append(f'<tr><td class="n">{number}</td><td>{esc(stage.key)}</td>{_stage_cell(stage, g.stage_score(stage.key))}'
                     f'<td>{esc(status)}</td><td class="n dim">{esc(stage.seed if stage.seed is not None else "")}'
                     f'</td></tr>')
    parts.append("</table>")
    for stage in r.stages:
        failed = [c for c in stage.checks if not c.passed]
        if not failed:
            continue
        parts.append(f"<h3>{esc(stage.key)}: {len(failed)} failed check{'s' if len(failed) > 1 else ''}</h3>")
        if stage.status in ("missing", "not implemented", "error") and stage.note:
            parts.append(f"<pre>{esc(stage.note)}</pre>")
            failed = [c for c in failed if c.message != stage.note][:3]
        seen_messages = set()
        for c in failed:
            tags = ""
            if c.mistake:
                tags += f'<span class="tag mistake">{esc(c.mistake)}</span>'
            if c.hidden:
                tags += f'<span class="tag">hidden, seed {esc(stage.seed)}</span>'
            msg = c.message if c.message not in seen_messages else "(same message as above)"
            seen_messages.add(c.message)
            parts.append(f'<div><b class="bad">✗</b> {esc(c.name)} <span class="dim">'
                         f'({_num(c.max_points)} pts)</span>{tags}<pre>{esc(msg)}</pre>{figures_html(c.figures)}</div>')
    if r.isolation:
        parts.append(f'<p class="dim">isolation: {esc(r.isolation)}</p>')
    parts.append("</details>")
    return "".join(parts)


def render_report(course: Course, graded: list[Graded], *, meta: dict | None = None) -> str:
    """The whole class on one page: at a glance (distribution, stages, checks, mistakes), then every student."""
    meta = meta or {}
    stats = class_stats(course, graded)
    graded_stages = [s for s in course.stages if s.key in stats.stage_means]
    p = [f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
         f'<meta name="viewport" content="width=device-width,initial-scale=1">'
         f'<title>{esc(course.title)}: class report</title><style>{CSS}</style></head><body>',
         f"<h1>{esc(course.title)} — class report</h1>"]
    facts = [plural(stats.n, "submission")]
    if stats.totals:
        mean = sum(stats.totals) / len(stats.totals)
        facts.append(f"mean {_num(mean)}/{_num(stats.max_score)}, median {_num(_median(stats.totals))}")
    for k in ("seed", "isolation", "devices"):
        if meta.get(k) not in (None, ""):
            facts.append(f"{k}: {meta[k]}")
    p.append(f'<p class="dim">{esc(" · ".join(facts))}</p>')
    ungraded = [s.key for s in course.stages if s.key not in stats.stage_means]
    if ungraded:
        p.append(f'<p class="dim">stages without graders (not scored): {esc(", ".join(ungraded))}</p>')

    p.append("<h2>Score distribution</h2>")
    p.append(histogram_svg(stats.totals, stats.max_score) if stats.totals else "<p>no submissions</p>")

    p.append("<h2>Stages</h2><table><tr><th>#</th><th>stage</th><th>mean</th><th>full marks</th>"
             "<th>missing</th><th>not implemented</th><th>does not import</th></tr>")
    for s in graded_stages:
        st = stats.stage_status[s.key]
        p.append(f'<tr><td class="n">{s.number}</td><td>{esc(s.key)}<br><span class="dim">{esc(s.title)}</span></td>'
                 f'<td class="n">{_num(stats.stage_means[s.key])}/{s.points}</td>'
                 f'<td class="n">{stats.stage_full[s.key]}/{stats.n}</td><td class="n">{st.get("missing", 0)}</td>'
                 f'<td class="n">{st.get("not implemented", 0)}</td><td class="n">{st.get("error", 0)}</td></tr>')
    p.append("</table>")

    p.append("<h2>Most common named mistakes</h2>")
    if stats.mistakes:
        p.append("<table><tr><th>mistake</th><th>stage</th><th>students</th></tr>")
        for key, mistake, n in stats.mistakes[:15]:
            p.append(f'<tr><td>{esc(mistake)}</td><td>{esc(key)}</td><td class="n">{n}</td></tr>')
        p.append("</table>")
    else:
        p.append('<p class="dim">no known mistake was recognised</p>')

    p.append("<h2>Pass rate per check</h2><table><tr><th>stage</th><th>check</th><th>passed</th><th></th></tr>")
    for s in graded_stages:
        for name, passed, run in stats.check_rates.get(s.key, []):
            pct = passed / run if run else 0.0
            p.append(f'<tr><td>{esc(s.key)}</td><td>{esc(name)}</td><td class="n">{passed}/{run}</td>'
                     f'<td><span class="barbg"><span class="bar" style="width:{int(120 * pct)}px"></span></span>'
                     f'</td></tr>')
    p.append("</table>")

    p.append("<h2>Grades</h2><table><tr><th>student</th>"
             + "".join(f'<th title="{esc(s.title)}">{s.number}</th>' for s in graded_stages)
             + "<th>total</th></tr>")
    anchors = {}
    for i, g in enumerate(graded):
        anchors[i] = f"s{i}"
        p.append(f'<tr><td><a href="#s{i}">{esc(g.student)}</a></td>'
                 + "".join(_stage_cell(_stage(g.result, s.key), g.stage_score(s.key)) for s in graded_stages)
                 + f'<td class="n {_score_class(g.total, g.result.max_score)}">{_num(g.total)}</td></tr>')
    p.append("</table>")

    p.append("<h2>Students</h2>")
    for i, g in enumerate(graded):
        p.append(student_section(course, g, anchors[i]))
    if meta.get("generated"):
        p.append(f'<p class="dim">generated {esc(meta["generated"])}</p>')
    p.append("</body></html>")
    return "\n".join(p)


def render_feedback(course: Course, g: Graded) -> str:
    """One student's page (to hand back): the same section as in the class report, open."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(course.title)}: '
            f'{esc(g.student)}</title><style>{CSS}</style></head><body><h1>{esc(course.title)}</h1>'
            + student_section(course, g, "student", open_=True) + "</body></html>")


__all__ = ["Graded", "gradescope_json", "grades_csv", "class_stats", "summary_table", "render_report",
           "render_feedback", "heatmap_svg", "histogram_svg", "CheckResult"]
