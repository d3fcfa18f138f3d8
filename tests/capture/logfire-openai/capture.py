"""A hand-written tool loop on the OpenAI SDK, traced by Pydantic Logfire's `logfire.instrument_openai()`.

Logfire is configured not to send to its own service (`send_to_logfire=False`); it exports to
OTEL_EXPORTER_OTLP_ENDPOINT itself (its OTLP environment support, OTLP/HTTP protobuf). Each chat
completion is one `Chat Completion with 'gpt-4o-mini'` span; each tool function is wrapped with
`@logfire.instrument(record_return=True)` as a user would, and the scenario in a `handle_request` span.
Logfire's scrubbing (`configure(scrubbing=...)`) passes over the spans of `logfire.openai`, so nothing hides
their content.
"""

import json

import logfire
from openai import OpenAI
from tool_loop import FUNCTIONS, SYSTEM, Call, capture

logfire.configure(
    service_name="travel-service",
    send_to_logfire=False,
    console=False,
    metrics=False,
)
logfire.instrument_openai()
client = OpenAI()
SCHEMAS = [
    {
        "type": "function",
        "function": {"name": name, "description": name.replace("_", " "), "parameters": {"type": "object"}},
    }
    for name in FUNCTIONS
]


class OpenAIChat:
    """One request's chat-completions conversation."""

    def __init__(self, request: str) -> None:
        self.messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": request}]

    def ask(self):
        completion = client.chat.completions.create(model="gpt-4o-mini", messages=self.messages, tools=SCHEMAS)
        message = completion.choices[0].message
        self.messages.append(message.model_dump(exclude_none=True))
        calls = [Call(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()]
        return message.content, calls

    def answer(self, results):
        self.messages += [{"role": "tool", "tool_call_id": call.id, "content": result} for call, result, _ in results]


capture(
    OpenAIChat,
    logfire.span,
    logfire.force_flush,
    renamed={"two_requests": "two_runs"},
    wrap=logfire.instrument(record_return=True),
)
