"""The SDK set-up docs/operations.md gives for agents that configure OpenTelemetry in code exports over the
protocol OTEL_EXPORTER_OTLP_PROTOCOL names: run as written, in a process of its own, against `otelgrade serve`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "operations.md"
AGENT_RUN = """
tracer = trace.get_tracer("booking-agent")
with tracer.start_as_current_span("invoke_agent booking", attributes={"gen_ai.operation.name": "invoke_agent",
                                                                       "gen_ai.agent.name": "booking"}):
    with tracer.start_as_current_span("chat gpt-4o-mini", attributes={"gen_ai.operation.name": "chat"}):
        pass
provider.shutdown()
"""


def snippet() -> str:
    section = DOC.read_text().split("### Setting up the SDK in code", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the section has a Python snippet"
    return match.group(1)


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_the_documented_sdk_setup_exports_over_the_protocol_the_environment_names(serve, protocol: str) -> None:
    server = serve()
    endpoint = f"http://{server.grpc_address}" if protocol == "grpc" else server.http_url
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_SERVICE_NAME": "booking-agent",
    }
    result = subprocess.run(
        [sys.executable, "-c", snippet() + AGENT_RUN], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    server.wait_for_metric("otelgrade_runs_total", {"service": "booking-agent", "agent": "booking"}, 1)
    assert server.metric("otelgrade_spans_received_total", {"protocol": protocol.split("/")[0]}) == 2
    assert server.stop() == 0
