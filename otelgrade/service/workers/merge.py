"""One `/metrics` for the service: the receiving process's metrics and every grading worker's, merged.

Counters, histograms and most gauges add up across processes (spans received, runs held, bytes held, CPU
seconds, memory); a gauge that states a fact rather than counts (`*_info`, an alert policy, a paused judge)
is the same in every worker and is shown once (its largest value); start times are the earliest.

Each process hands over its families as its registry collects them, pickled (`snapshot`): nothing is written as
text and parsed back on a scrape. prometheus-client's own multiprocess mode (`PROMETHEUS_MULTIPROC_DIR`) is not
used: its files hold values only, so failing grades would lose their trace-id exemplars, and it has no place for
the per-process collectors (`process_*`).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator
from typing import cast

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.samples import Sample

_LARGEST_SUFFIXES = ("_info", "_policy", "_paused", "_max_fds")
_EARLIEST_SUFFIXES = ("_created", "_start_time_seconds")

SampleKey = tuple[str, tuple[tuple[str, str], ...]]


def _combine(name: str, family_type: str, old: float, new: float) -> float:
    if name.endswith(_EARLIEST_SUFFIXES):
        return min(old, new)
    if family_type in ("gauge", "info", "stateset", "unknown") and name.endswith(_LARGEST_SUFFIXES):
        return max(old, new)
    if family_type == "info":
        return max(old, new)
    return old + new


def snapshot(registry: CollectorRegistry) -> bytes:
    """What `registry` holds now, as `Merged` takes it from another process."""
    return pickle.dumps(list(registry.collect()), protocol=pickle.HIGHEST_PROTOCOL)


def read_snapshot(data: bytes) -> list[Metric]:
    """The families of a `snapshot` (from a process of this service, over its pipe)."""
    families: list[Metric] = pickle.loads(data)  # written by this service's own worker, over its pipe
    return families


def _merged(family_type: str, held: list[Sample], more: list[Sample]) -> list[Sample]:
    """The samples of one family from two processes, merged: side by side when both hold the same series in the same
    order (the same metrics, labelled alike: most families), else series by series."""
    pairs: Iterable[tuple[Sample | None, Sample | None]]
    if len(held) == len(more) and all(
        a.name == b.name and a.labels == b.labels for a, b in zip(held, more, strict=True)
    ):
        pairs = zip(held, more, strict=True)
    else:
        mine, theirs = _keyed(held), _keyed(more)
        pairs = ((mine.get(key), theirs.get(key)) for key in {**mine, **theirs})
    out = []
    for a, b in pairs:
        if a is None or b is None:
            out.append(cast(Sample, a or b))
        else:
            value = _combine(a.name, family_type, a.value, b.value)
            out.append(a._replace(value=value, exemplar=b.exemplar or a.exemplar))
    return out


def _keyed(samples: list[Sample]) -> dict[SampleKey, Sample]:
    return {(s.name, tuple(s.labels.items())): s for s in samples}  # a metric's label names come in one order


class Merged(Collector):
    """The families of several processes' registries, merged (a collector of a registry made for one scrape)."""

    def __init__(self, processes: Iterable[Iterable[Metric]]) -> None:
        self.families: dict[str, Metric] = {}
        for families in processes:
            for family in families:
                held = self.families.get(family.name)
                if held is None:
                    held = self.families[family.name] = Metric(family.name, family.documentation, family.type)
                    held.samples = list(family.samples)  # as the process gave them, until another adds to them
                else:
                    held.samples = _merged(family.type, held.samples, family.samples)
                held.unit = family.unit

    def collect(self) -> Iterator[Metric]:
        yield from self.families.values()
