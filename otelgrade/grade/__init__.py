"""Grade: rebuilt trajectories in, grades out. Each run is routed to the suites whose `match` it meets, graded by
their graders (code checks at once, LLM judges on a sample), and gathered with its judges' late grades; runs that
share a conversation are held as turns and graded together once the conversation settles.
"""
