"""The grades page on the metrics endpoint: `/` recent grades with filters, `/runs/<trace_id>` a run beside its
grades, `/api/grades` the same list as JSON. HTML rendered on the server from the templates beside this module;
it needs no JavaScript, and its Content-Security-Policy allows none (nor framing, nor any style but its own).
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

import jinja2
from aiohttp import web

from otelgrade.core.results import OUTCOMES, Grade
from otelgrade.core.settings import UiSettings
from otelgrade.core.trajectory import ToolCall, Trajectory, content_text, conversation_path
from otelgrade.export.ui.store import ORDERS, GradeQuery, Run, RunStore, select
from otelgrade.grade.grading import UnmatchedRuns

JUDGE_KEYS = ("prompt", "answer", "raw_answer")  # shown as the judge's exchange, not as plain metadata

_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("otelgrade.export.ui", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _security_headers() -> dict[str, str]:
    """Headers for every answer of the endpoint: no script at all, only the page's own style sheet (by its hash),
    never inside a frame, no sniffing of content types, no page address sent to the tracing backend."""
    css = _TEMPLATES.get_template("grades.css").render().encode()
    style = "sha256-" + base64.b64encode(hashlib.sha256(css).digest()).decode()
    policy = f"default-src 'none'; style-src '{style}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
    }


def page_address(settings: UiSettings, host: str, port: int, tls: bool) -> str:
    """The grades page's address for links from outside (alerts): `ui.external_url`, else this host on the
    metrics port (its name when the endpoint listens on every interface)."""
    if settings.external_url:
        return settings.external_url
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = socket.getfqdn()
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{'https' if tls else 'http'}://{host}:{port}/"


def add_grade_pages(
    app: web.Application,
    store: RunStore,
    settings: UiSettings,
    unmatched: Callable[[], UnmatchedRuns] | None = None,
) -> None:
    """Serve the grades page from `app` (the metrics endpoint's application, with its auth); every answer of
    `app` gets the security headers. `unmatched` tells the page what arrived and was not graded."""
    pages = GradePages(store, settings, unmatched)
    app.router.add_get("/", pages.index)
    app.router.add_get("/runs/{trace_id}", pages.run)
    app.router.add_get("/api/grades", pages.api_grades)
    app.router.add_get("/conversations", pages.conversations)
    app.router.add_get("/conversations/{conversation_id}", pages.conversation)
    app.router.add_get("/api/conversations/{conversation_id}", pages.api_conversation)
    headers = _security_headers()

    async def secure(_: web.Request, response: web.StreamResponse) -> None:
        response.headers.update(headers)

    app.on_response_prepare.append(secure)


class GradePages:
    def __init__(
        self, store: RunStore, settings: UiSettings, unmatched: Callable[[], UnmatchedRuns] | None = None
    ) -> None:
        self.store = store
        self.settings = settings
        self.unmatched = unmatched

    async def index(self, request: web.Request) -> web.Response:
        held = self.store.grades()
        try:
            query = GradeQuery.from_params(request.query)
        except ValueError as exc:
            return _html("error.html", status=400, problem=str(exc))
        shown, total = select(held, query)
        counts = Counter(g.outcome for g in held)
        return _html(
            "index.html",
            grades=[self._grade_row(g) for g in shown],
            total=total,
            query=query,
            filters=_filters(held, query),
            orders=ORDERS,
            counts=[(o, counts[o]) for o in OUTCOMES],
            runs_held=len(self.store),
            keep=self.store.keep,
            request_query=request.query_string,
            unmatched=self.unmatched() if self.unmatched is not None else None,
        )

    async def run(self, request: web.Request) -> web.Response:
        trace_id = request.match_info["trace_id"].lower()
        await self.store.fetch(trace_id)
        runs = self.store.runs(trace_id)
        views = [self._run_view(run) for run in runs]
        return _html(
            "run.html",
            status=200 if runs else 404,
            trace_id=trace_id,
            runs=views,
            trace_link=self.settings.trace_link(trace_id),
            keep=self.store.keep,
        )

    async def api_grades(self, request: web.Request) -> web.Response:
        try:
            query = GradeQuery.from_params(request.query)
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        shown, total = select(self.store.grades(), query)
        rows = [
            {
                **g.to_dict(),
                "run_url": f"/runs/{g.trace_id}",
                **(
                    {"conversation_url": conversation_path(g.conversation_id, g.conversation_scope)}
                    if g.conversation_id is not None
                    else {}
                ),
                "trace_url": self.settings.trace_link(g.trace_id, g.call_span_id or g.span_id),
            }
            for g in shown
        ]
        return web.json_response({"total": total, "grades": rows}, dumps=_json)

    async def conversations(self, request: web.Request) -> web.Response:
        rows = [
            {"c": c, "link": conversation_path(c.conversation_id, c.scope).lstrip("/")}
            for c in self.store.conversations()
        ]
        return _html("conversations.html", conversations=rows, keep=self.store.keep)

    async def conversation(self, request: web.Request) -> web.Response:
        conversation_id = request.match_info["conversation_id"]
        held = self.store.conversation(conversation_id, request.query.get("scope"))
        turns = []
        for number, turn in enumerate(held.turns if held else [], 1):
            run = next((r for r in self.store.runs(turn.trace_id) if r.span_id == turn.span_id), None)
            turns.append({"number": number, "turn": turn, "grades": [_grade(g) for g in run.grades] if run else []})
        grades = (
            sorted(held.grades, key=lambda g: (g.outcome != "fail", g.outcome != "error", g.suite, g.grader))
            if held
            else []
        )
        return _html(
            "conversation.html",
            status=200 if held else 404,
            conversation_id=conversation_id,
            scope=held.scope if held else request.query.get("scope"),
            scopes=[]
            if held
            else [(s, conversation_path(conversation_id, s)) for s in self.store.scopes(conversation_id)],
            turns=turns,
            grades=[_grade(g) for g in grades],
            keep=self.store.keep,
        )

    async def api_conversation(self, request: web.Request) -> web.Response:
        """A conversation as JSON: its turns, its latest grades, and every revision's grades held."""
        conversation_id = request.match_info["conversation_id"]
        held = self.store.conversation(conversation_id, request.query.get("scope"))
        if held is None:
            scopes = self.store.scopes(conversation_id)
            why = "more than one application has a conversation of this id: add ?scope=" if scopes else "not held"
            return web.json_response({"error": why, "scopes": scopes}, status=404)
        revisions = sorted([*held.superseded, *held.grades], key=lambda g: (g.revision, g.suite, g.grader))
        body = {
            "conversation_id": held.conversation_id,
            "scope": held.scope,
            "url": conversation_path(held.conversation_id, held.scope),
            "turns": [asdict(t) for t in held.turns],
            "grades": [g.to_dict() for g in held.grades],
            "revisions": [g.to_dict() for g in revisions],
        }
        return web.json_response(body, dumps=_json)

    def _grade_row(self, grade: Grade) -> dict[str, Any]:
        link = self.settings.trace_link(grade.trace_id, grade.call_span_id or grade.span_id)  # the call's, if graded
        conversation = (
            conversation_path(grade.conversation_id, grade.conversation_scope).lstrip("/")
            if grade.level == "conversation"
            else None
        )
        return {"grade": grade, "trace_link": link, "conversation_link": conversation}

    def _run_view(self, run: Run) -> dict[str, Any]:
        t = run.trajectory
        grades = sorted(run.grades, key=lambda g: (g.outcome != "fail", g.outcome != "error", g.suite, g.grader))
        return {
            "span_id": run.span_id,
            "trajectory": t,
            "tool_calls": [_tool_call(c, t) for c in t.tool_calls] if t else [],
            "messages": [_message(m) for m in t.messages] if t else [],
            "grades": [_grade(g) for g in grades],
            "trace_link": self.settings.trace_link(run.trace_id, run.span_id),
            "conversation_link": ".." + conversation_path(t.conversation_id, t.conversation_scope)
            if t and t.conversation_id
            else None,
        }


def _filters(held: list[Grade], query: GradeQuery) -> list[dict[str, Any]]:
    """One select per filter: the values seen among the held grades (every outcome), and the chosen one."""
    seen: dict[str, set[str]] = {"suite": set(), "grader": set(), "service": set(), "agent": set(), "level": set()}
    for g in held:
        for name, value in (
            ("suite", g.suite),
            ("grader", g.grader),
            ("service", g.service_name),
            ("agent", g.agent_name),
            ("level", g.level),
        ):
            if value:
                seen[name].add(value)
    labels = {
        "suite": "Suite",
        "grader": "Grader",
        "outcome": "Outcome",
        "service": "Service",
        "agent": "Agent",
        "level": "Level",
    }
    return [
        {
            "name": name,
            "label": label,
            "options": list(OUTCOMES) if name == "outcome" else sorted(seen[name]),
            "chosen": getattr(query, name),
        }
        for name, label in labels.items()
    ]


def _tool_call(call: ToolCall, trajectory: Trajectory) -> dict[str, Any]:
    """A tool call as shown: when its span carries no result, the tool message answering it stands in."""
    result, result_from = call.result, "span"
    if result is None and call.call_id:
        answers = [m for m in trajectory.messages if m.get("role") == "tool" and m.get("tool_call_id") == call.call_id]
        if answers:
            result, result_from = content_text(answers[0].get("content")), "conversation"
    return {"call": call, "arguments": _pretty(call.arguments), "result": result, "result_from": result_from}


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        function = function if isinstance(function, Mapping) else {}
        calls.append({"name": function.get("name", "?"), "arguments": _pretty(function.get("arguments"))})
    return {
        "role": str(message.get("role", "?")),
        "text": content_text(message.get("content")),
        "tool_calls": calls,
        "tool_call_id": message.get("tool_call_id"),
    }


def _grade(grade: Grade) -> dict[str, Any]:
    meta = grade.metadata
    return {
        "grade": grade,
        "prompt": meta.get("prompt"),
        "answer": meta.get("answer", meta.get("raw_answer")),
        "details": {k: _pretty(v) for k, v in meta.items() if k not in JUDGE_KEYS},
    }


def _pretty(value: Any) -> str:
    """Objects and arrays as indented JSON (also when given as JSON text); anything else as it is written."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if not isinstance(parsed, dict | list):
            return value
        value = parsed
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _when(time_unix: float) -> str:
    return datetime.fromtimestamp(time_unix, UTC).strftime("%Y-%m-%d %H:%M:%S") if time_unix else ""


def _score(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _html(template: str, status: int = 200, **context: Any) -> web.Response:
    body = _TEMPLATES.get_template(template).render(**context)
    return web.Response(text=body, status=status, content_type="text/html", charset="utf-8")


_TEMPLATES.filters.update(when=_when, score=_score)
