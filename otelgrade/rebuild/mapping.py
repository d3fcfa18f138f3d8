"""Dialects made from the config: `rebuild.mappings` read spans of an instrumentation otelgrade does not know,
through the attribute names it uses (which span is the agent, which attributes hold the tool's name, its
arguments and result ...). They are asked before the built-in dialects."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from otelgrade.core.patterns import Pattern, PatternTimeout
from otelgrade.core.settings import SpanMapping
from otelgrade.core.spans import Span
from otelgrade.rebuild import messages as msg
from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import Facts, LLMFacts, RunFacts, ToolFacts
from otelgrade.rebuild.span_readers import is_error, text

NAME = "mapping"


def mapped_dialects(mappings: Sequence[SpanMapping]) -> tuple[Dialect, ...]:
    return tuple(
        Dialect(name=NAME, priority=i, read=_matching(_matcher(m), _reader(m)), blobs=_blobs(m))
        for i, m in enumerate(mappings)
    )


def _matcher(mapping: SpanMapping) -> Callable[[Span], bool]:
    checks = [_check(key, expected) for key, expected in mapping.match.items()]
    return lambda span: all(check(span) for check in checks)


def _matching(matches: Callable[[Span], bool], read: Callable[[Span], Facts | None]) -> Callable[[Span], Facts | None]:
    return lambda span: read(span) if matches(span) else None


def _check(key: str, expected: str | int | bool) -> Callable[[Span], bool]:
    def value(span: Span) -> Any:
        return span.name if key == "span.name" else span.attributes.get(key)

    if isinstance(expected, str) and expected.startswith("^"):
        pattern = Pattern(expected)

        def matches(span: Span) -> bool:
            try:
                return isinstance(v := value(span), str) and pattern.search(v) is not None
            except PatternTimeout:  # a span's text must not stall the rebuild: no match
                return False

        return matches
    return lambda span: bool(value(span) == expected)


def _reader(mapping: SpanMapping) -> Callable[[Span], Facts | None]:
    def get(span: Span, key: str | None) -> Any:
        return span.attributes.get(key) if key else None

    if mapping.role == "agent":
        return lambda s: RunFacts(
            agent_name=text(get(s, mapping.name)),
            input=_text(get(s, mapping.input)),
            output=_text(get(s, mapping.output)),
        )
    if mapping.role == "llm":
        return lambda s: LLMFacts(
            model=text(get(s, mapping.name)),
            input_messages=_messages(get(s, mapping.input), "user"),
            output_messages=_messages(get(s, mapping.output), "assistant"),
        )
    return lambda s: ToolFacts(
        name=text(get(s, mapping.name)) or s.name or "unknown",
        call_id=text(get(s, mapping.call_id)),
        arguments=msg.parse_json_maybe(get(s, mapping.arguments)),
        result=msg.result_text(get(s, mapping.result)),
        error=is_error(s),
    )


def _text(value: Any) -> str | None:
    return msg.last_user_text(_messages(value, "user")) if isinstance(value, str) and value[:1] == "[" else text(value)


def _messages(value: Any, role: str) -> list[msg.Message]:
    """Chat-messages JSON as messages; plain text as one message of `role`."""
    if isinstance(value, str) and value[:1] in "[{":
        messages = msg.from_openai([m for m in msg.as_list(value) if isinstance(m, dict)])
        if messages:
            return messages
    return [msg.message(role, value)] if isinstance(value, str) and value else []


def _blobs(mapping: SpanMapping) -> frozenset[str]:
    return frozenset(k for k in (mapping.input, mapping.output, mapping.arguments, mapping.result) if k)
