"""Which conversation a run is a turn of: read once, from the conventions' ids, within its scope."""

from __future__ import annotations

from otelgrade.rebuild.identity import MAX_ID_CHARS, bounded
from otelgrade.rebuild.trace import rebuild_trace
from tests.rebuild.genai_spans import agent, chat

ASK = [{"role": "user", "parts": [{"type": "text", "content": "Where is my order?"}]}]


def turn(**attrs: object) -> list:  # type: ignore[type-arg]
    return [agent("1", None, "support", 0, 10, **attrs), chat("2", "1", 1, 2, ASK)]


def test_the_conventions_id_names_the_conversation_and_the_service_scopes_it() -> None:
    (run,) = rebuild_trace(turn(gen_ai__conversation__id="chat-42"))
    assert run.conversation_id == "chat-42"
    assert run.conversation_scope == "travel"


def test_an_id_saying_null_names_no_conversation() -> None:
    (run,) = rebuild_trace(turn(gen_ai__conversation__id="null"))
    assert run.conversation_id is None


def test_the_end_marker_ends_the_conversation() -> None:
    (run,) = rebuild_trace(turn(gen_ai__conversation__id="chat-42", otelgrade__conversation__end=True))
    assert run.ends_conversation


def test_a_long_id_is_cut_with_a_hash_that_keeps_ids_apart() -> None:
    one, two = bounded("x" * 5000 + "1"), bounded("x" * 5000 + "2")
    assert len(one) == len(two) == MAX_ID_CHARS
    assert one != two
    assert bounded("chat-42") == "chat-42"
