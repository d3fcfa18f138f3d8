"""The `langgraph-supervisor-openlit` capture (../langgraph-supervisor-openlit/capture.py) with OpenLIT's message
content switched off (`openlit.init(capture_message_content=False)`): the same supervisor graph and scenarios."""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "langgraph-supervisor-openlit" / "capture.py"),
    init_globals={"INSTRUMENTATION": "openlit-redacted"},
    run_name="__main__",
)
