"""The LlamaIndex agents-as-tools requests of ../llamaindex-agents-as-tools-traceloop traced by OpenLIT
(`openlit.init`, its LlamaIndex and OpenAI instrumentations, message content on): that folder's capture.py
run with INSTRUMENTATION="openlit"."""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "llamaindex-agents-as-tools-traceloop" / "capture.py"),
    init_globals={"INSTRUMENTATION": "openlit"},
    run_name="__main__",
)
