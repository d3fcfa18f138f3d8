"""`otelgrade serve` on every core: a receiving process routes each trace's spans to the grading worker that
owns the trace (`front`), and each worker (`worker`) assembles, grades and exports as the single process does.
With one worker (`server.workers: 1`, or `OTELGRADE_WORKERS=1`) the single process runs, as before."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from otelgrade.config import Config, load_config
from otelgrade.core.errors import ConfigError
from otelgrade.grade.conversations import Journal
from otelgrade.intake.spool import adopt
from otelgrade.service.server import _setup_logging
from otelgrade.service.server import run as run_single


def run(config_path: str | None) -> int:
    """Serve until SIGTERM/SIGINT with the configured number of workers; exit codes as `server.run`."""
    _setup_logging()
    try:
        config = load_config(config_path)
        count = config.server.worker_count()
    except (ConfigError, ValueError) as exc:
        print(f"otelgrade: {exc}", file=sys.stderr)
        return 2
    _adopt_spools_left(config, count)
    if count == 1:
        return run_single(config_path)
    from otelgrade.service.workers.front import serve

    return serve(config, config_path, count)


def _adopt_spools_left(config: Config, count: int) -> None:
    """Requests spooled by workers that will not run now (the service ran with more of them), and the conversation
    turns they held, go to worker 0's spool (`spool_dir` itself), whose replay grades them: a run acknowledged is
    graded whatever the worker count."""
    if not config.durability.spool_dir:
        return
    spool_dir = Path(config.durability.spool_dir)
    left = sorted(
        (folder for folder in spool_dir.glob("worker-*") if folder.name.removeprefix("worker-").isdigit()),
        key=lambda folder: int(folder.name.removeprefix("worker-")),
    )
    if left := [folder for folder in left if int(folder.name.removeprefix("worker-")) >= count]:
        try:
            adopt(spool_dir, left, journals=(Journal.NAME,))
        except OSError as exc:  # left where it is: adopted at a later start
            logging.getLogger("otelgrade").error(
                "cannot move the spool of workers that do not run now (%s) to %s: %s; run with as many workers as "
                "before (server.workers or OTELGRADE_WORKERS) until otelgrade_spool_bytes is 0",
                ", ".join(map(str, left)),
                spool_dir,
                exc,
            )
