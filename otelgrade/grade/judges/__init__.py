"""LLM judges: what a judge grader asks (`Judgement`, `JudgeRequest`) and the client that asks it.

Graders see only `JudgeClient`; the runner that implements it (`otelgrade.grade.judges.runner.JudgeRunner`,
which loads `openai`) is created by the server and the CLI.
"""

from otelgrade.grade.judges.client import DISABLED, JudgeClient
from otelgrade.grade.judges.request import Judgement, JudgeRequest, is_reasoning_model

__all__ = ["DISABLED", "JudgeClient", "JudgeRequest", "Judgement", "is_reasoning_model"]
