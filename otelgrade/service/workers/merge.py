"""One `/metrics` for the service: the receiving process's metrics and every grading worker's, merged.

Counters, histograms and most gauges add up across processes (spans received, runs held, bytes held, CPU
seconds, memory); a gauge that states a fact rather than counts (`*_info`, an alert policy, a paused judge)
is the same in every worker and is shown once (its largest value); start times are the earliest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

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


class Merged(Collector):
    """The families of several OpenMetrics texts, merged (a collector of a registry made for one scrape)."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.families: dict[str, Metric] = {}
        values: dict[str, dict[SampleKey, tuple[float, Any]]] = {}
        for text in texts:
            for family in text_string_to_metric_families(text):  # type: ignore[no-untyped-call]
                held = self.families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                samples = values.setdefault(family.name, {})
                for s in family.samples:
                    key = (s.name, tuple(sorted(s.labels.items())))
                    if key in samples:
                        value, exemplar = samples[key]
                        samples[key] = (_combine(s.name, family.type, value, s.value), s.exemplar or exemplar)
                    else:
                        samples[key] = (s.value, s.exemplar)
                held.unit = family.unit
        for name, family in self.families.items():
            for (sample_name, labels), (value, exemplar) in values[name].items():
                family.add_sample(sample_name, dict(labels), value, exemplar=exemplar)

    def collect(self) -> Iterator[Metric]:
        yield from self.families.values()
