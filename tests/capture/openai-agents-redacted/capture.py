"""The OpenAI Agents SDK single-agent scenarios (happy, forbidden, tool_error) with OpenInference's hide
switches on: ../openai-agents-multi/capture.py run with REDACTED=True.

OpenInference writes `__REDACTED__` where it hides a value; every run's ground truth lists in `lacks`
what the trace therefore cannot carry.
"""

import os
import runpy
from pathlib import Path

for switch in ("INPUTS", "OUTPUTS", "INPUT_MESSAGES", "OUTPUT_MESSAGES", "INPUT_TEXT", "OUTPUT_TEXT"):
    os.environ[f"OPENINFERENCE_HIDE_{switch}"] = "true"

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "openai-agents-multi" / "capture.py"),
    init_globals={"REDACTED": True},
    run_name="__main__",
)
