"""The loop every runner shares: cases in as JSONL on stdin, each out on stdout with what the library said."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

Outcome = tuple[dict[str, Any], dict[str, Any]]  # (expected, observed)


def answer_each(run: Callable[[dict[str, Any]], Outcome], source: str) -> None:
    for line in sys.stdin:
        if line.strip():
            case = json.loads(line)
            expected, observed = run(case)
            case.update(expected=expected, observed=observed, source=source)
            print(json.dumps(case, ensure_ascii=False))
