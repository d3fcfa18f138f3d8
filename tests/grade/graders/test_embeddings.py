"""Similarity by embeddings, as Potato computes it."""

from __future__ import annotations

import pytest

from otelgrade.grade.graders.embeddings import potato_cosine, table_embedder


def test_cosine_of_parallel_and_orthogonal_vectors() -> None:
    assert potato_cosine([1.0, 2.0], [2.0, 4.0]) == pytest.approx(1.0)
    assert potato_cosine([1.0, 0.0], [0.0, 3.0]) == pytest.approx(0.0)


def test_the_dot_product_stops_at_the_shorter_vector() -> None:
    # Potato multiplies pairwise up to the shorter length but takes each norm over the whole vector.
    assert potato_cosine([1.0, 0.0, 5.0], [1.0, 0.0]) == pytest.approx(1.0 / (26**0.5))


def test_a_table_embedder_knows_only_its_texts() -> None:
    embed = table_embedder({"hello": [1.0, 0.0]})
    assert list(embed("hello")) == [1.0, 0.0]
    with pytest.raises(KeyError):
        embed("bye")
