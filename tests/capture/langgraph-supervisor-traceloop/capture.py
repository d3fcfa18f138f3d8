"""The `langgraph-supervisor-openlit` capture (../langgraph-supervisor-openlit/capture.py) traced by OpenLLMetry's
traceloop-sdk (`Traceloop.init`, its LangChain instrumentation) instead: the same supervisor graph and scenarios."""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "langgraph-supervisor-openlit" / "capture.py"),
    init_globals={"INSTRUMENTATION": "traceloop"},
    run_name="__main__",
)
