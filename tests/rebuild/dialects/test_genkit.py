"""Genkit's own telemetry: a triage prompt whose tools are specialist prompts. Calling one hands the conversation to
it (Genkit swaps the prompt's instructions and tools in place, within the triage's generation): a handoff, and the
calls after it are the specialist's."""

from __future__ import annotations

import json
from typing import Any

from otelgrade.core.spans import Span
from otelgrade.rebuild import rebuild
from tests.rebuild.genai_spans import span

FLOW = "/{handle_claim,t:flow}"
TRIAGE = f"{FLOW}/{{intake,t:dotprompt}}/{{generate,t:util}}"
SPECIALIST = f"{TRIAGE}/{{generate,t:util}}"
INTAKE = "You take in customers and pass them to the right desk."
CLAIMS = "You file claims."


def _genkit(sid: str, parent: str | None, name: str, at: int, end: int, keys: dict[str, Any]) -> Span:
    """A span of Genkit's, its `genkit:*` attributes as given."""
    return span(sid, parent, name, at, end, **keys)


def _action(sid: str, parent: str, name: str, subtype: str, at: int, path: str, **attrs: Any) -> Span:
    keys = {"genkit:type": "action", "genkit:metadata:subtype": subtype, "genkit:name": name, **attrs}
    return _genkit(sid, parent, name, at, at + 1, {**keys, "genkit:path": f"{path}/{{{name},t:action,s:{subtype}}}"})


def _model(sid: str, parent: str, at: int, path: str, history: list[dict[str, Any]], said: list[Any]) -> Span:
    request = {"messages": history}
    response = {"finishReason": "stop", "message": {"role": "model", "content": said}, "usage": {"inputTokens": 9}}
    return _action(
        sid,
        parent,
        "openai/gpt-4o-mini",
        "model",
        at,
        path,
        **{"genkit:input": json.dumps(request), "genkit:output": json.dumps(response)},
    )


def _text(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "content": [{"text": words}]}


def _asks(name: str, ref: str, given: dict[str, Any]) -> dict[str, Any]:
    return {"toolRequest": {"name": name, "ref": ref, "input": given}}


def _answered(name: str, ref: str, output: str) -> dict[str, Any]:
    return {"role": "tool", "content": [{"toolResponse": {"name": name, "ref": ref, "output": output}}]}


def _triage(*specialist_instructions: str) -> list[Span]:
    """The triage model calls the `claims` prompt; the generation goes on under `specialist_instructions`, files a
    claim and answers (the calls after the handoff given `specialist_instructions`)."""
    user = _text("user", "File a claim on PX-1 for 900 EUR.")
    handed = [_text("model", ""), _answered("claims", "c1", "transferred to claims")]
    handed[0]["content"] = [_asks("claims", "c1", {})]
    filed = [{"role": "model", "content": [_asks("file_claim", "c2", {"policy_id": "PX-1"})]}]
    filed.append(_answered("file_claim", "c2", "claim C-1 filed"))
    specialist = [*(_text("system", said) for said in specialist_instructions), user, *handed]
    answer = {"text": "Claim C-1 is filed."}
    return [
        _genkit("1", None, "handle_claim", 0, 20, {"genkit:type": "action", "genkit:metadata:subtype": "flow"}),
        _genkit(
            "2",
            "1",
            "intake",
            1,
            19,
            {
                "genkit:type": "dotprompt",
                "genkit:name": "intake",
                "genkit:path": f"{FLOW}/{{intake,t:dotprompt}}",
                "genkit:output": json.dumps({"message": {"role": "model", "content": [answer]}}),
            },
        ),
        _genkit("3", "2", "generate", 2, 18, {"genkit:type": "util", "genkit:path": TRIAGE}),
        _model("4", "3", 2, TRIAGE, [_text("system", INTAKE), user], [_asks("claims", "c1", {})]),
        _action("5", "3", "claims", "prompt", 4, TRIAGE),
        _genkit("6", "3", "generate", 6, 17, {"genkit:type": "util", "genkit:path": SPECIALIST}),
        _model("7", "6", 6, SPECIALIST, specialist, [_asks("file_claim", "c2", {"policy_id": "PX-1"})]),
        _action(
            "8",
            "6",
            "file_claim",
            "tool",
            8,
            SPECIALIST,
            **{"genkit:input": '{"policy_id": "PX-1"}', "genkit:output": '"claim C-1 filed"'},
        ),
        _model("9", "6", 10, SPECIALIST, [*specialist, *filed], [answer]),
    ]


def test_a_prompt_the_model_calls_as_a_tool_takes_the_conversation_over() -> None:
    (run,) = rebuild(_triage(CLAIMS, INTAKE))  # Genkit puts the acting prompt's instructions first
    assert (run.agent_name, run.output, run.lacks) == ("intake", "Claim C-1 is filed.", [])
    assert [(h.from_agent, h.to_agent, h.decided_by) for h in run.handoffs] == [("intake", "claims", "dialect")]
    assert [(t.name, t.arguments, t.result, t.agent) for t in run.tool_calls] == [
        ("file_claim", {"policy_id": "PX-1"}, "claim C-1 filed", "claims")
    ]
    assert [c.agent for c in run.llm_calls] == ["intake", "claims", "claims"]


def test_a_transfer_after_which_the_model_keeps_its_instructions_leaves_the_calls_uncertain() -> None:
    """Nothing shows the agent handed to acting: the transfer may have been a tool call, so the run lacks them."""
    (run,) = rebuild(_triage(INTAKE))
    assert "tool_calls" in run.lacks
