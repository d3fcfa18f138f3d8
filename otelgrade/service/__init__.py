"""The running service: `otelgrade serve`'s process lifecycle (receivers, grading thread, admin endpoint), hot
reload, and the grading workers that share a machine's cores. It wires every step together; no step imports it.
"""
