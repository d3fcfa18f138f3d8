"""TLS and bearer-token authentication on the receivers and the metrics endpoint, configured as in the
OpenTelemetry Collector, exercised with the OTel SDK's exporters and a real Prometheus. Certificates
(a CA, a server certificate for 127.0.0.1, a client certificate) are made here with `cryptography`."""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from tests.conftest import ServeProcess
from tests.promserver import PROMETHEUS, running_prometheus
from tests.receivers_harness import sid, span_pb, traces_request
from tests.service.test_server import WEATHER_SUITE, agent_run, grades_by_trace

Serve = Callable[..., ServeProcess]
TOKEN = "s3cret-token-4-otelgrade"


@dataclass(frozen=True)
class Pki:
    ca: Path
    cert: Path
    key: Path
    client_cert: Path
    client_key: Path
    token: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _issue(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    **kw: Any,
) -> x509.Certificate:
    """A certificate for `key`, self-signed when `issuer` is None (then it is a CA)."""
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (_name(subject), key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if issuer is None:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
    if "usage" in kw:
        builder = builder.add_extension(x509.ExtendedKeyUsage([kw["usage"]]), critical=False)
    if "san" in kw:
        builder = builder.add_extension(x509.SubjectAlternativeName(kw["san"]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")

    def write(name: str, data: bytes) -> Path:
        (folder / name).write_bytes(data)
        return folder / name

    def pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
        return key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    ca_key, server_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    ca = _issue("otelgrade test CA", ca_key, None)
    san = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    server = _issue("otelgrade", server_key, (ca.subject, ca_key), usage=ExtendedKeyUsageOID.SERVER_AUTH, san=san)
    client = _issue("an agent", client_key, (ca.subject, ca_key), usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    return Pki(
        ca=write("ca.pem", ca.public_bytes(serialization.Encoding.PEM)),
        cert=write("server.pem", server.public_bytes(serialization.Encoding.PEM)),
        key=write("server-key.pem", pem_key(server_key)),
        client_cert=write("client.pem", client.public_bytes(serialization.Encoding.PEM)),
        client_key=write("client-key.pem", pem_key(client_key)),
        token=write("token", f"{TOKEN}\n".encode()),
    )


@pytest.fixture(autouse=True)
def _exporter_ca_not_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    """`requests` (under the SDK's HTTP exporter) prefers these variables to the exporter's `certificate_file`."""
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)


def guarded(pki: Pki, client_ca: bool = False) -> dict[str, Any]:
    tls = {"cert_file": str(pki.cert), "key_file": str(pki.key)}
    if client_ca:
        tls["client_ca_file"] = str(pki.ca)
    return {"tls": tls, "auth": {"bearer_token_file": str(pki.token)}}


def client_context(pki: Pki, client_cert: bool = False) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca))
    if client_cert:
        context.load_cert_chain(str(pki.client_cert), str(pki.client_key))
    return context


def https_status(url: str, context: ssl.SSLContext, token: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


# --- receivers ------------------------------------------------------------------------------------------


def test_receivers_take_the_sdk_exporters_over_tls_with_the_token_and_refuse_the_rest(
    serve: Serve, pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve({"receivers": guarded(pki), "suites": [WEATHER_SUITE]})
    grpc_url, http_url = f"https://127.0.0.1:{server.grpc_port}", f"https://127.0.0.1:{server.http_port}"
    # gRPC from the standard environment variables, HTTP from constructor arguments
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", grpc_url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", str(pki.ca))
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"authorization=Bearer%20{TOKEN}")
    over_grpc = agent_run(GrpcSpanExporter())
    headers = {"authorization": f"Bearer {TOKEN}"}
    over_http = agent_run(HttpSpanExporter(f"{http_url}/v1/traces", certificate_file=str(pki.ca), headers=headers))
    server.wait_for_metric("otelgrade_grades_total", {"suite": "weather", "grader": "used_weather"}, 2)

    # without the token, or with a wrong one: 401 / UNAUTHENTICATED, counted, nothing kept
    body = traces_request([span_pb(sid(1))])
    for token in (None, "wrong"):
        connection = http.client.HTTPSConnection("127.0.0.1", server.http_port, context=client_context(pki))
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        connection.request("POST", "/v1/traces", body, {"Content-Type": "application/x-protobuf", **auth})
        response = connection.getresponse()
        response.read()
        assert response.status == 401 and response.getheader("WWW-Authenticate", "").startswith("Bearer")
        connection.close()
    credentials = grpc.ssl_channel_credentials(pki.ca.read_bytes())
    with grpc.secure_channel(f"127.0.0.1:{server.grpc_port}", credentials) as channel:
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
            request_serializer=None,
            response_deserializer=trace_service_pb2.ExportTraceServiceResponse.FromString,
        )
        with pytest.raises(grpc.RpcError) as error:
            export(body, timeout=10)
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as error:
            export(body, timeout=10, metadata=[("authorization", "Bearer wrong")])
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert server.metric("otelgrade_requests_total", {"protocol": "http", "result": "unauthenticated"}) == 2
    assert server.metric("otelgrade_requests_total", {"protocol": "grpc", "result": "unauthenticated"}) == 2
    # plaintext to a TLS port does not get through
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        plain = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
        plain.request("POST", "/v1/traces", body, {"Content-Type": "application/x-protobuf"})
        plain.getresponse().read()
    assert server.stop() == 0
    expected = {"used_weather": "pass", "never_weather": "fail"}
    assert grades_by_trace(server) == {over_grpc: expected, over_http: expected}


def test_mutual_tls_requires_a_client_certificate_signed_by_the_client_ca(serve: Serve, pki: Pki) -> None:
    server = serve({"receivers": guarded(pki, client_ca=True), "suites": [WEATHER_SUITE]})
    url = f"https://127.0.0.1:{server.http_port}/v1/traces"
    headers = {"authorization": f"Bearer {TOKEN}"}
    with_cert = HttpSpanExporter(
        url,
        certificate_file=str(pki.ca),
        client_certificate_file=str(pki.client_cert),
        client_key_file=str(pki.client_key),
        headers=headers,
    )
    trace_id = agent_run(with_cert)
    server.wait_for_metric("otelgrade_grades_total", {"suite": "weather", "grader": "used_weather"}, 1)
    with pytest.raises((ssl.SSLError, ConnectionError)):
        connection = http.client.HTTPSConnection("127.0.0.1", server.http_port, context=client_context(pki))
        connection.request("POST", "/v1/traces", b"", {"Content-Type": "application/x-protobuf", **headers})
        connection.getresponse().read()
    key_and_chain = {"private_key": pki.client_key.read_bytes(), "certificate_chain": pki.client_cert.read_bytes()}
    with_cert = grpc.ssl_channel_credentials(pki.ca.read_bytes(), **key_and_chain)
    agent_run(GrpcSpanExporter(endpoint=f"127.0.0.1:{server.grpc_port}", credentials=with_cert, headers=headers))
    server.wait_for_metric("otelgrade_grades_total", {"suite": "weather", "grader": "used_weather"}, 2)
    without_cert = grpc.ssl_channel_credentials(pki.ca.read_bytes())
    with grpc.secure_channel(f"127.0.0.1:{server.grpc_port}", without_cert) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        with pytest.raises(grpc.RpcError) as error:
            export(traces_request([span_pb(sid(1))]), timeout=5, metadata=[("authorization", f"Bearer {TOKEN}")])
        assert error.value.code() == grpc.StatusCode.UNAVAILABLE  # the handshake fails
    assert server.stop() == 0
    assert trace_id in grades_by_trace(server)
    assert len(grades_by_trace(server)) == 2


# --- metrics endpoint -----------------------------------------------------------------------------------


def wait_ready_over_tls(server: ServeProcess, context: ssl.SSLContext, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.process.poll() is None, server.log()
        try:
            if https_status(f"https://127.0.0.1:{server.metrics_port}/readyz", context, TOKEN) == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"not ready over TLS after {timeout}s:\n{server.log()}")


@pytest.mark.skipif(PROMETHEUS is None, reason="Prometheus is not installed; `make test` installs it")
def test_prometheus_scrapes_the_metrics_endpoint_with_a_token_over_tls(serve: Serve, pki: Pki) -> None:
    server = serve({"metrics": guarded(pki)}, ready=False)
    context = client_context(pki)
    wait_ready_over_tls(server, context)
    base = f"https://127.0.0.1:{server.metrics_port}"
    for path in ("/metrics", "/", "/api/grades"):
        assert https_status(base + path, context) == 401, path
    for probe in ("/healthz", "/readyz"):  # orchestrators' health checks carry no token
        assert https_status(base + probe, context) == 200, probe
    assert https_status(f"{base}/metrics", context, "wrong") == 401
    scrape = {
        "scheme": "https",
        "authorization": {"type": "Bearer", "credentials_file": str(pki.token)},
        "tls_config": {"ca_file": str(pki.ca)},
    }
    with running_prometheus([f"127.0.0.1:{server.metrics_port}"], scrape_options=scrape) as prometheus:
        prometheus.wait_for('up{job="otelgrade"} == 1')
        [refused] = prometheus.wait_for(
            'otelgrade_requests_total{protocol="metrics",result="unauthenticated"}',
            check=lambda result: bool(result) and float(result[0]["value"][1]) >= 4,
        )
        assert float(refused["value"][1]) == 4
    assert server.stop() == 0
