"""Terminal output for learners: the progress table, the first failure of each stage, the next hint."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .course import Course
from .results import SubmissionResult


def _bar(score: float, max_score: float, width: int = 12) -> str:
    filled = int(round(width * (score / max_score))) if max_score else 0
    return "█" * filled + "░" * (width - filled)


def progress_table(course: Course, result: SubmissionResult) -> Table:
    table = Table(title=f"{course.title}: {result.student}", title_justify="left", show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("stage")
    table.add_column("progress")
    table.add_column("score", justify="right")
    table.add_column("status")
    for stage in result.stages:
        number = course.stage(stage.key).number
        if stage.full_marks:
            status = "[green]done[/green]"
        elif stage.status == "missing":
            status = f"[dim]{escape(stage.note)}[/dim]"
        elif stage.status == "not implemented":
            status = "[yellow]not implemented yet[/yellow]"
        elif stage.status == "error":
            status = "[red]does not import[/red]"
        else:
            passed = sum(c.passed for c in stage.checks)
            status = f"[red]{passed}/{len(stage.checks)} checks pass[/red]"
        table.add_row(str(number), f"{stage.key}\n[dim]{escape(stage.title)}[/dim]", _bar(stage.score, stage.max_score),
                      f"{round(stage.score, 2):g}/{stage.max_score:g}", status)
    table.caption = f"total {round(result.score, 2):g}/{result.max_score:g}"
    return table


def print_check(console: Console, course: Course, result: SubmissionResult, hints_shown: dict[str, int]) -> None:
    console.print(progress_table(course, result))
    for stage in result.stages:
        failure = stage.first_failure
        if failure is None or stage.status == "missing":
            continue
        console.print(f"\n[bold]{course.stage(stage.key).number}. {stage.key}[/bold] — first failing check: "
                      f"[bold]{escape(failure.name)}[/bold]")
        console.print("  " + escape(failure.message).replace("\n", "\n  "))
        if failure.mistake and failure.mistake not in failure.message:
            console.print(f"  [magenta]known mistake:[/magenta] {escape(failure.mistake)}")
        hints = course.stage(stage.key).hints
        shown = hints_shown.get(stage.key, 0)
        if shown:
            console.print(f"  [cyan]hint {shown}/{len(hints)}:[/cyan] {escape(hints[shown - 1])}")
        if shown < len(hints):
            console.print(f"  [dim]stuck? `python -m autograder hint {stage.key}` shows hint {shown + 1}/{len(hints)}[/dim]")
        if stage.seed is not None and failure.hidden:
            console.print(f"  [dim](random inputs, seed {stage.seed}: rerun with --seed to reproduce)[/dim]")
    done = sum(s.full_marks for s in result.stages)
    if done == len(result.stages):
        console.print("\n[green bold]Every stage has full marks.[/green bold]")
    else:
        nxt = next(s for s in result.stages if not s.full_marks)
        console.print(f"\n{done}/{len(result.stages)} stages done. Next up: [bold]{nxt.key}[/bold] "
                      f"({escape(nxt.title)}).")
