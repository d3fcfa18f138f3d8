"""`otelgrade serve` on every core: a receiving process routes each trace's spans to the grading worker that
owns the trace (`front`), and each worker (`worker`) assembles, grades and exports as the single process does.
With one worker (`server.workers: 1`, or `OTELGRADE_WORKERS=1`) the single process runs, as before."""

from __future__ import annotations

import sys

from otelgrade.config import load_config
from otelgrade.errors import ConfigError
from otelgrade.server import _setup_logging
from otelgrade.server import run as run_single


def run(config_path: str | None) -> int:
    """Serve until SIGTERM/SIGINT with the configured number of workers; exit codes as `server.run`."""
    _setup_logging()
    try:
        config = load_config(config_path)
        count = config.server.worker_count()
    except (ConfigError, ValueError) as exc:
        print(f"otelgrade: {exc}", file=sys.stderr)
        return 2
    if count == 1:
        return run_single(config_path)
    from otelgrade.workers.front import serve

    return serve(config, config_path, count)
