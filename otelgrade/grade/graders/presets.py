"""Ready-made judges for the reference-free checks users otherwise write prompts for: task completion, answer
relevance, groundedness in the tool results and tool selection.

Each is the rubric judge with a prompt shipped in `prompts/<name>.txt` (criteria, score anchors, `{input}`,
`{submission}`, `{trajectory}`): the model answers a score from 0.0 to 1.0 and the run passes at `threshold`.
Sampling, limits, budget and outage rules are those of every judge (`sample`, `budget`, `model`, ... per
grader); a run whose trace lacks what the prompt shows the model (content capture off) is `skipped`.
"""

from __future__ import annotations

from importlib import resources
from typing import Annotated, Any, Literal

from pydantic import Field

from otelgrade.core.trajectory import Part
from otelgrade.grade.graders.base import grader
from otelgrade.grade.graders.rubric import Judge, judge_controls


def prompt_text(name: str) -> str:
    """The shipped prompt of a preset."""
    return (resources.files("otelgrade.grade.graders") / "prompts" / f"{name}.txt").read_text()


def register_preset(name: str, doc: str, reads: tuple[Part, ...] = ()) -> None:
    """`<name>_judge`: the rubric judge on `prompts/<name>.txt`; `reads` adds parts beyond its placeholders."""

    @grader(f"{name}_judge", reads=reads)
    def factory(
        threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5,
        response_format: Literal["json_schema", "json_object"] = "json_schema",
        **controls: Any,
    ) -> Judge:
        return Judge(f"{name}_judge", prompt_text(name), judge_controls(controls), response_format, threshold=threshold)

    factory.__doc__ = f"{doc} A 0.0-1.0 score by the anchors in `prompts/{name}.txt`; passes at `threshold`."


register_preset("task_completion", "Did the agent do what the user asked, as the whole run shows?", ("output",))
register_preset("answer_relevance", "Does the final answer address the request (not whether it is accurate)?")
register_preset("groundedness", "Is every claim in the final answer backed by a tool result?", ("tool_results",))
register_preset("tool_selection", "Did the agent call the right tools with sensible arguments?", ("tool_arguments",))
