"""The `agent-framework-agents-as-tools` capture (../agent-framework-agents-as-tools/capture.py) with the
framework's default content settings (sensitive data off): every run's ground truth carries `lacks`, what the
default trace cannot carry."""

from client import run_with_default_settings

run_with_default_settings(__file__)
