"""The `agent-framework-concurrent` capture with the framework's default content settings: sensitive data stays off
(ENABLE_SENSITIVE_DATA unset); every run's ground truth carries `lacks`, what the default trace cannot carry."""

from client import run_with_default_settings

run_with_default_settings(__file__)
