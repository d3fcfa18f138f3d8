"""A hand-written tool loop for capture scripts of provider-SDK instrumentations (standard library only).

No agent framework: the loop asks the model, runs the tools it asks for as plain Python functions, and
answers their results (a failing tool as "error: <reason>") in the next request, until the model answers
in text. Each scenario is wrapped in a `handle_request` span, as a web service would; the two-request
scenario serves two separate user requests in one trace, each with a fresh conversation. The script
supplies the provider: a `Chat` per request, on the provider's SDK.

    from tool_loop import capture
    capture(OpenAIChat, span=lambda name: tracer.start_as_current_span(name), flush=provider.force_flush)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from client import Scenario
from scenarios import STANDARD

SYSTEM = "You are a travel assistant."


@dataclass
class Call:
    """A tool call as the model asked for it."""

    id: str
    name: str
    arguments: dict[str, Any]


class Chat(Protocol):
    """One request's conversation with the model, in the provider's own message format."""

    def ask(self) -> tuple[str | None, list[Call]]:
        """Send the conversation; the answer's text and tool calls (raises when the model call fails)."""

    def answer(self, results: list[tuple[Call, str, bool]]) -> None:
        """Add the tools' results (call, result text, whether the tool failed) to the conversation."""


def search_flights(origin: str, destination: str) -> str:
    return "UA123 09:00 $320"


def book_flight(flight_id: str) -> str:
    return "booked ABC123456"


def charge_card(amount: int) -> str:
    raise RuntimeError("card declined")


def get_weather(city: str) -> str:
    return {"Paris": "12C rain", "Tokyo": "18C sun"}[city]


def delete_account(user_id: str) -> str:
    return f"account {user_id} deleted"


def lookup(key: str) -> str:
    return f"value-of-{key}"


FUNCTIONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (search_flights, book_flight, charge_card, get_weather, delete_account, lookup)
}
# The standard scenarios; the two-run one is two requests in one trace here (a loop the application wrote).
SCENARIOS = {**{k: v for k, v in STANDARD.items() if k != "two_runs"}, "two_requests": STANDARD["two_runs"]}


def serve(
    s: Scenario,
    chat: Chat,
    request: str,
    functions: dict[str, Callable[..., str]],
    lacks: list[str],
    agent: str = "travel_agent",
) -> None:
    """One user request: ask the model, run the tools it asks for, until it answers in text."""
    s.run(agent, request)
    calls = 0
    while True:
        calls += 1
        try:
            answer, asked = chat.ask()
        except Exception as exc:
            print(f"   request failed as scripted: {type(exc).__name__}: {exc}")
            s.finish(None, "error", calls, lacks=lacks)
            return
        if not asked:
            s.finish(answer, "ok", calls, lacks=lacks)
            return
        results = []
        for call in asked:
            try:
                result, failed = functions[call.name](**call.arguments), False
                s.tool(call.name, call.arguments, result)
            except Exception as exc:
                s.tool(call.name, call.arguments, error=True)
                result, failed = f"error: {exc}", True
            results.append((call, result, failed))
        chat.answer(results)


def capture(
    open_chat: Callable[[str], Chat],
    span: Callable[[str], AbstractContextManager[Any]],
    flush: Callable[[], Any],
    names: Iterable[str] = SCENARIOS,
    renamed: dict[str, str] | None = None,
    wrap: Callable[[Callable[..., str]], Callable[..., str]] = lambda f: f,
    lacks: list[str] | None = None,
    tool_functions: dict[str, Callable[..., str]] = FUNCTIONS,
    scenarios: dict[str, tuple[list[str], list[dict[str, Any]]]] = SCENARIOS,
    agent: str = "travel_agent",
    one_run_per_span: bool = False,
) -> None:
    """Capture the named scenarios (`renamed` gives some another name); `wrap` instruments each tool function
    as a user would, and every run lacks `lacks`. Other tools and scenarios than the travel ones can be given,
    with the agent name their ground truth records. With `one_run_per_span` (nothing on the trace tells the
    requests served under one application span apart), the ground truth is one run per span."""
    functions = {name: wrap(function) for name, function in tool_functions.items()}
    for name in names:
        requests, replies = scenarios[name]
        with Scenario((renamed or {}).get(name, name), replies) as s:
            with span("handle_request"):
                for request in requests:
                    serve(s, open_chat(request), request, functions, lacks or [], agent)
            if one_run_per_span:
                s.runs[:] = [merged(s.runs)]
            flush()


def merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The ground truth of several requests served in turn as one run: the first's request, every call, the last
    answer, failed when any failed."""
    return {
        **runs[0],
        "tool_calls": [call for run in runs for call in run["tool_calls"]],
        "output": runs[-1]["output"],
        "status": "error" if any(run["status"] == "error" for run in runs) else "ok",
        "llm_calls": sum(run["llm_calls"] for run in runs),
    }


def openai_chat(client: Any, schemas: list[dict[str, Any]], system: str = SYSTEM) -> Callable[[str], Chat]:
    """A `Chat` per request on the OpenAI SDK's chat completions (`client` an `openai.OpenAI`)."""

    class OpenAIChat:
        def __init__(self, request: str) -> None:
            self.messages = [{"role": "system", "content": system}, {"role": "user", "content": request}]

        def ask(self) -> tuple[str | None, list[Call]]:
            completion = client.chat.completions.create(model="gpt-4o-mini", messages=self.messages, tools=schemas)
            message = completion.choices[0].message
            self.messages.append(message.model_dump(exclude_none=True))
            calls = [Call(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()]
            return message.content, calls

        def answer(self, results: list[tuple[Call, str, bool]]) -> None:
            self.messages += [
                {"role": "tool", "tool_call_id": call.id, "content": result} for call, result, _ in results
            ]

    return OpenAIChat


def anthropic_chat(client: Any, tools: list[dict[str, Any]], system: str = SYSTEM) -> Callable[[str], Chat]:
    """A `Chat` per request on the Anthropic SDK's Messages API (`client` an `anthropic.Anthropic`): tool calls
    come as `tool_use` blocks, results go back as `tool_result` blocks (`is_error` for a failing tool)."""

    class AnthropicChat:
        def __init__(self, request: str) -> None:
            self.messages: list[dict[str, Any]] = [{"role": "user", "content": request}]

        def ask(self) -> tuple[str | None, list[Call]]:
            message = client.messages.create(
                model="claude-haiku-4-5", max_tokens=1024, system=system, messages=self.messages, tools=tools
            )
            self.messages.append(
                {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]}
            )
            text = "".join(b.text for b in message.content if b.type == "text") or None
            return text, [Call(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]

        def answer(self, results: list[tuple[Call, str, bool]]) -> None:
            blocks = [
                {"type": "tool_result", "tool_use_id": call.id, "content": result, "is_error": failed}
                for call, result, failed in results
            ]
            self.messages.append({"role": "user", "content": blocks})

    return AnthropicChat
