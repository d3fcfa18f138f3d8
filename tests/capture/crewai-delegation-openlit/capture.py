"""The CrewAI delegation requests of ../crewai-delegation-traceloop traced by OpenLIT (`openlit.init`, its CrewAI
and OpenAI instrumentations, message content on): that folder's capture.py run with INSTRUMENTATION="openlit"."""

from client import run_capture

# OpenLIT writes no span for a coworker's tools: their results stand only in the coworker's next model request,
# and a request that failed records no messages, so a failed run's trace lacks them.
run_capture("crewai-delegation-traceloop", INSTRUMENTATION="openlit", LACKS_IF_FAILED=["tool_results"])
