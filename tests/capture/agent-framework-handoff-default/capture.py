"""The `agent-framework-handoff` capture (../agent-framework-handoff/capture.py) with the framework's default
content settings (ENABLE_SENSITIVE_DATA unset); every run's ground truth carries `lacks`, what the default
trace cannot carry.
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "agent-framework-handoff" / "capture.py"),
    init_globals={"DEFAULT_SETTINGS": True},
    run_name="__main__",
)
