"""The shared words every step speaks: received spans, the `Trajectory` graders see, grades and their results,
settings, errors that name the fix, the metrics, time-budgeted patterns and the plugin registry.

Nothing here imports another step; every step may import from here.
"""
