"""Run a real Prometheus (Debian's `prometheus` binary) and Alertmanager on 127.0.0.1 for tests.

`running_prometheus(targets)` writes a config that scrapes the given host:port targets every second
and loads otelgrade's rule files from collector_config/rules, starts Prometheus on a free port with
exemplar storage enabled and a temporary storage dir (sending alerts to `alertmanagers`, if given),
and stops it on exit. `running_alertmanager(config)` does the same for an Alertmanager config.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
CONFIG_DIR = REPO / "collector_config"
RULE_FILES = tuple(
    CONFIG_DIR / "rules" / name
    for name in ("otelgrade-objectives.yml", "otelgrade-recording.yml", "otelgrade-alerts.yml")
)
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
ALERTMANAGER = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
MISSING = "Prometheus is not installed (Debian: apt-get install prometheus); CI installs it"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class PrometheusServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def api(self, path: str, **params: str) -> Any:
        """GET /api/v1/<path>; returns `data`, raising AssertionError on an error status."""
        query = urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as response:
                body = json.load(response)
        except urllib.error.HTTPError as e:  # 4xx/5xx carry the error as JSON
            body = json.load(e)
        assert body.get("status") == "success", f"{path} {params}: {body.get('errorType')}: {body.get('error')}"
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Evaluate an instant query now; the result list (vector or scalar as one item)."""
        data = self.api("query", query=expr)
        return data["result"] if data["resultType"] in ("vector", "matrix") else [{"value": data["result"]}]

    def wait_for(self, expr: str, timeout: float = 30.0, check: Callable[[list[dict[str, Any]]], bool] = bool) -> Any:
        """Poll `expr` until `check(result)` holds; return the result."""
        deadline = time.monotonic() + timeout
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            result = self.query(expr)
            if check(result):
                return result
            time.sleep(0.25)
        raise AssertionError(f"{expr!r} never satisfied the check within {timeout}s; last result {result}")

    def alerts(self) -> list[dict[str, Any]]:
        alerts: list[dict[str, Any]] = self.api("alerts")["alerts"]
        return alerts

    def rule_groups(self) -> list[dict[str, Any]]:
        groups: list[dict[str, Any]] = self.api("rules")["groups"]
        return groups


def prometheus_config(
    targets: Sequence[str],
    rule_files: Sequence[Path],
    scrape_interval: str,
    evaluation_interval: str,
    scrape_options: Mapping[str, Any] | None = None,
    alertmanagers: Sequence[str] = (),
) -> dict[str, Any]:
    job = {"job_name": "otelgrade", "static_configs": [{"targets": list(targets)}], **(scrape_options or {})}
    config: dict[str, Any] = {
        "global": {"scrape_interval": scrape_interval, "evaluation_interval": evaluation_interval},
        "rule_files": [str(p) for p in rule_files],
        "scrape_configs": [job],
    }
    if alertmanagers:
        config["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": list(alertmanagers)}]}]}
    return config


@contextmanager
def running_prometheus(
    targets: Sequence[str],
    *,
    rule_files: Sequence[Path] = RULE_FILES,
    scrape_interval: str = "1s",
    evaluation_interval: str = "1s",
    startup_timeout: float = 30.0,
    scrape_options: Mapping[str, Any] | None = None,
    alertmanagers: Sequence[str] = (),
) -> Iterator[PrometheusServer]:
    """Start Prometheus scraping `targets` (host:port, path /metrics) with `rule_files`; stop it on exit.
    `scrape_options` go into the scrape job as they are (`scheme`, `authorization`, `tls_config`, ...);
    alerts go to the `alertmanagers` (host:port)."""
    if PROMETHEUS is None:
        raise RuntimeError(MISSING)
    config = prometheus_config(targets, rule_files, scrape_interval, evaluation_interval, scrape_options, alertmanagers)
    flags = ["--enable-feature=exemplar-storage", "--storage.tsdb.path={work}/data"]
    with _daemon(PROMETHEUS, "prometheus", config, flags, startup_timeout) as (port, process, log):
        yield PrometheusServer(f"http://127.0.0.1:{port}", process, log)


@dataclass
class AlertmanagerServer:
    url: str
    address: str  # host:port, as Prometheus' alerting config names it
    process: subprocess.Popen[bytes]
    log: Path

    def alerts(self) -> list[dict[str, Any]]:
        """The alerts Alertmanager holds (API v2)."""
        with urllib.request.urlopen(f"{self.url}/api/v2/alerts", timeout=10) as response:
            alerts: list[dict[str, Any]] = json.load(response)
            return alerts


@contextmanager
def running_alertmanager(config: Mapping[str, Any], startup_timeout: float = 30.0) -> Iterator[AlertmanagerServer]:
    """Start Alertmanager with `config` on a free port (no clustering, a temporary storage dir); stop it on exit."""
    if ALERTMANAGER is None:
        raise RuntimeError("Alertmanager is not installed (Debian: apt-get install prometheus-alertmanager)")
    flags = ["--storage.path={work}/data", "--cluster.listen-address="]
    with _daemon(ALERTMANAGER, "alertmanager", config, flags, startup_timeout) as (port, process, log):
        yield AlertmanagerServer(f"http://127.0.0.1:{port}", f"127.0.0.1:{port}", process, log)


@contextmanager
def _daemon(
    binary: str, name: str, config: Mapping[str, Any], flags: Sequence[str], startup_timeout: float
) -> Iterator[tuple[int, subprocess.Popen[bytes], Path]]:
    """Run `binary` with `config` (written to <tmp>/<name>.yml) on a free port of 127.0.0.1, its output in
    <tmp>/<name>.log, and `flags` ({work}: the temporary dir); yield once /-/ready answers, stop it on exit."""
    with tempfile.TemporaryDirectory(prefix=f"otelgrade-{name}-") as tmp:
        work = Path(tmp)
        (work / f"{name}.yml").write_text(yaml.safe_dump(dict(config)))
        port, log = free_port(), work / f"{name}.log"
        argv = [
            binary,
            f"--config.file={work / f'{name}.yml'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
            *(flag.format(work=work) for flag in flags),
        ]
        with log.open("wb") as log_file:
            process = subprocess.Popen(argv, stdout=log_file, stderr=subprocess.STDOUT)
        try:
            _wait_ready(f"http://127.0.0.1:{port}", process, log, startup_timeout)
            yield port, process, log
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited with {process.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} not ready after {timeout}s:\n{log.read_text()}")
