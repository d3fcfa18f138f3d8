"""The hotel tool loop of ../openai-traceloop-nocontent/capture.py on the Anthropic SDK, traced by OpenLLMetry's
opentelemetry-instrumentation-anthropic with message content off (TRACELOOP_TRACE_CONTENT=false).

The model is the harness's scripted Anthropic Messages API (ANTHROPIC_BASE_URL): tool calls come as `tool_use`
blocks, results go back as `tool_result` blocks (`is_error` for a failing tool). Each Messages API call is seen
twice: OpenLLMetry's `anthropic.chat` span and the Anthropic SDK's own `anthropic.messages.create` span, both
without content, so every run lacks the request, the answer, the conversation and the tool calls. Scenarios
happy, forbidden, tool_error, agent_error (the last model call fails) and two_requests.
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "openai-traceloop-nocontent" / "capture.py"),
    init_globals={"ANTHROPIC": True},
    run_name="__main__",
)
