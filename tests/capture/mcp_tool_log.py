"""The client side of `hotel_mcp_server.py`'s ground-truth log: the calls the server's tools really ran (one JSON
line each: name, arguments, result, error), read into a run's ground truth as they arrive; and the scenario loop
of the capture scripts whose tools are on that server."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from client import Scenario


class ToolLog:
    """A fresh log file (give the server its path as CAPTURE_TOOL_LOG) and what of it was read so far."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkstemp(prefix="mcp-tools-", suffix=".jsonl")[1])
        self.read = 0

    def drain(self, run: dict[str, Any]) -> None:
        """Append the calls logged since the last drain to the run's tool calls."""
        lines = self.path.read_text().splitlines()
        run["tool_calls"] += [json.loads(line) for line in lines[self.read :]]
        self.read = len(lines)

    async def around(
        self, run: dict[str, Any], name: str, arguments: dict[str, Any], call: Callable[[], Awaitable[str]]
    ) -> str:
        """Run a tool of the client's own that calls the server's tools (an agent run inside it): its call is
        recorded where it started, before the calls made within it, with its answer, or failed if it raised."""
        self.drain(run)
        entry: dict[str, Any] = {"name": name, "arguments": arguments, "result": None, "error": False}
        run["tool_calls"].append(entry)
        try:
            entry["result"] = await call()
        except Exception:
            entry["error"] = True
            raise
        finally:
            self.drain(run)
        return str(entry["result"])


Answer = Callable[[dict[str, Any], ToolLog, str], Awaitable[str]]


async def serve_all(
    scenarios: dict[str, tuple[str, list[dict[str, Any]]]],
    entry_agent: str,
    answer: Answer,
    span: Callable[[str], AbstractContextManager[Any]],
    flush: Callable[[], Any],
) -> None:
    """Capture each scenario: one user request, served in a `handle_request` span by `answer(run, log, request)`
    (the framework's answer, raising when the request failed), whose run counts its model calls into
    run["llm_calls"] and whose server logs its tools' calls to `log`."""
    for name, (request, replies) in scenarios.items():
        with Scenario(name, replies, nested_runs_allowed=True) as s:
            with span("handle_request"):
                run = s.run(entry_agent, request)
                run.update(handoffs=[], nested_runs_allowed=True, llm_calls=0)
                log = ToolLog()
                output: str | None
                try:
                    output, status = await answer(run, log, request), "ok"
                except Exception as exc:
                    print(f"   run failed as scripted: {type(exc).__name__}: {exc}")
                    output, status = None, "error"
                log.drain(run)
                log.path.unlink()
                s.finish(output, status, run["llm_calls"])
            flush()
