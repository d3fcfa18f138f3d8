"""Semantic Kernel diagnostics without the sensitive switch: happy, tool_error and agent_error.

Runs the script of the `semantic-kernel` source with CAPTURE_SK_DEFAULT=1, which turns on only
SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS (spans, no message content).
"""

import os
import runpy
from pathlib import Path

os.environ["CAPTURE_SK_DEFAULT"] = "1"
runpy.run_path(str(Path(__file__).resolve().parent.parent / "semantic-kernel" / "capture.py"), run_name="__main__")
