"""Control client for capture scripts (standard library only, importable from any framework's venv).

    from client import Scenario
    with Scenario("happy", replies=[tool("search_flights", {...}), text("Booked.")]) as s:
        s.run(agent_name="travel_agent", input="Book me ...")
        ... the tools call s.tool(name, arguments, result=..., error=...) as they really run ...
        s.finish(output=answer, status="ok", llm_calls=3)
        flush()          # the script's own provider.force_flush(), before the scenario closes

What the scripts record is the ground truth: what the tools really received and returned and what the
framework really answered, never what the spans say.
"""

from __future__ import annotations

import json
import os
import runpy
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HARNESS = os.environ.get("CAPTURE_HARNESS_URL", "http://127.0.0.1:0")


def text(content: str, **extra: Any) -> dict[str, Any]:
    return {"text": content, **extra}


def tool(name: str, arguments: dict[str, Any] | str, **extra: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}], **extra}


def tools(*calls: tuple[str, dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """One model response asking for several tool calls at once (parallel calls)."""
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in calls], **extra}


def failure(status: int = 500, message: str = "scripted model failure") -> dict[str, Any]:
    return {"error": status, "message": message}


def _post(path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        HARNESS + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def each(scenarios: dict[str, tuple[str, list[dict[str, Any]]]], **spec: Any) -> Iterator[tuple[Scenario, str]]:
    """Open each scenario of {name: (request, replies)} in turn and hand the script its one request; the
    scenario closes when the script asks for the next one."""
    for name, (request, replies) in scenarios.items():
        with Scenario(name, replies, **spec) as scenario:
            yield scenario, request


class Scenario:
    """One captured scenario: scripted replies in, ground truth of every run out."""

    def __init__(self, name: str, replies: list[dict[str, Any]], **spec: Any) -> None:
        self.name = name
        self.replies = replies
        self.runs: list[dict[str, Any]] = []
        self.spec = spec  # scenario-level ground truth beside the runs: nested_runs_allowed, note

    def __enter__(self) -> Scenario:
        _post("/_harness/begin", {"scenario": self.name, "replies": self.replies})
        return self

    def __exit__(self, *exc: object) -> None:
        answer = _post("/_harness/end", {"runs": self.runs, **self.spec})
        print(f"   {self.name}: {answer.get('requests')} OTLP request(s), traces {answer.get('trace_ids')}")

    def run(self, agent_name: str, input: str) -> dict[str, Any]:
        """Start the ground truth of one agent run; later tool()/finish() calls apply to it."""
        self.runs.append({"agent_name": agent_name, "input": input, "tool_calls": []})
        return self.runs[-1]

    def tool(self, name: str, arguments: Any, result: str | None = None, error: bool = False) -> None:
        self.runs[-1]["tool_calls"].append(
            {"name": name, "arguments": arguments, "result": None if error else result, "error": error}
        )

    def ran(self, name: str, arguments: dict[str, Any], result: str = "", error: str | None = None) -> str:
        """Record one real execution of a tool and answer as the tool does: its result, or its failure
        raised as RuntimeError(error)."""
        self.tool(name, arguments, result, error=error is not None)
        if error is not None:
            raise RuntimeError(error)
        return result

    def finish(
        self, output: str | None, status: str = "ok", llm_calls: int = 0, lacks: list[str] | None = None
    ) -> None:
        run = self.runs[-1]
        run.update(output=output, status=status, llm_calls=llm_calls)
        if lacks:
            run["lacks"] = sorted(lacks)


def run_capture(source: str, **settings: Any) -> None:
    """Run `../<source>/capture.py` with `settings` as its globals (INSTRUMENTATION, LACKS, ...): the same
    requests and ground truth, traced another way."""
    main = Path(__file__).resolve().parent / source / "capture.py"
    runpy.run_path(str(main), init_globals=settings, run_name="__main__")


def run_with_default_settings(script: str) -> None:
    """From `<source>-default/capture.py` (`script`), run `<source>/capture.py` with DEFAULT_SETTINGS=True: that
    script then leaves the instrumentation's defaults alone and records in `lacks` what the trace cannot carry."""
    folder = Path(script).resolve().parent
    main = folder.parent / folder.name.removesuffix("-default") / "capture.py"
    runpy.run_path(str(main), init_globals={"DEFAULT_SETTINGS": True}, run_name="__main__")
