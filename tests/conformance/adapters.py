"""Runs one conformance case through otelgrade: the case's native config goes through the real
config loader, its neutral trajectory becomes a `Trajectory`. Each system's specifics live in
`adapters_<system>.py`."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass
class Observed:
    score: float | None
    passed: bool | None
    error: str | None = None  # "config_error" when loading the config failed
    extracted: str | None = None
    detail: str = ""


SYSTEMS = {"letta-evals": "letta", "evaldeck": "evaldeck", "potato": "potato", "vally": "vally"}


def run_case(case: dict[str, Any]) -> Observed:
    module = importlib.import_module(f"tests.conformance.adapters_{SYSTEMS[case['system']]}")
    return module.run_case(case)
