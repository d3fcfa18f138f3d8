"""The `agent-framework` capture (../agent-framework/capture.py) with the framework's default content settings.

Only happy, tool_error and agent_error; every run's ground truth carries `lacks`, what the default
trace cannot carry.
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "agent-framework" / "capture.py"),
    init_globals={"DEFAULT_SETTINGS": True},
    run_name="__main__",
)
