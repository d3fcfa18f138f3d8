"""The `semantic-kernel-magentic` capture with the framework's default content settings: only the non-sensitive
diagnostics switch is on; every run's ground truth carries `lacks`, what the default trace cannot carry."""

from client import run_with_default_settings

run_with_default_settings(__file__)
