"""The `autogen-agenttool-openinference` capture (../autogen-agenttool-openinference/capture.py) with
OpenInference's hide switches on.

OpenInference writes `__REDACTED__` where it hides a value; every run's ground truth lists in `lacks` what the
trace therefore cannot carry: the request, the answer, the conversation and the tool results. The tool arguments
stay: the AutoGen AgentChat instrumentation writes each call's arguments to `tool.parameters`, which no switch
hides.
"""

import os
import runpy
from pathlib import Path

for switch in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES", "INPUT_TEXT", "OUTPUT_TEXT"):
    os.environ[f"OPENINFERENCE_HIDE_{switch}"] = "true"

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "autogen-agenttool-openinference" / "capture.py"),
    init_globals={"HIDDEN": ["input", "messages", "output", "tool_results"]},
    run_name="__main__",
)
