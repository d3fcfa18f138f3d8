"""A hand-written tool loop on the OpenAI SDK, traced by openinference-instrumentation-openai with every content
switch of OpenInference's TraceConfig on (OPENINFERENCE_HIDE_INPUTS, _OUTPUTS, _INPUT_MESSAGES, _OUTPUT_MESSAGES).

No agent framework and no agent or tool span: each chat completion is one LLM span, and the energy utility's tools
(`../grid.py`) are plain Python functions the loop (`../tool_loop.py`) calls itself. With the switches on, the
spans keep the model, the token counts and the tool definitions, but neither the request, the answer, the messages
nor the tool calls the model asked for: every run lacks them. Each request is wrapped in a `handle_request` span;
in `two_customers` two requests are served in one trace, each in its own `handle_request` span under the
application's `process_inbox` span: two runs, which only those spans tell apart.
"""

import os

from client import Scenario
from grid import FUNCTIONS, REQUESTS
from hotel import chat_schemas
from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from telemetry import flush, traced
from tool_loop import capture, openai_chat, serve

for switch in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES"):  # read when the instrumentor starts
    os.environ[f"OPENINFERENCE_HIDE_{switch}"] = "true"
tracer = traced("energy-billing-loop", lambda: [OpenAIInstrumentor()])
chat = openai_chat(OpenAI(), chat_schemas(FUNCTIONS), "You are an energy utility's account assistant.")
LACKS = ["input", "messages", "output", "tool_arguments", "tool_calls", "tool_results"]

capture(
    chat,
    tracer.start_as_current_span,
    flush,
    names=REQUESTS,
    lacks=LACKS,
    tool_functions=FUNCTIONS,
    scenarios={name: ([request], replies) for name, (request, replies) in REQUESTS.items()},
    agent="account_loop",
)

fault, close = REQUESTS["fault_reported"], REQUESTS["close_account"]
with Scenario("two_customers", fault[1] + close[1]) as inbox:
    with tracer.start_as_current_span("process_inbox"):
        for request in (fault[0], close[0]):
            with tracer.start_as_current_span("handle_request"):
                serve(inbox, chat(request), request, FUNCTIONS, LACKS, "account_loop")
    flush()
