"""Potato evaluators as a user configures them: an experiment's `evaluators:` list loads through the config
loader and grades runs with Potato's semantics, including its quirks."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from otelgrade.config import parse_config
from otelgrade.core.errors import ConfigError
from otelgrade.core.trajectory import ToolCall, Trajectory
from otelgrade.grade.graders import build_grader
from otelgrade.grade.graders.potato import build_evaluator, list_evaluators


def run(calls: Sequence[tuple[str, Any]] = (), output: str | None = None, ground_truth: Any = None) -> Trajectory:
    return Trajectory(
        trace_id="1" * 32,
        span_id="2" * 16,
        output=output,
        ground_truth=ground_truth,
        tool_calls=[ToolCall(name=n, arguments=a) for n, a in calls],
    )


def grade(name: str, params: dict[str, Any], trajectory: Trajectory) -> Any:
    return build_evaluator(name, params)(trajectory)


def test_experiment_file_loads_as_one_suite_of_potato_graders() -> None:
    config = parse_config(
        {
            "name": "booking",
            "evaluators": [
                {"name": "trajectory_match", "params": {"mode": "unordered"}},
                {"name": "tool_use", "params": {"expected_tool": "book_flight"}},
                {"name": "exact_match", "params": {"case_sensitive": False}, "key": "answer"},
            ],
        }
    )
    [suite] = config.suites
    assert [(g.type, g.name) for g in suite.graders] == [
        ("potato.trajectory_match", "trajectory_match"),
        ("potato.tool_use", "tool_use:book_flight"),
        ("potato.exact_match", "answer"),
    ]


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ({"name": "trajectory_match", "params": {"mode": "sideways"}}, "mode"),
        ({"name": "regex_match", "params": {"pattern": "("}}, "pattern"),
        ({"name": "json_schema_match", "params": {"schema": {"type": "foo"}}}, "schema"),
        ({"name": "tool_use", "params": {}}, "expected_tool"),
        ({"name": "contains", "params": {"needle": "x"}}, "needle"),
        ({"name": "groundedness", "params": {}}, "name"),
        ({"name": "no_such", "params": {}}, "name"),
    ],
)
def test_bad_configs_fail_at_load_naming_the_key(block: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"suites": [{"name": "s", "graders": [block]}]})
    assert key in str(err.value)
    assert "suites[0].graders[0]" in str(err.value)


def test_registry_lists_what_it_builds() -> None:
    names = list_evaluators()
    assert "trajectory_match" in names and "embedding_similarity" in names
    for name in names:
        assert build_grader(
            name,
            {"expected_tool": "x"}
            if name == "tool_use"
            else {"pattern": "x"}
            if name == "regex_match"
            else {"schema": {}}
            if name == "json_schema_match"
            else {},
        )


def test_trajectory_match_reads_potato_reference_shapes() -> None:
    agent = run([("get_weather", '{"location": "NYC"}'), ("search", None)])
    conversation = {
        "conversation": [
            {"speaker": "User", "text": "weather?"},
            {"speaker": "Agent (Action)", "text": 'get_weather({"location": "NYC"})'},
            {"speaker": "agent (action)", "text": "search"},
        ]
    }
    messages = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": '{"location": "NYC"}'}}
            ],
        },
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "function_call": {"name": "search", "arguments": ""}},
    ]
    plain = [{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "search", "arguments": {}}]
    for reference in (conversation, {"messages": messages}, messages, plain):
        assert grade("trajectory_match", {"ground_truth": reference}, agent).passed, reference
    # A dict in no shape Potato knows has no calls; a bare string is one step without calls.
    assert not grade("trajectory_match", {"ground_truth": {"tool_calls": plain}}, agent).passed
    assert not grade("trajectory_match", {"ground_truth": "get_weather"}, agent).passed


def test_trajectory_match_quirks() -> None:
    # mode=subset compares arguments with the sides swapped: an EXTRA agent argument passes.
    extra = run([("f", {"q": "x", "extra": 1})])
    params = {
        "mode": "subset",
        "tool_args_match_mode": "subset",
        "ground_truth": [{"name": "f", "arguments": {"q": "x"}}],
    }
    assert grade("trajectory_match", params, extra).passed
    # Greedy matching: the same calls in another order change the verdict.
    ref = [{"name": "f", "arguments": {}}, {"name": "f", "arguments": {"a": 1}}]
    params = {"mode": "unordered", "tool_args_match_mode": "superset", "ground_truth": ref}
    assert grade("trajectory_match", params, run([("f", {"b": 2}), ("f", {"a": 1})])).passed
    assert not grade("trajectory_match", params, run([("f", {"a": 1}), ("f", {"b": 2})])).passed
    # True == 1 and 1 == 1.0, but "1" != 1.
    assert grade(
        "trajectory_match", {"ground_truth": [{"name": "f", "arguments": {"x": 1}}]}, run([("f", {"x": True})])
    ).passed
    assert not grade(
        "trajectory_match", {"ground_truth": [{"name": "f", "arguments": {"x": 1}}]}, run([("f", {"x": "1"})])
    ).passed


def test_invalid_override_is_an_error_grade_only_when_the_tool_is_compared() -> None:
    params = {"tool_args_match_overrides": {"search": "fuzzy"}, "ground_truth": [{"name": "search", "arguments": {}}]}
    result = grade("trajectory_match", params, run([("search", {})]))
    assert result.outcome == "error" and "fuzzy" in result.rationale
    params["tool_args_match_overrides"] = {"other": "fuzzy"}
    assert grade("trajectory_match", params, run([("search", {})])).outcome == "pass"


def test_tool_call_accuracy_scores_partial_credit_and_skips_without_reference() -> None:
    ref = [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}, {"name": "c", "arguments": {}}]
    result = grade("tool_call_accuracy", {}, run([("c", {}), ("x", {})], ground_truth=ref))
    assert result.score == pytest.approx(1 / 3) and result.metadata["value"] == "1/3" and not result.passed
    skipped = grade("tool_call_accuracy", {}, run([("a", {})], ground_truth=[]))
    assert skipped.outcome == "skipped" and skipped.score is None


def test_tool_use_subset_and_superset_mean_the_same() -> None:
    trajectory = run([("search", {"q": "x", "n": 5})])
    for mode in ("subset", "superset"):
        assert grade(
            "tool_use", {"expected_tool": "search", "expected_args": {"q": "x"}, "args_match_mode": mode}, trajectory
        ).passed
    assert not grade(
        "tool_use", {"expected_tool": "search", "expected_args": {"q": "x"}, "args_match_mode": "exact"}, trajectory
    ).passed


@pytest.mark.parametrize(
    ("name", "params", "output", "reference", "passed"),
    [
        ("exact_match", {}, "  Paris\n", "Paris", True),
        ("exact_match", {}, "paris", "Paris", False),
        ("exact_match", {}, None, None, True),
        ("exact_match", {}, "Paris", {"answer": "Paris"}, True),
        ("contains", {}, "The answer is PARIS", "paris", True),
        ("contains", {"substring": ""}, "anything", None, False),
        ("contains", {}, "abc", "a.c", False),
        ("regex_match", {"pattern": "42$"}, "42\n", None, True),
        ("regex_match", {"pattern": r"^\d+$"}, "٤٢", None, True),
        ("json_valid", {}, "NaN", None, True),
        ("json_valid", {}, "{} {}", None, False),
        ("json_schema_match", {"schema": {"type": "integer"}}, "36.0", None, True),
        ("json_schema_match", {"schema": {"type": "integer"}}, "true", None, False),
    ],
)
def test_text_evaluators(name: str, params: dict[str, Any], output: str | None, reference: Any, passed: bool) -> None:
    assert grade(name, params, run(output=output, ground_truth=reference)).passed is passed


def test_edit_distance_counts_code_points() -> None:
    result = grade("edit_distance", {}, run(output="a😀", ground_truth="a"))
    assert result.score == 0.5 and result.metadata["value"] == 1
    assert grade("edit_distance", {"ground_truth": "sitting"}, run(output="kitten")).score == pytest.approx(4 / 7)


def test_embedding_similarity_keeps_potato_cosine_and_clamps_the_score() -> None:
    table = {"yes": [1.0, 0.0], "no": [-1.0, 0.0], "long": [1.0, 0.0, 5.0]}
    opposite = grade("embedding_similarity", {"embed_table": table}, run(output="yes", ground_truth="no"))
    assert opposite.metadata["value"] == -1.0 and opposite.score == 0.0 and not opposite.passed
    truncated = grade("embedding_similarity", {"embed_table": table}, run(output="long", ground_truth="yes"))
    assert truncated.metadata["value"] == pytest.approx(1 / 26**0.5)
    missing = grade("embedding_similarity", {"embed_table": table}, run(output="maybe", ground_truth="yes"))
    assert missing.outcome == "error"


@pytest.fixture
def embeddings_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An OpenAI-compatible /embeddings endpoint on 127.0.0.1: 'good' and 'fine' point the same way."""
    requests: list[dict[str, Any]] = []
    vectors = {"good": [3.0, 4.0], "fine": [6.0, 8.0]}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
            data = [
                {"object": "embedding", "index": i, "embedding": vectors.get(t, [0.0, 1.0])}
                for i, t in enumerate(body["input"])
            ]
            reply = json.dumps(
                {
                    "object": "list",
                    "data": data,
                    "model": body["model"],
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    server.shutdown()
    server.server_close()


def test_embedding_similarity_through_an_openai_compatible_api(
    embeddings_server: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, requests = embeddings_server
    monkeypatch.setenv("EMBED_KEY", "sk-test")
    params = {"model_name": "my-embedder", "base_url": base_url, "api_key_env": "EMBED_KEY"}
    result = grade("embedding_similarity", params, run(output="good", ground_truth="fine"))
    assert result.passed and result.score == pytest.approx(1.0)
    assert [r["path"] for r in requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert requests[0]["model"] == "my-embedder" and requests[0]["auth"] == "Bearer sk-test"
    monkeypatch.delenv("EMBED_KEY")
    no_key = grade("embedding_similarity", params, run(output="good", ground_truth="fine"))
    assert no_key.outcome == "error" and "EMBED_KEY" in no_key.rationale
