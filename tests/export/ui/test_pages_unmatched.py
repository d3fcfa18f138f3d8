"""A suite that matches nothing is not silent on the grades page: live, the empty page says which runs arrived
and matched no suite, beside what each suite matches (the README's `agent_name: "^booking"` example)."""

from __future__ import annotations

import html
import re
import urllib.request

from tests.e2e.test_alerting_live import FAILING, PASSING, send_runs

TRAVEL_ONLY = {
    "suites": [
        {
            "name": "travel",
            "match": {"agent_name": "^travel"},
            "graders": [{"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]}],
        }
    ]
}


def page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return html.unescape(re.sub(r"<[^>]+>", " ", response.read().decode()))


def words(text: str) -> str:
    return " ".join(text.split())


def test_the_empty_grades_page_explains_which_runs_matched_no_suite(serve):
    server = serve(TRAVEL_ONLY)
    before = words(page(server.metrics_url + "/"))
    assert "No grades yet" in before and "No agent run has arrived since otelgrade started" in before

    send_runs(server.grpc_address, PASSING, 2)
    send_runs(server.grpc_address, FAILING, 1)
    server.wait_for_metric("otelgrade_runs_unmatched_total", {"service": "booking-agent", "agent": "booking"}, 3)

    after = words(page(server.metrics_url + "/"))
    assert "No grades yet" in after
    assert "3 request run(s) matched no suite" in after
    # The runs as they are (service, agent, where they were read from, how many) and the suite beside them.
    assert re.search(r"booking-agent booking \S+ 3", after), after
    assert "travel {agent_name: '^travel'}" in after
    assert server.grades() == []
    assert server.stop() == 0
