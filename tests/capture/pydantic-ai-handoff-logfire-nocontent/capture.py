"""The `pydantic-ai-handoff-logfire` capture (../pydantic-ai-handoff-logfire/capture.py) with content left out:
`logfire.instrument_pydantic_ai(include_content=False)`. Every run's ground truth lists in `lacks` what the trace
cannot carry."""

from client import run_capture

run_capture("pydantic-ai-handoff-logfire", NO_CONTENT=True)
