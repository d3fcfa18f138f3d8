"""From a failing conversation to the conversation: `otelgrade serve`'s webhook message (to a receiver on
127.0.0.1) names the conversation and links to its page, each turn's run page links to it, and
`/api/conversations/<id>` gives it as JSON with every revision's grades; the shipped Slack template carries the
alerts' grades page link."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import yaml

from tests.conversation_turns import turn
from tests.e2e.test_conversations_live import TURNS, sdk
from tests.export.sinks.test_webhook import FAST, receiver
from tests.promserver import CONFIG_DIR
from tests.webhook_receiver import Receiver

__all__ = ["receiver"]  # a fixture, used by name

SUPPORT = {
    "name": "support",
    "level": "conversation",
    "graders": [{"name": "no_delete", "type": "tools_not_called", "tools": ["delete_account"]}],
}


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def test_a_failing_conversation_is_named_and_linked_from_its_message_its_turns_and_its_json(
    serve, receiver: Receiver
) -> None:  # type: ignore[no-untyped-def]
    sinks = [{"type": "webhook", "url": receiver.url, **FAST}]
    server = serve({"conversations": {"settle": "1s"}, "suites": [SUPPORT, TURNS], "sinks": sinks})
    provider, tracer = sdk(server)
    history: list[dict[str, Any]] = []
    ids = {"gen_ai.conversation.id": "order-1007"}
    first = turn(tracer, history, "Where is my order 1007?", "It shipped.", ["lookup_order"], ids)
    server.wait_for_metric("otelgrade_conversations_graded_total", None, 1)
    turn(tracer, history, "Close my account.", "Done.", ["delete_account"], ids)  # resumed: revision 2 fails
    receiver.wait_for(1)
    message = receiver.accepted[0][1]
    page_url = f"{server.metrics_url}/conversations/order-1007?scope=support-agent"
    page = get(message["links"]["conversation"])
    run_page = get(f"{server.metrics_url}/runs/{first:032x}")
    api = json.loads(get(f"{server.metrics_url}/api/conversations/order-1007"))
    listed = json.loads(get(f"{server.metrics_url}/api/grades?conversation=order-1007&scope=support-agent"))["grades"]
    provider.shutdown()
    assert server.stop() == 0
    assert message["text"].startswith("otelgrade: support-agent/support conversation order-1007 (2 turn(s), the last")
    assert message["text"].endswith(f"<{page_url}>") and message["links"]["conversation"] == page_url
    assert "Close my account." in page and "Where is my order 1007?" in page
    assert 'href="../conversations/order-1007?scope=support-agent"' in run_page
    assert (api["conversation_id"], api["scope"], len(api["turns"])) == ("order-1007", "support-agent", 2)
    assert [(g["revision"], g["outcome"]) for g in api["revisions"]] == [(1, "pass"), (2, "fail")]
    assert [(g["revision"], g["outcome"]) for g in api["grades"]] == [(2, "fail")]
    # /api/grades filters by conversation: its latest grade and its turns' grades (before: "unknown parameter")
    assert sorted((g["level"], g["grader"], g["outcome"]) for g in listed) == [
        ("conversation", "no_delete", "fail"),
        ("run", "cancels", "pass"),
        ("run", "cancels", "pass"),
    ]


def test_the_slack_template_links_to_the_grades_page() -> None:
    config = yaml.safe_load((CONFIG_DIR / "alertmanager.yml").read_text())
    [slack] = [c for r in config["receivers"] for c in r.get("slack_configs", [])]
    assert "{{ .Annotations.grades_page }}" in slack["text"]
