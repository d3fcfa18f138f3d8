"""The otelgrade benchmark: a load generator and a runner (`python -m bench.run`)."""
