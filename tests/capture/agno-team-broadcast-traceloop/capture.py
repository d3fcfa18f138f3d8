"""The `agno-team-broadcast-openinference` requests (../agno-team-coordinate-openinference/capture.py with the Team in
broadcast mode) traced by OpenLLMetry: Traceloop's opentelemetry-instrumentation-agno for the team, agent and tool
spans and its opentelemetry-instrumentation-openai for the model calls (content on, its default)."""

from client import run_capture

run_capture("agno-team-coordinate-openinference", MODE="broadcast", INSTRUMENTATION="openllmetry")
