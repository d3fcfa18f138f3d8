"""AutoGen's native tracing alone (spans, no event-logger export): happy, tool_error and agent_error.

Runs the script of the `autogen` source with CAPTURE_AUTOGEN_DEFAULT=1.
"""

import os
import runpy
from pathlib import Path

os.environ["CAPTURE_AUTOGEN_DEFAULT"] = "1"
runpy.run_path(str(Path(__file__).resolve().parent.parent / "autogen" / "capture.py"), run_name="__main__")
