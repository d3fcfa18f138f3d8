"""Langfuse Python SDK (OTel-based): `@observe` agent and tools around a hand-written tool loop
(`decorated_loop.py`) on the `langfuse.openai` drop-in client, which records each chat completion as a generation.

Langfuse adds its span processor to the service's TracerProvider and exports to
`{LANGFUSE_BASE_URL}/api/public/otel/v1/traces` (the harness; the keys are any value). Its default span filter
drops spans of scopes it does not know, so the service's own `handle_request` span never leaves the process and
the agent observation's parent is missing from the trace, as it is in production. `../langfuse-openai-masked`
runs this file with MASKED=True: a `mask=` function hides every input and output behind a placeholder.
"""

import os

from decorated_loop import TOOLS, agent, run_scenarios
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

MASKED = globals().get("MASKED", False)
os.environ["LANGFUSE_BASE_URL"] = os.environ["CAPTURE_HARNESS_URL"]
os.environ["LANGFUSE_PUBLIC_KEY"] = "pk-lf-capture"
os.environ["LANGFUSE_SECRET_KEY"] = "sk-lf-capture"
os.environ["LANGFUSE_OTEL_COMPRESSION"] = "none"  # the recorder reads bodies as sent (its server undoes gzip)

from langfuse import Langfuse, observe  # noqa: E402
from langfuse.openai import OpenAI  # noqa: E402

provider = TracerProvider(resource=Resource.create({"service.name": "travel-service"}))
trace.set_tracer_provider(provider)
langfuse = Langfuse(mask=(lambda data, **_: "[REDACTED]") if MASKED else None)

tools = {name: observe(f, as_type="tool") for name, f in TOOLS.items()}
travel_agent = observe(agent(OpenAI(), tools), as_type="agent")
if MASKED:
    LACKS = ["input", "messages", "output", "tool_arguments", "tool_results"]
    run_scenarios(
        travel_agent, trace.get_tracer("travel-service"), langfuse.flush, ("happy", "tool_error", "agent_error"), LACKS
    )
else:
    run_scenarios(travel_agent, trace.get_tracer("travel-service"), langfuse.flush)
