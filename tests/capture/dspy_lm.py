"""DSPy's model for capture scripts: `dspy.LM` on the scripted model, its response cache and retries off (every step
one request), and a count of the requests DSPy makes (its own callback, not the spans). Needs dspy; scripts set
LITELLM_LOCAL_MODEL_COST_MAP before they import it."""

from __future__ import annotations

import os
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback


class ModelCalls(BaseCallback):
    """Counts the requests DSPy makes to the model; reset `count` before each run."""

    count = 0

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        ModelCalls.count += 1


def configure() -> None:
    """Point DSPy at the scripted model, counting its requests."""
    lm = dspy.LM(
        "openai/gpt-4o-mini",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        cache=False,
        num_retries=0,
    )
    dspy.configure(lm=lm, callbacks=[ModelCalls()])
