"""The `langgraph-openinference` capture (../langgraph-openinference/capture.py) traced by OpenLLMetry (Traceloop)
instead: the same agents and scenarios, the `opentelemetry-instrumentation-langchain` instrumentor."""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "langgraph-openinference" / "capture.py"),
    init_globals={"INSTRUMENTATION": "traceloop"},
    run_name="__main__",
)
