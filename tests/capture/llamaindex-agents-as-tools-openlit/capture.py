"""The LlamaIndex agents-as-tools requests of ../llamaindex-agents-as-tools-traceloop traced by OpenLIT
(`openlit.init`, its LlamaIndex and OpenAI instrumentations, message content on): that folder's capture.py
run with INSTRUMENTATION="openlit"."""

from client import run_capture

run_capture("llamaindex-agents-as-tools-traceloop", INSTRUMENTATION="openlit")
