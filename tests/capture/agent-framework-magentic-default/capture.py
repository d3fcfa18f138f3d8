"""The `agent-framework-magentic` capture with the framework's default settings (no sensitive data); every run's
ground truth carries `lacks`, what the default trace cannot carry."""

from client import run_with_default_settings

run_with_default_settings(__file__)
