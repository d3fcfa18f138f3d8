"""How each grader pages, from the config to the info metric the shipped alert rules join on:
guardrails on any failure, scores and judges on their objective, a grader set `alert: none` never;
a reload drops what the new config no longer has. And where alerts link: `ui.external_url`."""

from __future__ import annotations

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.metrics import Metrics
from otelgrade.core.settings import UiSettings
from otelgrade.export.ui import page_address
from otelgrade.grade.grading import Grading, Suite, alert_policies


def suites(graders: list[dict[str, object]], name: str = "booking") -> list[Suite]:
    config = parse_config({"suites": [{"name": name, "graders": graders}]})
    return [Suite.build(s.name, s.match, s.graders) for s in config.suites]


def exported(metrics: Metrics) -> set[tuple[str, str, str]]:
    """The (suite, grader, policy) series of otelgrade_grader_alert_policy, each 1."""
    (family,) = [f for f in metrics.registry.collect() if f.name == "otelgrade_grader_alert_policy"]
    assert all(sample.value == 1 for sample in family.samples)
    return {(s.labels["suite"], s.labels["grader"], s.labels["policy"]) for s in family.samples}


def test_guardrails_page_on_any_failure_and_scores_on_their_objective_by_default() -> None:
    (suite,) = suites(
        [
            {"name": "safe", "type": "tools_not_called", "tools": ["delete_account"]},
            {"name": "no_refunds", "type": "tool-calls", "disallowed": ["refund"]},
            {"name": "path", "type": "tool-calls", "required": ["search"], "disallowed": ["refund"]},
            {"name": "budget", "type": "max_tool_calls", "max": 5},
            {"name": "helpful", "type": "rubric", "prompt": "Is {submission} helpful?"},
        ]
    )
    assert alert_policies(suite) == {
        "safe": "any",
        "no_refunds": "any",
        "path": "objective",  # also grades how the task was done: a single miss is not a page
        "budget": "objective",
        "helpful": "objective",
    }


def test_the_config_sets_a_graders_policy() -> None:
    (suite,) = suites(
        [
            {"name": "safe", "type": "tools_not_called", "tools": ["x"], "alert": "objective"},
            {"name": "harmless", "type": "rubric", "prompt": "Is {submission} harmless?", "alert": "any"},
            {"name": "trial", "type": "max_tool_calls", "max": 5, "alert": "none"},
        ]
    )
    assert alert_policies(suite) == {"safe": "objective", "harmless": "any", "trial": "none"}


def test_an_unknown_policy_is_refused_naming_the_choices() -> None:
    with pytest.raises(ConfigError) as raised:
        suites([{"name": "safe", "type": "tools_not_called", "tools": ["x"], "alert": "always"}])
    message = str(raised.value)
    assert "suites[0].graders[0].alert" in message
    assert "`any`" in message and "`objective`" in message and "'always'" in message


def test_the_policy_metric_follows_reloads() -> None:
    metrics = Metrics()
    grading = Grading(suites([{"name": "safe", "type": "tools_not_called", "tools": ["x"]}]), lambda _: None, metrics)
    assert exported(metrics) == {("booking", "safe", "any")}
    # Re-classed and joined by another grader, then the whole suite renamed: no stale series is left to page.
    grading.install(
        suites(
            [
                {"name": "safe", "type": "tools_not_called", "tools": ["x"], "alert": "objective"},
                {"name": "budget", "type": "max_tool_calls", "max": 5},
            ]
        )
    )
    assert exported(metrics) == {("booking", "safe", "objective"), ("booking", "budget", "objective")}
    grading.install(suites([{"name": "budget", "type": "max_tool_calls", "max": 5}], name="travel"))
    assert exported(metrics) == {("travel", "budget", "objective")}


def test_alerts_link_to_the_external_url_else_to_this_host() -> None:
    given = UiSettings(external_url="https://grades.example.com/otelgrade")
    assert given.external_url == "https://grades.example.com/otelgrade/"
    assert page_address(given, "0.0.0.0", 9464, tls=False) == "https://grades.example.com/otelgrade/"
    assert page_address(UiSettings(), "127.0.0.1", 9464, tls=True) == "https://127.0.0.1:9464/"
    assert page_address(UiSettings(), "0.0.0.0", 9464, tls=False).endswith(":9464/")
    for wrong in ("grades.example.com", "https://grades.example.com/?suite=a"):
        with pytest.raises(ValueError, match="external_url"):
            UiSettings(external_url=wrong)
