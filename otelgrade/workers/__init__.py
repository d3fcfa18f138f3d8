"""`otelgrade serve` on every core: a receiving process routes each trace's spans to the grading worker that
owns the trace (`front`), and each worker (`worker`) assembles, grades and exports as the single process does.
With one worker (`server.workers: 1`, or `OTELGRADE_WORKERS=1`) the single process runs, as before."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from otelgrade.config import Config, load_config
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
    _warn_of_spools_left(config, count)
    if count == 1:
        return run_single(config_path)
    from otelgrade.workers.front import serve

    return serve(config, config_path, count)


def _warn_of_spools_left(config: Config, count: int) -> None:
    """Say so when the spool holds requests of workers that will not run (the service ran with more of them):
    nothing replays them until it runs with that many again."""
    if not config.durability.spool_dir:
        return
    left = sorted(
        str(folder)
        for folder in Path(config.durability.spool_dir).glob("worker-*")
        if folder.name.removeprefix("worker-").isdigit()
        and int(folder.name.removeprefix("worker-")) >= count
        and any(folder.glob("segment-*.spool"))
    )
    if left:
        logging.getLogger("otelgrade").warning(
            "the spool holds requests of workers that do not run now (%s): run with as many workers as before "
            "(server.workers or OTELGRADE_WORKERS) until otelgrade_spool_bytes is 0, then with fewer",
            ", ".join(left),
        )
