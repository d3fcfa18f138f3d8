"""The `agno-team-coordinate-openinference` capture (../agno-team-coordinate-openinference/capture.py) with the
Team in broadcast mode: one delegation tool call runs every member, and the leader composes their answers."""

from client import run_capture

run_capture("agno-team-coordinate-openinference", MODE="broadcast")
