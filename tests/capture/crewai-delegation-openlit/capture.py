"""The CrewAI delegation requests of ../crewai-delegation-traceloop traced by OpenLIT (`openlit.init`, its CrewAI
and OpenAI instrumentations, message content on): that folder's capture.py run with INSTRUMENTATION="openlit"."""

from client import run_capture

run_capture("crewai-delegation-traceloop", INSTRUMENTATION="openlit")
