"""The `autogen-magentic-one` capture with the framework's default content settings: only the spans are exported
(the event logger's content is not); every run's ground truth carries `lacks`, what the default trace cannot carry."""

from client import run_with_default_settings

run_with_default_settings(__file__)
