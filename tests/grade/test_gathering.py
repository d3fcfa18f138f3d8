"""A run's grades gathered into one notice: at once without judges, when the last judge answers, or at the deadline
with what is in so far (the late answers follow as part 2)."""

from __future__ import annotations

from concurrent.futures import Future

from otelgrade.core.results import Grade
from otelgrade.grade.gathering import Gathering, GradedRun
from tests.trajectories import run


def grade(grader: str, outcome: str = "pass") -> Grade:
    return Grade("a" * 32, "b" * 16, "suite", grader, 1.0, outcome == "pass", outcome, "")  # type: ignore[arg-type]


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def gathered(wait: float = 5.0) -> tuple[Gathering, list[GradedRun], Clock]:
    notices: list[GradedRun] = []
    clock = Clock()
    return Gathering(notices.append, wait, clock), notices, clock


def test_code_grades_alone_are_handed_on_at_once() -> None:
    gathering, notices, _ = gathered()
    gathering.add(run(), [grade("safe")], [], [])
    assert [[g.grader for g in n.grades] for n in notices] == [["safe"]]


def test_the_notice_waits_for_the_last_judge() -> None:
    gathering, notices, _ = gathered()
    judge: Future[Grade] = Future()
    gathering.add(run(), [grade("safe")], [judge], ["suite/helpful"])
    assert notices == []
    judge.set_result(grade("helpful", "fail"))
    assert [g.grader for g in notices[0].grades] == ["safe", "helpful"]
    assert notices[0].part == 1 and notices[0].waiting == ()


def test_at_the_deadline_the_notice_names_what_is_awaited_and_the_late_answer_follows() -> None:
    gathering, notices, clock = gathered(wait=5.0)
    judge: Future[Grade] = Future()
    gathering.add(run(), [grade("safe")], [judge], ["suite/helpful"])
    clock.now = 6.0
    gathering.expire()
    assert notices[0].waiting == ("suite/helpful",)
    judge.set_result(grade("helpful"))
    assert (notices[1].part, [g.grader for g in notices[1].grades]) == (2, ["helpful"])
    assert notices[0].key != notices[1].key
