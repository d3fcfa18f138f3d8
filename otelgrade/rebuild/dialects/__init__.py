"""The dialect registry: every module in this package declares one `DIALECT`, found automatically.

`classify` asks them in priority order: the first whose `detect` matches reads the span; if its
`read` declines (None, or an exception), the next matching dialect is asked, down to generic GenAI.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass

from otelgrade.rebuild.dialect import Dialect
from otelgrade.rebuild.facts import Facts
from otelgrade.spans import Span

DIALECTS: tuple[Dialect, ...] = tuple(
    sorted(
        (importlib.import_module(f"{__name__}.{module.name}").DIALECT for module in pkgutil.iter_modules(__path__)),
        key=lambda d: d.priority,
    )
)


@dataclass(slots=True)
class Classified:
    dialect: str
    facts: Facts


def classify(span: Span, extra: Sequence[Dialect] = ()) -> Classified | None:
    """The first dialect that recognises the span (`extra` ones, from the config, first), with what it read.
    Never raises."""
    for dialect in (*extra, *DIALECTS) if extra else DIALECTS:
        try:
            facts = dialect.read(span) if dialect.detect(span) else None
        except Exception:  # a span no reader anticipated must not cost the run
            continue
        if facts is not None:
            return Classified(dialect.name, facts)
    return None
