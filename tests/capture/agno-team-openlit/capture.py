"""The Agno Team requests of ../agno-team-traceloop traced by OpenLIT (`openlit.init`, its agno and OpenAI
instrumentations, message content on): that folder's capture.py run with INSTRUMENTATION="openlit"."""

from client import run_capture

run_capture("agno-team-traceloop", INSTRUMENTATION="openlit")
