"""Judge graders give the same outcomes online (`serve`) and offline (`grade`) on the captured fixtures:
the same runs are sampled and each gets the same verdict from the (fake) judge model."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from tests.fake_openai import FakeOpenAI, Reply
from tests.paths import FIXTURES
from tests.replay import exporters, grade_offline, replay_folder

FIXTURES = FIXTURES


def judge(body: dict[str, Any]) -> Reply:
    """A deterministic judge: answers that mention a booking score high, others low."""
    prompt = json.dumps(body["messages"])
    return Reply.grade(0.9 if "booked" in prompt.lower() else 0.2, "fake judgement")


def outcomes(grades: list[dict[str, Any]]) -> Counter[tuple[str, str, str, str]]:
    return Counter((g["trace_id"], g["span_id"], g["grader"], g["outcome"]) for g in grades)


def test_rubric_outcomes_are_the_same_online_and_offline(serve, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    folders = sorted({p.parent for p in (FIXTURES / "traces").rglob("*.pb")})
    with FakeOpenAI(default=judge) as fake:
        config = {
            "judge": {"base_url": fake.base_url, "model": "gpt-4o-mini", "timeout": "5s"},
            "suites": [
                {
                    "name": "quality",
                    "graders": [
                        {
                            "name": "helpful",
                            "type": "rubric",
                            "sample": 0.5,
                            "prompt": "Does this answer the request?\nRequest: {input}\nAnswer: {submission}",
                        },
                        {"name": "trajectory", "type": "trajectory_judge", "sample": 1.0, "threshold": 0.5},
                    ],
                }
            ],
            "assembly": {"settle": "300ms"},
        }
        server = serve(config)
        offline_grades = grade_offline(server.config_path, folders)
        expected = outcomes(offline_grades)
        by_outcome = Counter(outcome for *_, outcome in expected.elements())
        assert by_outcome["pass"] and by_outcome["fail"] and by_outcome["skipped"]  # sampled, and discriminating
        errors = [g for g in offline_grades if g["outcome"] == "error"]
        # Only runs that ended without an answer may be errors (nothing to judge); never a judge failure.
        assert all(g["rationale"].startswith("nothing to grade") for g in errors), errors
        requests_offline = len(fake.requests)

        span_exporter, log_exporter = exporters("grpc", server.grpc_address, server.http_url)
        for folder in folders:
            replay_folder(folder, span_exporter, log_exporter)
        span_exporter.shutdown()
        log_exporter.shutdown()
        server.wait_for_metric(
            "otelgrade_grades_total", None, lambda _: len(server.grades()) >= sum(expected.values()), timeout=60
        )
        assert server.stop() == 0
        assert outcomes(server.grades()) == expected
        assert len(fake.requests) == 2 * requests_offline  # online judged exactly the runs offline judged
