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


class Merged(Collector):
    """The families of several processes' registries, merged (a collector of a registry made for one scrape)."""

    def __init__(self, processes: Iterable[Iterable[Metric]]) -> None:
        self.families: dict[str, Metric] = {}
        values: dict[str, dict[SampleKey, Sample]] = {}
        for families in processes:
            for family in families:
                held = self.families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                samples = values.setdefault(family.name, {})
                for s in family.samples:
                    key = (s.name, tuple(s.labels.items()))  # a metric's label names come in one order
                    had = samples.get(key)
                    if had is None:
                        samples[key] = s  # as the process gave it, unless another has the same series
                    else:
                        value = _combine(s.name, family.type, had.value, s.value)
                        samples[key] = had._replace(value=value, exemplar=s.exemplar or had.exemplar)
                held.unit = family.unit
        for name, family in self.families.items():
            family.samples = list(values[name].values())

    def collect(self) -> Iterator[Metric]:
        yield from self.families.values()
