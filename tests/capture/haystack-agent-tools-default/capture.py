"""The `haystack-agent-tools` capture with Haystack's default content setting (content tracing off); every run's
ground truth carries `lacks`, what the default trace cannot carry."""

from client import run_with_default_settings

run_with_default_settings(__file__)
