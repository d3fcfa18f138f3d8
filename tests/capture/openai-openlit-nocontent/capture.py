"""A hand-written tool loop on the OpenAI SDK, traced by OpenLIT (`openlit.init`) with message content off
(`capture_message_content=False`).

No agent framework and no agent or tool span: each chat completion is one span of OpenLIT's OpenAI
instrumentation, and the loop (`../tool_loop.py`) runs the claims tools (`../insurance.py`) as plain Python
functions, answering their results (a failing tool as "error: <reason>") in the next request. Each scenario is
wrapped in a `handle_request` span, as a web service would; `two_requests` serves two user requests in one
trace, and `parallel` has the model ask for two calls in one response.
"""

import os

import openlit
from insurance import FUNCTIONS, REQUESTS, SCHEMAS
from openai import OpenAI
from opentelemetry import trace
from tool_loop import capture, openai_chat

SERVICE = "claims-helpline"
openlit.init(
    otlp_endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
    application_name=SERVICE,
    service_name=SERVICE,
    disable_batch=True,
    disable_metrics=True,  # the harness records traces and logs only
    disabled_instrumentors=["urllib"],  # the harness's own control calls, not the service's
    capture_message_content=False,
)
tracer = trace.get_tracer(SERVICE)


def flush() -> None:
    trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]


# With content off OpenLIT's chat spans and their `gen_ai.client.inference.operation.details` log events carry
# neither the prompts nor the completions: not what was asked, not the answer, not what the tools returned. The
# calls the model asked for stay on each chat span (`gen_ai.tool.name`, `gen_ai.tool.args`, `gen_ai.tool.call.id`,
# the calls of one response joined with ", "), so the tool calls and their arguments are carried.
LACKS = ["input", "messages", "output", "tool_results"]

capture(
    openai_chat(OpenAI(), SCHEMAS, "You are an insurance claims helpline."),
    tracer.start_as_current_span,
    flush,
    names=("happy", "forbidden", "tool_error", "parallel", "agent_error", "two_requests"),
    lacks=LACKS,
    tool_functions=FUNCTIONS,
    scenarios=REQUESTS,
    agent="helpline_loop",
)
