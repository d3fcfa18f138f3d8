"""The `strands-graph` capture (../strands-graph/capture.py) with Strands' telemetry on the latest experimental GenAI
conventions (OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental): messages as `gen_ai.input.messages` /
`gen_ai.output.messages` attributes and tool calls as message parts, instead of span events. The same requests
and ground truth.
"""

import os
import runpy
from pathlib import Path

os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"

runpy.run_path(str(Path(__file__).resolve().parent.parent / "strands-graph" / "capture.py"), run_name="__main__")
