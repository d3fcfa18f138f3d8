"""The `langfuse-openai` capture (../langfuse-openai/capture.py) with a Langfuse `mask=` function that hides every
observation's input and output behind a placeholder.

Only happy, tool_error and agent_error; every run's ground truth carries `lacks`, what the masked trace cannot
carry.
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "langfuse-openai" / "capture.py"),
    init_globals={"MASKED": True},
    run_name="__main__",
)
