"""The admin endpoint on `metrics.endpoint`: Prometheus metrics, the liveness and readiness probes, and the grades
page. A configured token guards every route but the probes: liveness and readiness say nothing, and orchestrators'
health checks (the image's HEALTHCHECK, Kubernetes probes) carry no token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from aiohttp import web
from prometheus_client.exposition import choose_encoder

from otelgrade.config import Config
from otelgrade.core.metrics import Metrics
from otelgrade.export.ui import RunStore, add_grade_pages, page_address
from otelgrade.grade.grading import UnmatchedRuns
from otelgrade.intake.receivers import Access, split_address, unauthorized

log = logging.getLogger("otelgrade")

PROBES = frozenset({"/healthz", "/readyz"})


def pages_url(config: Config) -> str:
    """Where people reach the grades page (`ui.external_url`, else the metrics endpoint's address), no final `/`;
    "" when there is no page."""
    endpoint = config.metrics.endpoint
    if not endpoint:
        return (config.ui.external_url or "").rstrip("/")
    host, port = split_address(endpoint)
    tls = Access.of(config.metrics.tls, config.metrics.auth).scheme == "https"
    return page_address(config.ui, host, port, tls).rstrip("/")


class Admin:
    """The endpoint's routes; `ready` says whether the service takes requests (for `/readyz`)."""

    def __init__(
        self,
        config: Config,
        metrics: Metrics,
        runs: RunStore,
        unmatched: Callable[[], UnmatchedRuns] | None,
        ready: Callable[[], bool],
    ) -> None:
        self.config, self.metrics, self.runs, self.unmatched, self.ready = config, metrics, runs, unmatched, ready

    async def start(self) -> web.AppRunner | None:
        """Listen on `metrics.endpoint` (None when it is off)."""
        endpoint = self.config.metrics.endpoint
        if not endpoint:
            return None
        host, port = split_address(endpoint)
        access = Access.of(self.config.metrics.tls, self.config.metrics.auth)
        app = web.Application(middlewares=access.middlewares(self._unauthenticated, PROBES))
        app.router.add_get("/metrics", self._metrics_page)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        add_grade_pages(app, self.runs, self.config.ui, self.unmatched)
        self.metrics.grades_page.labels(page_address(self.config.ui, host, port, access.scheme == "https")).set(1)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, host, port, reuse_address=True, ssl_context=access.ssl_context()).start()
        log.info("metrics on %s://%s:%d/metrics (/healthz, /readyz); grades page on /", access.scheme, host, port)
        return runner

    async def _metrics_page(self, request: web.Request) -> web.Response:
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        body = encoder(self.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": content_type})

    def _unauthenticated(self, request: web.Request) -> web.Response:
        self.metrics.requests.labels("metrics", "none", "unauthenticated").inc()
        return unauthorized()

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self.ready():
            return web.Response(text="ready\n")
        return web.Response(status=503, text="not ready\n")
