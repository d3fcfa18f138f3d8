"""Offline tools: read captured traces and trajectories from files, grade an archive's history, and compare two
configs' or a judge's and people's verdicts on the same runs. They grade through the same `Pipeline` as `serve`.
"""
