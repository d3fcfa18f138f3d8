"""The `google-adk-parallel` capture (../google-adk-parallel/capture.py) traced by
openinference-instrumentation-google-adk instead of ADK's own spans: the same fan-out, requests and ground truth."""

from client import run_capture

run_capture("google-adk-parallel", INSTRUMENTATION="openinference")
