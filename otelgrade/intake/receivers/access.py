"""Who may talk to a listener: TLS and a bearer token, configured as in the OpenTelemetry Collector
(`tls: {cert_file, key_file, client_ca_file}`, `auth: {bearer_token_file}`). Shared by both receivers
and the metrics endpoint; `middlewares` protects every route of an aiohttp application.
"""

from __future__ import annotations

import hmac
import ssl
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from otelgrade.core.settings import AuthSettings, TlsSettings

UNAUTHENTICATED = "missing or wrong bearer token: send the header `Authorization: Bearer <token>`"


@dataclass(frozen=True)
class Access:
    """A listener's TLS settings and bearer token; the default lets everyone in over plain TCP."""

    tls: TlsSettings | None = None
    token: str | None = None

    @classmethod
    def of(cls, tls: TlsSettings | None, auth: AuthSettings | None) -> Access:
        """Read the token file now: a token changed later takes effect at the next start."""
        return cls(tls, auth.token() if auth is not None else None)

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    def allows(self, authorization: str | None) -> bool:
        """Whether an `Authorization` header (or gRPC `authorization` metadata) value carries the token."""
        if self.token is None:
            return True
        scheme, _, credentials = (authorization or "").strip().partition(" ")
        given = credentials.strip().encode("utf-8", "replace")
        return scheme.lower() == "bearer" and hmac.compare_digest(given, self.token.encode("utf-8", "replace"))

    def ssl_context(self) -> ssl.SSLContext | None:
        return self.tls.server_context() if self.tls is not None else None

    def middlewares(
        self, refuse: Callable[[web.Request], web.StreamResponse], open_paths: frozenset[str] = frozenset()
    ) -> list[Middleware]:
        """aiohttp middlewares that answer every request without the token with `refuse(request)`
        (which should count it and answer 401, e.g. with `unauthorized`), except on `open_paths`."""
        if self.token is None:
            return []

        @web.middleware
        async def require_token(request: web.Request, handler: Handler) -> web.StreamResponse:
            if request.path not in open_paths and not self.allows(request.headers.get("Authorization")):
                return refuse(request)
            return await handler(request)

        return [require_token]


OPEN = Access()  # no TLS, no token


def unauthorized(body: bytes | str = UNAUTHENTICATED + "\n", content_type: str = "text/plain") -> web.Response:
    """A 401 answer that names the scheme the client must use."""
    data = body.encode() if isinstance(body, str) else body
    return web.Response(
        status=401, body=data, content_type=content_type, headers={"WWW-Authenticate": 'Bearer realm="otelgrade"'}
    )
