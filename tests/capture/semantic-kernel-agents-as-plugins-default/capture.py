"""The `semantic-kernel-agents-as-plugins` capture (../semantic-kernel-agents-as-plugins/capture.py) run with the
instrumentation's default settings (DEFAULT_SETTINGS); every run's ground truth carries `lacks`, what the
trace then cannot carry.
"""

from client import run_with_default_settings

run_with_default_settings(__file__)
