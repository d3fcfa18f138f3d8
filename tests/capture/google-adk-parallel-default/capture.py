"""The `google-adk-parallel` capture (../google-adk-parallel/capture.py) with ADK's default content settings: every
run's ground truth carries `lacks`, what the default trace cannot carry."""

from client import run_with_default_settings

run_with_default_settings(__file__)
