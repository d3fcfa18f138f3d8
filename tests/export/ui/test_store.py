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


def test_a_run_that_fits_is_kept_as_it_is_and_one_that_does_not_as_before() -> None:
    """The page's copy of a run within its bounds holds the run's own texts (nothing is rebuilt); past a bound
    (a text, the run's characters, a list) it is the cut copy."""
    fits = run(output="done", attributes={"k": {"nested": ["a" * 100]}})
    kept = slim(fits)
    assert kept.messages == fits.messages and kept.attributes == fits.attributes and kept.output == "done"
    assert all(a is b for a, b in zip(kept.messages, fits.messages, strict=True)), "kept as it is, not rebuilt"
    assert all(not c.input_messages and not c.output_messages for c in kept.llm_calls)
    for past in (
        run(output="x" * 3000),
        run(attributes={f"k{i}": "y" * 1900 for i in range(40)}),
        run(attributes={"list": list(range(RUN_ITEMS + 1))}),
    ):
        assert slim(past) != past.model_copy(update={"llm_calls": slim(past).llm_calls})
