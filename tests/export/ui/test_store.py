"""What the grades page holds: runs by count (failing ones kept longest), each cut to a bounded size, and grades
filtered as the page's query asks."""

from __future__ import annotations

import pytest

from otelgrade.core.results import Grade
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.export.ui.store import RUN_CHARS, RUN_ITEMS, GradeQuery, RunStore, select, slim
from tests.trajectories import run


def grade(trace: str, outcome: str, time_unix: float = 0.0, suite: str = "booking") -> Grade:
    return Grade(trace, "b" * 16, suite, "safe", None, outcome == "pass", outcome, "", time_unix=time_unix)  # type: ignore[arg-type]


def held(trace: str) -> Trajectory:
    return run().model_copy(update={"trace_id": trace})


def test_a_failing_run_outlives_passing_ones_when_room_is_needed() -> None:
    store = RunStore(keep=2)
    store.add_run(held("1" * 32))
    store.write([grade("1" * 32, "fail")])
    for trace in ("2" * 32, "3" * 32):
        store.add_run(held(trace))
        store.write([grade(trace, "pass")])
    assert len(store) == 2
    assert store.runs("1" * 32), "the failing run is still there"
    assert not store.runs("2" * 32)


def test_a_huge_run_is_cut_to_the_pages_bound() -> None:
    big = run(
        output="x" * 10 * RUN_CHARS,
        tool_calls=[ToolCall(name="search", result="y" * 5000) for _ in range(3 * RUN_ITEMS)],
    )
    cut = slim(big)
    assert len(cut.tool_calls) == RUN_ITEMS + 1  # the first and last ones, and what is not kept between
    assert cut.tool_calls[RUN_ITEMS // 2].name == f"[{3 * RUN_ITEMS - RUN_ITEMS} tool call(s) not kept]"
    assert len(cut.model_dump_json()) < 2 * RUN_CHARS


def test_failing_grades_come_first_newest_first_and_filters_combine() -> None:
    grades = [grade("1" * 32, "pass", 3), grade("2" * 32, "fail", 1), grade("3" * 32, "fail", 2, suite="other")]
    listed, total = select(grades, GradeQuery.from_params({}))
    assert [g.trace_id[0] for g in listed] == ["3", "2", "1"] and total == 3
    listed, total = select(grades, GradeQuery.from_params({"outcome": "fail", "suite": "booking"}))
    assert [g.trace_id[0] for g in listed] == ["2"] and total == 1


@pytest.mark.parametrize(("params", "named"), [({"outcome": "bad"}, "outcome"), ({"colour": "red"}, "colour")])
def test_a_bad_query_names_the_parameter(params: dict[str, str], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        GradeQuery.from_params(params)
