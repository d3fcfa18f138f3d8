"""The Anthropic SDK tool loop of ../logfire-anthropic/capture.py traced by openinference-instrumentation-anthropic.

No agent framework and no agent or tool span: each `messages.create` is one LLM span; the tools are plain
functions whose results reach the trace only as `tool_result` blocks of the next request. Scenarios happy,
forbidden, tool_error, agent_error (the last model call fails) and two_requests (two separate user requests
in one trace, each its own conversation).
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "logfire-anthropic" / "capture.py"),
    init_globals={"OPENINFERENCE": True},
    run_name="__main__",
)
