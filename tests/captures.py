"""The captured fixtures, decoded and rebuilt once per test session and shared by every module that reads them.

A folder under `tests/fixtures` does not change while the tests run, so what it decodes and rebuilds to is the same
for every reader: the first call reads it, later calls get the same objects. Callers get fresh lists of them and must
not change them; `changed()` (checked at the end of the session by tests/conftest.py) says which were changed.
Folders elsewhere (a test's own copy under `tmp_path`) are read afresh on every call.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

from otelgrade.core.spans import AnySpan, LogEvent, Span
from otelgrade.core.trajectory import Trajectory
from otelgrade.intake.decode import decode_logs, decode_traces
from otelgrade.rebuild import rebuild, transfers
from otelgrade.tools.offline import read_inputs, read_spans
from tests.paths import FIXTURES

_SHARED: dict[tuple[str, Path, bool], Any] = {}
_FINGERPRINTS: dict[tuple[str, Path, bool], str] = {}


def _fingerprint(value: Any) -> str:
    """A digest of the whole content of a shared result: trajectories as their JSON, anything else pickled."""
    digest = hashlib.blake2b()

    def add(part: Any) -> None:
        if isinstance(part, Trajectory):
            digest.update(part.model_dump_json().encode())
        elif isinstance(part, tuple | list):
            for item in part:
                add(item)
        elif isinstance(part, dict):
            for key, item in part.items():
                digest.update(repr(key).encode())
                add(item)
        else:
            digest.update(pickle.dumps(part))

    add(value)
    return digest.hexdigest()


def _shared(kind: str, folder: Path, read: Callable[[Path], Any]) -> Any:
    """`read(folder)`, once per session for a fixture folder (and per state of the rebuild's name hints)."""
    folder = folder.resolve()
    if not folder.is_relative_to(FIXTURES):
        return read(folder)
    key = (kind, folder, transfers.NAME_HINTS)
    if key not in _SHARED:
        _SHARED[key] = read(folder)
        _FINGERPRINTS[key] = _fingerprint(_SHARED[key])
    return _SHARED[key]


def changed(folder: Path | None = None) -> list[str]:
    """The shared results (of `folder`, else of every folder) some test changed since they were read, each as
    `kind folder`; empty when none was."""
    return [
        f"{key[0]} {key[1]}"
        for key, value in _SHARED.items()
        if folder in (None, key[1]) and _fingerprint(value) != _FINGERPRINTS[key]
    ]


def _load(folder: Path) -> tuple[tuple[Span, ...], tuple[LogEvent, ...]]:
    spans: list[Span] = []
    logs: list[LogEvent] = []
    for path in sorted(folder.rglob("*.pb")):
        if path.name.endswith(".logs.pb"):
            logs.extend(decode_logs(path.read_bytes()).events)
        else:
            spans.extend(s.read() for s in decode_traces(path.read_bytes()).spans)
    return tuple(spans), tuple(logs)


def load_folder(folder: Path) -> tuple[list[Span], list[LogEvent]]:
    """Spans and log events of every request file in a scenario folder, in arrival order."""
    spans, logs = _shared("load", folder, _load)
    return list(spans), list(logs)


def rebuild_traces(spans: list[Span], logs: list[LogEvent]) -> list[Trajectory]:
    """The runs of these spans and log events, each trace rebuilt with its own."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    return [t for tid, ss in by_trace.items() for t in rebuild(ss, [e for e in logs if e.trace_id == tid])]


def rebuild_folder(folder: Path) -> list[Trajectory]:
    """The runs of a scenario folder, each trace rebuilt with its own spans and log events."""
    return list(_shared("rebuild", folder, lambda f: tuple(rebuild_traces(*load_folder(f)))))


def read_folder(folder: Path) -> list[Trajectory]:
    """What `otelgrade grade`'s reader (`read_inputs`) gives for a folder of captures."""
    return list(_shared("read_inputs", folder, lambda f: tuple(read_inputs([f]))))


def spans_of(folder: Path) -> dict[str, tuple[list[AnySpan], list[LogEvent]]]:
    """The spans and log events of a folder of captures by trace id, as `read_spans` gives them."""
    return dict(_shared("read_spans", folder, lambda f: read_spans([f])))
