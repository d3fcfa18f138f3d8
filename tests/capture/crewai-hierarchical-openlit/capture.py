"""The hierarchical CrewAI requests of ../crewai-hierarchical-traceloop traced by OpenLIT (`openlit.init`, its CrewAI
and OpenAI instrumentations, message content on): that folder's capture.py run with INSTRUMENTATION="openlit"."""

from client import run_capture

# OpenLIT writes no span for a worker's tools: their results stand only in the worker's next model request, and a
# request that failed records no messages, so a failed run's trace lacks them.
run_capture("crewai-hierarchical-traceloop", INSTRUMENTATION="openlit", LACKS_IF_FAILED=["tool_results"])
