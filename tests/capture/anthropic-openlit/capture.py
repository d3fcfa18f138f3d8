"""A hand-written tool loop on the Anthropic SDK, traced by OpenLIT (`openlit.init`, its Anthropic instrumentation,
message content as OpenLIT records it by default).

No agent framework and no agent or tool span: each Messages API call is one OpenLIT `chat` span, and the energy
utility's grid desk tools (`../grid.py`) are plain Python functions the loop (`../tool_loop.py`) calls itself; their
results reach the trace only as the `tool_result` blocks (`is_error` for a failing tool) of the next request. The
model is the harness's scripted Messages API (ANTHROPIC_BASE_URL). Each request is wrapped in a `handle_request`
span; in `two_customers` two requests are served one after the other under one `handle_request` span, each a fresh
conversation.
"""

from anthropic import Anthropic
from client import Scenario
from grid import FUNCTIONS, REQUESTS
from hotel import chat_schemas, messages_tools
from telemetry import flush, traced
from tool_loop import anthropic_chat, capture, serve

tracer = traced("grid-desk")
chat = anthropic_chat(Anthropic(max_retries=0), messages_tools(chat_schemas(FUNCTIONS)), "You are a power grid desk.")
AGENT = "grid_loop"

SCENARIOS = {name: ([request], replies) for name, (request, replies) in REQUESTS.items()}
FAILED = "backend_down"
for names, lacks in (([n for n in SCENARIOS if n != FAILED], []), ([FAILED], ["tool_results"])):
    # a tool's result stands only in the next model request, and OpenLIT records no messages on a request that
    # failed: the failed run's trace lacks the result of the tool it ran last
    capture(
        chat,
        tracer.start_as_current_span,
        flush,
        names=names,
        lacks=lacks,
        tool_functions=FUNCTIONS,
        scenarios=SCENARIOS,
        agent=AGENT,
    )

fault, close = REQUESTS["fault_reported"], REQUESTS["close_account"]
with Scenario("two_customers", fault[1] + close[1]) as inbox:
    with tracer.start_as_current_span("handle_request"):
        for request in (fault[0], close[0]):
            serve(inbox, chat(request), request, FUNCTIONS, [], AGENT)
    flush()
