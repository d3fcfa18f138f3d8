"""Which runs a sampled judge grades: a stable choice by trace id, the same on every replica and replay."""

from __future__ import annotations

import hashlib


def sample_point(trace_id: str, grader_name: str) -> float:
    """A stable point in [0, 1) for this run and grader."""
    digest = hashlib.blake2b(f"{trace_id.lower()}\x00{grader_name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def is_sampled(trace_id: str, grader_name: str, rate: float) -> bool:
    return rate >= 1.0 or sample_point(trace_id, grader_name) < rate
