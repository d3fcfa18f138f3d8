"""Text embeddings for similarity graders: cosine as Potato computes it, and an OpenAI-compatible embedder.

Nothing here imports a machine-learning stack; the `openai` client is imported on first use.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence

Embedder = Callable[[str], Sequence[float]]


def potato_cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """dot(a, b) / (|a| |b|), with Potato's quirks: the dot product stops at the shorter vector while each
    norm uses its whole vector, a zero norm gives 0.0, and the result is not clamped (it can be negative)."""
    norm_a = math.sqrt(sum(x * x for x in a))
    norm_b = math.sqrt(sum(x * x for x in b))
    if norm_a == 0 or norm_b == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=False)) / (norm_a * norm_b)


def table_embedder(table: Mapping[str, Sequence[float]]) -> Embedder:
    """Look texts up in a fixed table (tests, offline replays); an unknown text is a `KeyError`."""

    def embed(text: str) -> Sequence[float]:
        try:
            return table[text]
        except KeyError:
            raise KeyError(f"no embedding for {text[:80]!r} in embed_table") from None

    return embed


def openai_embedder(
    model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY", timeout: float = 30.0
) -> Embedder:
    """Embed through any OpenAI-compatible `/embeddings` endpoint; the client is made on the first call."""
    client = None

    def embed(text: str) -> Sequence[float]:
        nonlocal client
        if client is None:
            from openai import OpenAI

            key = os.environ.get(api_key_env)
            if not key:
                raise RuntimeError(f"environment variable {api_key_env} (the embeddings API key) is not set")
            client = OpenAI(api_key=key, base_url=base_url or os.environ.get("OPENAI_BASE_URL"), timeout=timeout)
        response = client.embeddings.create(model=model, input=[text])
        return list(response.data[0].embedding)

    return embed
