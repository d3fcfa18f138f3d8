"""The `langgraph-swarm-openinference` capture (../langgraph-swarm-openinference/capture.py) traced by OpenLIT
(`openlit.init`, its LangChain and OpenAI instrumentations, content on by default) instead: the same swarm
of front_desk, bookings and billing with handoff tools of their own names, and the same scenarios."""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "langgraph-swarm-openinference" / "capture.py"),
    init_globals={"INSTRUMENTATION": "openlit"},
    run_name="__main__",
)
