"""The `logfire-openai-agents` capture (../logfire-openai-agents/capture.py) with Logfire's scrubbing hiding content.

`logfire.configure(scrubbing=ScrubbingOptions(extra_patterns=["messages", "input", "output"]))`: before export,
Logfire replaces every attribute value (and every value inside a JSON attribute) whose key matches by
"[Scrubbed due to '<match>']". Only happy, tool_error and agent_error; every run's ground truth lists in
`lacks` what the scrubbed trace cannot carry. (Logfire never scrubs the spans of `instrument_openai()`.)
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "logfire-openai-agents" / "capture.py"),
    init_globals={"SCRUBBED": True},
    run_name="__main__",
)
