"""The energy-utility tool loop of ../openai-traceloop-logs/capture.py on the Anthropic SDK, traced by OpenLLMetry's
opentelemetry-instrumentation-anthropic in its events mode (`use_attributes=False`): message content only on OTLP
log records.

The model is the harness's scripted Anthropic Messages API (ANTHROPIC_BASE_URL): tool calls come as `tool_use`
blocks, results go back as `tool_result` blocks (`is_error` for a failing tool). Scenarios happy, forbidden,
tool_error, agent_error (the second model call fails) and two_requests.
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "openai-traceloop-logs" / "capture.py"),
    init_globals={"ANTHROPIC": True},
    run_name="__main__",
)
