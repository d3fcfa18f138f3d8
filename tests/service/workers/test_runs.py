"""The grades page with grading workers: the receiving process lists runs by the ids and grades the workers send,
and a run's trajectory stays in its worker until the run's page is opened (served by a real aiohttp server)."""

from __future__ import annotations

import asyncio

from otelgrade.core.settings import UiSettings
from otelgrade.core.trajectory import ToolCall
from otelgrade.export.ui import RunStore
from otelgrade.service.workers import frames
from otelgrade.service.workers.runs import ListedRuns, runs_json
from tests.export.ui.test_pages import _get, grade, trace, trajectory


class WorkerStore:
    """What a worker holds for the page, answering as it does over its pipe (`runs_json`); counts the asks."""

    def __init__(self) -> None:
        self.store = RunStore(keep=10)
        self.asked: list[str] = []

    async def runs_of(self, trace_id: str) -> bytes:
        self.asked.append(trace_id)
        return runs_json(self.store.runs(trace_id))


def test_a_run_is_listed_by_its_ids_and_its_page_shows_what_its_worker_holds() -> None:
    worker = WorkerStore()
    listed = ListedRuns(keep=10, holders=lambda: [worker])
    run = trajectory(1, input="find me a flight", tool_calls=[ToolCall(name="search_flights", arguments="{}")])
    worker.store.add_run(run)
    up = frames.run_frame(run.trace_id, run.span_id)
    assert len(up) < 64  # the receiving process gets the run's ids, not the run
    listed.list_run(*frames.read_run(up[frames.HEADER.size :]))
    listed.write([grade(1, "fail", rationale="took too long")])

    settings = UiSettings()
    (index_status, index, _), (api_status, api, _) = asyncio.run(_get(listed, settings, "/", "/api/grades"))
    assert index_status == api_status == 200
    assert "took too long" in index and trace(1) in api
    assert worker.asked == []  # listing and filtering ask no worker

    ((status, page, _),) = asyncio.run(_get(listed, settings, f"/runs/{trace(1)}"))
    assert status == 200 and "find me a flight" in page and "search_flights" in page
    assert worker.asked == [trace(1)]
    asyncio.run(_get(listed, settings, f"/runs/{trace(1)}"))
    assert worker.asked == [trace(1)]  # once here, not asked again


def test_a_run_its_worker_no_longer_holds_shows_its_grades() -> None:
    worker = WorkerStore()
    listed = ListedRuns(keep=10, holders=lambda: [worker])
    listed.list_run(trace(2), f"{2:016x}")
    listed.write([grade(2, "fail", rationale="called <delete_account>")])
    ((status, page, _),) = asyncio.run(_get(listed, UiSettings(), f"/runs/{trace(2)}"))
    assert status == 200 and "called &lt;delete_account&gt;" in page
