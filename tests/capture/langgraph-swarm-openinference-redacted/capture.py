"""The `langgraph-swarm-openinference` capture (../langgraph-swarm-openinference/capture.py) with OpenInference's
hide switches on.

OpenInference writes `__REDACTED__` where it hides a value; every run's ground truth lists in `lacks` what the
trace therefore cannot carry: the request, the answer, the conversation, and the tool arguments and results.
(The handoffs still leave the conversation in Python text: LangGraph's `ParentCommand`, which carries a handoff
out of the worker's graph, is recorded as an `exception` event on the tool node's span, its message the
`Command` with every message so far. No attribute holds it.)
"""

import os
import runpy
from pathlib import Path

for switch in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES", "INPUT_TEXT", "OUTPUT_TEXT"):
    os.environ[f"OPENINFERENCE_HIDE_{switch}"] = "true"

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "langgraph-swarm-openinference" / "capture.py"),
    init_globals={"HIDDEN": ["input", "messages", "output", "tool_arguments", "tool_results"]},
    run_name="__main__",
)
