"""The CrewAI delegation requests of ../crewai-delegation-traceloop with OpenLLMetry's content off
(TRACELOOP_TRACE_CONTENT=false): that folder's capture.py run with LACKS set.

With content off the model spans keep their finish reasons, token counts and tool definitions but no
messages, and CrewAI's instrumentation has no tool spans; it ignores the switch, so the task span still
names the request (`crewai.task.description`) and the crew span the answer (`crewai.crew.result`, with the
lead's own messages as a Python repr in `crewai.crew.tasks_output`). The trace shows no coworker's
conversation and no tool call, its arguments or its result: every run's ground truth lists `messages`,
`tool_calls`, `tool_arguments` and `tool_results` in `lacks`.
"""

import os

from client import run_capture

os.environ["TRACELOOP_TRACE_CONTENT"] = "false"
run_capture("crewai-delegation-traceloop", LACKS=["messages", "tool_arguments", "tool_calls", "tool_results"])
