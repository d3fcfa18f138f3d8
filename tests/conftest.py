"""Shared fixtures: free ports, and `serve` — run `otelgrade serve` as a subprocess on free ports.

    def test_something(serve):
        server = serve({"suites": [...]})          # extra config merged over a test base config
        ...send spans to server.grpc_address / server.http_url...
        server.wait_for_metric("otelgrade_traces_completed_total", {"reason": "complete"}, 3)
        assert server.stop() == 0                  # SIGTERM; the process's exit code
        server.grades()                            # what the JSONL sink wrote

The process is stopped (SIGTERM, then SIGKILL) at teardown if the test did not stop it.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parent.parent


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port nothing listens on now and not handed out before in this session: the kernel may give the same free
    port to two calls in a row (a server's gRPC and metrics ports then collide)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


@pytest.fixture
def port() -> int:
    return free_port()


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def serve_workers() -> int:
    """How many grading workers `serve` runs in this test session (`OTELGRADE_WORKERS`, else one)."""
    from otelgrade.core.settings import ServerSettings

    return ServerSettings().worker_count()


def spool_of(spool_dir: Path, trace_id: str) -> Path:
    """The spool folder of the grading worker that owns a trace (worker 0 keeps `spool_dir` itself)."""
    from otelgrade.intake.shard import owner

    worker = owner(bytes.fromhex(trace_id), serve_workers())
    return spool_dir / f"worker-{worker}" if worker else spool_dir


class ServeProcess:
    """One `otelgrade serve` subprocess with its own ports, config file, log and JSONL grades file."""

    def __init__(self, workdir: Path, config: dict[str, Any]) -> None:
        self.workdir = workdir
        self.grpc_port, self.http_port, self.metrics_port = free_port(), free_port(), free_port()
        self.grades_path = workdir / "grades.jsonl"
        base: dict[str, Any] = {
            "receivers": {"grpc": f"127.0.0.1:{self.grpc_port}", "http": f"127.0.0.1:{self.http_port}"},
            "metrics": {"endpoint": f"127.0.0.1:{self.metrics_port}"},
            "assembly": {"settle": "200ms", "idle_timeout": "2s"},
            "sinks": [{"type": "jsonl", "path": str(self.grades_path)}],
            "suites": [{"name": "default", "graders": [{"name": "tool_budget", "type": "max_tool_calls", "max": 50}]}],
        }
        self.config = _merge(base, config)
        self.config_path = workdir / "otelgrade.yaml"
        self.write_config(self.config)
        self.log_path = workdir / "serve.log"
        self._log = self.log_path.open("wb")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "otelgrade", "serve", "--config", str(self.config_path)],
            cwd=workdir,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    # addresses
    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}"

    def write_config(self, config: dict[str, Any] | str) -> None:
        text = config if isinstance(config, str) else yaml.safe_dump(config)
        self.config_path.write_text(text)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Until /readyz answers 200 (two grading workers take 8 s to start at load 4 on two cores, more beside CI's
        other jobs: how long is not what a test asserts, so the wait is long and ends as soon as it is ready)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"otelgrade serve exited with {self.process.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.metrics_url}/readyz", timeout=1) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.05)
        raise AssertionError(f"otelgrade serve not ready after {timeout}s:\n{self.log()}")

    # metrics
    def metrics_text(self) -> str:
        with urllib.request.urlopen(f"{self.metrics_url}/metrics", timeout=5) as response:
            return str(response.read().decode())

    def metric(self, name: str, labels: dict[str, str] | None = None) -> float:
        """The sum of the samples with these labels (and any others, e.g. every `environment`; 0 when none);
        `name` is the sample name, e.g. `..._total`."""
        wanted = labels or {}
        return sum(
            float(sample.value)
            for family in text_string_to_metric_families(self.metrics_text())
            for sample in family.samples
            if sample.name == name and all(sample.labels.get(k) == v for k, v in wanted.items())
        )

    def wait_for_metric(
        self, name: str, labels: dict[str, str] | None, done: float | Callable[[float], bool], timeout: float = 15.0
    ) -> float:
        check = done if callable(done) else (lambda v: v >= done)
        deadline = time.monotonic() + timeout
        value = self.metric(name, labels)
        while not check(value):
            if time.monotonic() > deadline:
                raise AssertionError(f"{name}{labels or ''} is {value} after {timeout}s:\n{self.log()[-3000:]}")
            time.sleep(0.05)
            value = self.metric(name, labels)
        return value

    @contextlib.contextmanager
    def health_probe(self) -> Iterator[list[float]]:
        """Poll /healthz (served on the same event loop as the receivers) from a thread while the block
        runs; yields the list of its response times in seconds, filled as they come."""
        times: list[float] = []
        done = threading.Event()

        def probe() -> None:
            while not done.is_set():
                began = time.monotonic()
                with urllib.request.urlopen(f"{self.metrics_url}/healthz", timeout=30) as response:
                    response.read()
                times.append(time.monotonic() - began)
                time.sleep(0.02)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        try:
            yield times
        finally:
            done.set()
            prober.join()

    # lifecycle
    def send_signal(self, sig: int) -> None:
        self.process.send_signal(sig)

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM and wait; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"otelgrade serve did not stop within {timeout}s:\n{self.log()}") from None
        self._log.close()
        return self.process.returncode

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()

    def grades(self) -> list[dict[str, Any]]:
        if not self.grades_path.exists():
            return []
        return [json.loads(line) for line in self.grades_path.read_text().splitlines() if line.strip()]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    """Factory: `serve(config_overrides=None, ready=True)` starts `otelgrade serve` and waits for /readyz."""
    started: list[ServeProcess] = []

    def start(config: dict[str, Any] | None = None, ready: bool = True) -> ServeProcess:
        workdir = tmp_path / f"serve{len(started)}"
        workdir.mkdir()
        process = ServeProcess(workdir, config or {})
        started.append(process)
        if ready:
            process.wait_ready()
        return process

    yield start
    for process in started:
        if process.process.poll() is None:
            with contextlib.suppress(AssertionError):
                process.stop(timeout=10)
        process.kill()


# --- tiers: `make test` runs every test, `make check` those not marked `integration` ---------------------------

PROCESS_MODULES = ("subprocess", "multiprocessing", "selenium.webdriver")  # what starts another process
OWN_CODE = ("tests", "bench")  # the code read to find the tests that start one


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def _module_of(value: object) -> str:
    return value.__name__ if isinstance(value, types.ModuleType) else str(getattr(value, "__module__", None) or "")


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def starts_processes(value: object, seen: set[int]) -> bool:
    """Whether a function or class of tests/ or bench/ uses `PROCESS_MODULES`, itself or through the functions,
    classes and modules of tests/ and bench/ it names (a fixture, a CLI helper, `ServeProcess`...)."""
    value = inspect.unwrap(getattr(value, "__func__", value))  # type: ignore[arg-type]
    if id(value) in seen or not _within(_module_of(value), OWN_CODE):
        return False
    seen.add(id(value))
    if isinstance(value, type):
        members = (getattr(m, "fget", None) or getattr(m, "__func__", m) for m in vars(value).values())
        return any(starts_processes(member, seen) for member in members)
    if not isinstance(value, types.FunctionType):
        return False
    for code in _codes(value.__code__):
        named = [value.__globals__[name] for name in code.co_names if name in value.__globals__]
        named += [
            getattr(module, name)
            for module in named
            if isinstance(module, types.ModuleType) and _within(module.__name__, OWN_CODE)
            for name in code.co_names
            if hasattr(module, name)
        ]
        if any(_within(_module_of(target), PROCESS_MODULES) or starts_processes(target, seen) for target in named):
            return True
    return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `integration` every test that starts another process (`otelgrade serve`, the CLI as a subprocess,
    Prometheus, promtool, a browser), found by reading its code and its fixtures' (see `starts_processes`)."""
    for item in items:
        fixtures = getattr(item, "_fixtureinfo", None)
        definitions = [d for ds in fixtures.name2fixturedefs.values() for d in ds] if fixtures else []
        seen: set[int] = set()
        if any(starts_processes(f, seen) for f in [getattr(item, "obj", None), *(d.func for d in definitions)]):
            item.add_marker(pytest.mark.integration)


# --- captures shared across modules (tests/captures.py): a test that changed one fails the session ------------


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests.captures import changed

    altered = changed()
    if altered:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        session.config.stash[_ALTERED] = altered


_ALTERED = pytest.StashKey[list[str]]()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    altered = config.stash.get(_ALTERED, [])
    if altered:
        terminalreporter.write_line(
            "a test changed shared capture results that later tests read (copy them before changing them: "
            "`model_copy`, `dataclasses.replace`): " + ", ".join(altered),
            red=True,
        )
