"""Terminal output for learners: the progress table, each stage's failing checks, the hint that answers them."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .course import Course
from .progress import answerable, next_hint
from .results import CheckResult, SubmissionResult


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
        table.add_row(
            str(number),
            f"{stage.key}\n[dim]{escape(stage.title)}[/dim]",
            _bar(stage.score, stage.max_score),
            f"{round(stage.score, 2):g}/{stage.max_score:g}",
            status,
        )
    table.caption = f"total {round(result.score, 2):g}/{result.max_score:g}"
    return table


def failure_lines(check: CheckResult) -> list[str]:
    """A failing check as rich markup lines: its message, and the known mistake unless the message names it."""
    lines = ["  " + escape(check.message).replace("\n", "\n  ")] if check.message else []
    if check.mistake and check.mistake not in check.message:
        lines.append(f"  [magenta]known mistake:[/magenta] {escape(check.mistake)}")
    return lines


def print_check(
    console: Console,
    course: Course,
    result: SubmissionResult,
    hints_shown: dict[str, list[int]],
    *,
    verbose: bool = False,
    folder: str = "exercises",
) -> None:
    """The progress table, then for each stage that lost points its first failing check (every one when
    ``verbose``), the latest hint shown and how to get the next, and the command that reproduces random inputs."""
    console.print(progress_table(course, result))
    for stage in result.stages:
        failures = [c for c in stage.checks if not c.passed]
        if not failures or stage.status == "missing":
            continue
        spec = course.stage(stage.key)
        head = f"\n[bold]{spec.number}. {stage.key}[/bold]"
        if stage.status == "error":  # every check failed the same way: the file does not import
            console.print(f"{head} — {escape(spec.file)} could not be imported")
            console.print("  " + escape(stage.note or failures[0].message).replace("\n", "\n  "))
            failures = []
        elif stage.status == "not implemented":
            console.print(f"{head} — not implemented yet")
            console.print("  " + escape(failures[0].message).replace("\n", "\n  "))
            failures = []
        elif verbose:
            console.print(
                f"{head} — {len(failures)} failing checks:" if len(failures) > 1 else f"{head} — failing check:"
            )
            for failure in failures:
                console.print(f"  [bold]{escape(failure.name)}[/bold]")
                for line in failure_lines(failure):
                    console.print("  " + line)
        else:
            console.print(
                f"{head} — first failing check: [bold]{escape(failures[0].name)}[/bold]"
                + (f" [dim](and {len(failures) - 1} more: -v shows them)[/dim]" if len(failures) > 1 else "")
            )
            for line in failure_lines(failures[0]):
                console.print(line)
            failures = failures[:1]
        shown = hints_shown.get(stage.key, [])
        if shown:
            console.print(f"  [cyan]hint {shown[-1]}/{len(spec.hints)}:[/cyan] {escape(spec.hints[shown[-1] - 1])}")
        nxt = next_hint(spec, shown, answerable(stage))
        if nxt is not None:
            number, answers = nxt
            what = f"a hint for {escape(answers)}" if answers is not None else f"hint {number}/{len(spec.hints)}"
            console.print(f"  [dim]stuck? `python -m autograder hint {spec.number}` shows {what}[/dim]")
        if stage.seed is not None and any(f.hidden for f in failures):
            console.print(
                f"  [dim](random inputs: `python -m autograder check {escape(folder)} --stage {spec.number} "
                f"--seed {stage.seed}` draws them again)[/dim]",
                soft_wrap=True,
            )
    done = sum(s.full_marks for s in result.stages)
    if len(result.stages) < len(course.stages):
        names = ", ".join(str(course.stage(s.key).number) for s in result.stages)
        if done == len(result.stages):
            console.print(
                f"\n[green bold]Stage {names} {'has' if len(result.stages) == 1 else 'have'} full marks."
                "[/green bold] [dim](`check` without --stage checks every stage)[/dim]"
            )
    elif done == len(result.stages):
        console.print("\n[green bold]Every stage has full marks.[/green bold]")
    if done < len(result.stages):
        nxt_stage = next(s for s in result.stages if not s.full_marks)
        console.print(
            f"\n{done}/{len(result.stages)} stages done. Next up: [bold]{nxt_stage.key}[/bold] "
            f"({escape(nxt_stage.title)})."
        )
