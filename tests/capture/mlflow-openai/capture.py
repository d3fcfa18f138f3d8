"""MLflow Tracing, default span schema: `mlflow.openai.autolog()` around a hand-written tool loop
(`decorated_loop.py`).

The agent function and the tools are decorated `@mlflow.trace(span_type=AGENT / TOOL)` as MLflow documents;
autolog adds a CHAT_MODEL span per `chat.completions.create`. MLflow exports over OTLP because
OTEL_EXPORTER_OTLP_ENDPOINT is set; with MLFLOW_USE_DEFAULT_TRACER_PROVIDER=false it adds its exporting
processor to the service's own TracerProvider (`mlflow.tracing.enable()` at start-up, before the first request's
span), so the service's `handle_request` span is the trace's root.
"""

import os

os.environ["MLFLOW_USE_DEFAULT_TRACER_PROVIDER"] = "false"

import mlflow
from decorated_loop import TOOLS, agent, run_scenarios
from mlflow.entities import SpanType
from openai import OpenAI
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
trace.set_tracer_provider(provider)
mlflow.tracing.enable()  # MLflow joins the provider now, before the service's first span
mlflow.openai.autolog()

tools = {name: mlflow.trace(f, span_type=SpanType.TOOL) for name, f in TOOLS.items()}
travel_agent = mlflow.trace(agent(OpenAI(), tools), span_type=SpanType.AGENT)
run_scenarios(travel_agent, trace.get_tracer("travel-service"), provider.force_flush)
