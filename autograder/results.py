"""Results: what the runner produces and every report reads. Plain data, JSON in and out."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class CheckResult:
    name: str
    passed: bool
    points: float  # earned
    max_points: float
    message: str = ""
    mistake: str | None = None
    hidden: bool = False
    device: str | None = None
    # attention weights (expected vs got) for reports, when a check chose to attach them
    figures: dict | None = None
    # why the learner's code gave no answer, when it gave none: "timeout" (it ran out of time) or "crash" (its
    # process died or sent back garbage); counted by the class grader's closing summary
    failure: str | None = None

    def to_json(self) -> dict:
        # 10 decimals: a stage's score is the sum of its checks' points, read back from this record (a stage
        # of checks worth 10/7 each must add up to 10, not 10.0001)
        data = {
            "name": self.name,
            "passed": self.passed,
            "points": round(self.points, 10),
            "max_points": round(self.max_points, 10),
            "message": self.message,
            "mistake": self.mistake,
            "hidden": self.hidden,
            "device": self.device,
        }
        if self.figures:
            data["figures"] = self.figures
        if self.failure:
            data["failure"] = self.failure
        return data


@dataclass
class StageResult:
    key: str
    title: str
    max_score: float
    checks: list[CheckResult] = field(default_factory=list)
    seed: int | None = None
    status: str = "graded"  # graded | missing | not implemented | error
    note: str = ""

    @property
    def score(self) -> float:
        return round(sum(c.points for c in self.checks), 4)

    @property
    def full_marks(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def first_failure(self) -> CheckResult | None:
        return next((c for c in self.checks if not c.passed), None)

    def to_json(self) -> dict:
        return {
            "key": self.key,
            "title": self.title,
            "score": self.score,
            "max_score": self.max_score,
            "status": self.status,
            "seed": self.seed,
            "note": self.note,
            "checks": [c.to_json() for c in self.checks],
        }


@dataclass
class SubmissionResult:
    student: str
    stages: list[StageResult]
    isolation: str = ""
    fingerprint: str = ""

    @property
    def score(self) -> float:
        return round(sum(s.score for s in self.stages), 4)

    @property
    def max_score(self) -> float:
        return round(sum(s.max_score for s in self.stages), 4)

    def stage(self, key: str) -> StageResult:
        return next(s for s in self.stages if s.key == key)

    def to_json(self) -> dict:
        return {
            "student": self.student,
            "score": self.score,
            "max_score": self.max_score,
            "isolation": self.isolation,
            "fingerprint": self.fingerprint,
            "stages": [s.to_json() for s in self.stages],
        }

    @classmethod
    def from_json(cls, data: dict) -> "SubmissionResult":
        stages = []
        for s in data["stages"]:
            checks = [
                CheckResult(
                    **{
                        k: c.get(k)
                        for k in (
                            "name",
                            "passed",
                            "points",
                            "max_points",
                            "message",
                            "mistake",
                            "hidden",
                            "device",
                            "figures",
                            "failure",
                        )
                    }
                )
                for c in s["checks"]
            ]
            stages.append(
                StageResult(
                    key=s["key"],
                    title=s.get("title", s["key"]),
                    max_score=s["max_score"],
                    checks=checks,
                    seed=s.get("seed"),
                    status=s.get("status", "graded"),
                    note=s.get("note", ""),
                )
            )
        return cls(
            student=data["student"],
            stages=stages,
            isolation=data.get("isolation", ""),
            fingerprint=data.get("fingerprint", ""),
        )


def check_json(result: SubmissionResult) -> dict:
    """The ``check --json`` document: {"score", "max_score", "stages": [{"key", "score", "max_score",
    "checks": [{"name", "passed", "points", "message"}]}]}."""
    return {
        "score": result.score,
        "max_score": result.max_score,
        "stages": [
            {
                "key": s.key,
                "title": s.title,
                "score": s.score,
                "max_score": s.max_score,
                "status": s.status,
                "seed": s.seed,
                "checks": [
                    {
                        "name": c.name,
                        "passed": c.passed,
                        "points": round(c.points, 4),
                        "max_points": round(c.max_points, 4),
                        "message": c.message,
                        "mistake": c.mistake,
                    }
                    for c in s.checks
                ],
            }
            for s in result.stages
        ],
    }


__all__ = ["CheckResult", "StageResult", "SubmissionResult", "check_json", "asdict"]
