"""The CrewAI delegation requests of ../crewai-delegation-traceloop traced by OpenLIT (`openlit.init`, its CrewAI
and OpenAI instrumentations, message content on): that folder's capture.py run with INSTRUMENTATION="openlit"."""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "crewai-delegation-traceloop" / "capture.py"),
    init_globals={"INSTRUMENTATION": "openlit"},
    run_name="__main__",
)
