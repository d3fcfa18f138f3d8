"""The OpenAI Agents SDK requests of ../openai-agents-traceloop (handoffs renamed with `tool_name_override`,
`researcher.as_tool(tool_name="ask_researcher")`) traced by the OpenTelemetry contrib package
opentelemetry-instrumentation-openai-agents-v2 (GenAI semantic conventions, content on by default):
../openai-agents-traceloop/capture.py run with CONTRIB=True.
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "openai-agents-traceloop" / "capture.py"),
    init_globals={"CONTRIB": True},
    run_name="__main__",
)
