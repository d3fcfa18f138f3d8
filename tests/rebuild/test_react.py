"""Tool calls a ReAct agent asks for in text (`Action:` / `Action Input:`), answered by `Observation:` in the next
request, read as calls of the run, with the instrumentation writing only model calls (OpenLIT around LlamaIndex's
ReActAgent)."""

from __future__ import annotations

import json

from otelgrade.rebuild import rebuild
from tests.rebuild.genai_spans import agent, chat

QUESTION = "Read meter M-204."
ASKED = 'Thought: I need a tool.\nAction: read_meter\nAction Input: {"meter_id": "M-204"}'
REWRITTEN = "Thought: I need a tool.\nAction: read_meter\nAction Input: {'meter_id': 'M-204'}"  # the history's form


def _said(role: str, text: str) -> dict[str, object]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def test_an_action_written_in_text_is_a_call_and_the_observation_its_result() -> None:
    history = [_said("user", QUESTION), _said("assistant", REWRITTEN), _said("user", "Observation: 48213 kWh")]
    (run,) = rebuild(
        [
            agent("1", None, "meter_desk", 0, 10),
            chat(
                "2",
                "1",
                1,
                2,
                [_said("user", QUESTION)],
                gen_ai__output__messages=json.dumps([_said("assistant", ASKED)]),
            ),
            chat(
                "3",
                "1",
                3,
                4,
                history,
                gen_ai__output__messages=json.dumps([_said("assistant", "It reads 48213 kWh.")]),
            ),
        ]
    )
    assert [(c.name, c.arguments, c.result) for c in run.tool_calls] == [
        ("read_meter", {"meter_id": "M-204"}, "48213 kWh")
    ]
    assert run.output == "It reads 48213 kWh." and "tool_calls" not in run.lacks


def test_text_that_only_mentions_an_action_asks_for_none() -> None:
    said = [_said("assistant", "The Action: field of the form is blank.")]
    (run,) = rebuild(
        [
            agent("1", None, "desk", 0, 10),
            chat("2", "1", 1, 2, [_said("user", QUESTION)], gen_ai__output__messages=json.dumps(said)),
        ]
    )
    assert run.tool_calls == []
