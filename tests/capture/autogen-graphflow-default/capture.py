"""The `autogen-graphflow` capture with spans only (autogen-core's tracing, the event logger not exported); every
run's ground truth carries `lacks`, what spans alone cannot carry."""

from client import run_with_default_settings

run_with_default_settings(__file__)
