"""The `autogen-selector` capture (../autogen-selector/capture.py) with AutoGen's native tracing alone (spans, no
event-logger export); every run's ground truth carries `lacks`, what spans alone cannot carry.
"""

import runpy
from pathlib import Path

runpy.run_path(
    str(Path(__file__).resolve().parent.parent / "autogen-selector" / "capture.py"),
    init_globals={"DEFAULT_SETTINGS": True},
    run_name="__main__",
)
