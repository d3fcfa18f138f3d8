"""The claims tool loop of ../litellm-otel/capture.py with `litellm.turn_off_message_logging = True`, LiteLLM's
switch that keeps message content off the spans of its OpenTelemetry callback; the same scenarios."""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "litellm-otel" / "capture.py"),
    init_globals={"REDACTED": True},
    run_name="__main__",
)
