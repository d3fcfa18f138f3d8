"""Which conversation a run belongs to, and whether the run ends it: read once, when the run is rebuilt.

The id is the first of the names below found on the run's root span, its ancestors (nearest first), the spans
of its subtree (in tree order), then the resource. The config's `conversations.id_attributes` are asked before
the built-in names. A value that stands for no value (`null`, `None`, `undefined`, empty: Logfire writes the OpenAI
Agents SDK's unset `group_id` as `'null'`) names no conversation: the search goes on as if it were absent. A run
ends its conversation when one of those spans (or the resource) carries
`otelgrade.conversation.end` set to true: the GenAI conventions define no end signal of their own.

An id or scope longer than `MAX_ID_CHARS` is cut, its end replaced by a hash of the whole (so two long ids stay two),
here, once: every log line, page and record that shows it shows the cut one.

An id is an application's: its scope is the value of `conversations.scope_attribute` (`service.name` unless the
config names another, or none), read in the same places. Two applications whose ids collide hold two
conversations; runs that carry no scope value share the unscoped one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from otelgrade.rebuild.tree import Tree

CONVERSATION_ID_ATTRIBUTES: tuple[str, ...] = (
    "gen_ai.conversation.id",  # GenAI conventions (Google ADK, Pydantic AI, OpenAI instrumentation)
    "session.id",  # OpenInference (LangChain/LangGraph thread ids land here), OTel session conventions, Agno
    "langfuse.session.id",  # Langfuse SDK
    "traceloop.association.properties.session_id",  # Traceloop/OpenLLMetry association properties
    "traceloop.association.properties.thread_id",  # ... LangGraph's `thread_id` under Traceloop
    "traceloop.association.properties.conversation_id",
    "ai.telemetry.metadata.sessionId",  # Vercel AI SDK telemetry metadata, as applications name it
    "ai.telemetry.metadata.threadId",  # ... and Mastra's memory threads
    "ai.telemetry.metadata.conversationId",
    "langsmith.metadata.session_id",  # LangSmith's OpenTelemetry export
    "langsmith.metadata.thread_id",
    "langsmith.metadata.conversation_id",
)
CONVERSATION_END = "otelgrade.conversation.end"
NO_VALUE = frozenset(("", "null", "none", "nil", "undefined"))  # as strings, lowercased: an unset value printed
_WANTED = frozenset((*CONVERSATION_ID_ATTRIBUTES, CONVERSATION_END))
MAX_ID_CHARS = 200  # longer ids (and scopes) keep their first 183 characters, then "~" and 16 hex of their hash


def marks(tree: Tree, id_attributes: Sequence[str] = ()) -> tuple[bool, bool]:
    """One pass over the trace: whether any span (or resource) names a conversation at all, and whether any
    carries the end marker (else a run's search stops at the first id it finds)."""
    wanted = _wanted(id_attributes)
    named = ended = False
    resources: dict[int, Mapping[str, Any]] = {}  # spans of one request share their resource
    for span in tree.spans.values():
        attributes = span.attributes
        if not wanted.isdisjoint(attributes):
            named = True
            ended = ended or CONVERSATION_END in attributes
        resources[id(span.resource)] = span.resource
    for resource in resources.values():
        if not wanted.isdisjoint(resource):
            named = True
            ended = ended or CONVERSATION_END in resource
    return named, ended


def _wanted(id_attributes: Sequence[str]) -> frozenset[str]:
    return _WANTED if not id_attributes else frozenset((*id_attributes, *_WANTED))


def conversation_of(
    tree: Tree, root: str, id_attributes: Sequence[str] = (), marked: bool = True
) -> tuple[str | None, bool]:
    """The run's conversation id (None when nothing names one) and whether the run ends the conversation
    (`marked`: whether the trace holds an end marker at all)."""
    keys = (*id_attributes, *CONVERSATION_ID_ATTRIBUTES) if id_attributes else CONVERSATION_ID_ATTRIBUTES
    wanted = _wanted(id_attributes)
    found: str | None = None
    ended = False
    for attributes in _places(tree, root):
        if wanted.isdisjoint(attributes):
            continue
        if found is None:
            found = _first(attributes, keys)
        ended = ended or _true(attributes.get(CONVERSATION_END))
        if found is not None and (ended or not marked):
            break
    return found, ended


SCOPE_ATTRIBUTE = "service.name"


def scope_of(tree: Tree, root: str, scope_attribute: str | None = SCOPE_ATTRIBUTE) -> str | None:
    """The scope of the run's conversation id: the first value of `scope_attribute` where the id is looked for
    (None when the config scopes nothing, or no place carries it)."""
    if not scope_attribute:
        return None
    keys = (scope_attribute,)
    return next((found for attributes in _places(tree, root) if (found := _first(attributes, keys)) is not None), None)


def _places(tree: Tree, root: str) -> Iterable[Mapping[str, Any]]:
    span = tree.spans.get(root)
    if span is None:
        return
    yield span.attributes
    for above in tree.ancestors(root):
        if above in tree.spans:
            yield tree.spans[above].attributes
    for below in tree.walk(root)[1:]:
        yield tree.spans[below].attributes
    yield span.resource


def _first(attributes: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if value is None or isinstance(value, dict | list):
            continue
        text = str(value).strip()
        if text.lower() not in NO_VALUE:
            return bounded(text)
    return None


def bounded(text: str) -> str:
    """`text` as it is, or cut to `MAX_ID_CHARS` with a hash of all of it at the end."""
    if len(text) <= MAX_ID_CHARS:
        return text
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{text[: MAX_ID_CHARS - len(digest) - 1]}~{digest}"


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")
