"""The LlamaIndex agents-as-tools requests of ../llamaindex-agents-as-tools-traceloop traced by OpenLIT
(`openlit.init`, its LlamaIndex and OpenAI instrumentations, message content on): that folder's capture.py
run with INSTRUMENTATION="openlit"."""

from client import run_capture

# Only model calls are on this trace: a tool's result stands only in the next model request, and a request that
# failed records no messages, so a failed run's trace lacks the results its failed requests would have shown.
run_capture("llamaindex-agents-as-tools-traceloop", INSTRUMENTATION="openlit", LACKS_IF_FAILED=["tool_results"])
