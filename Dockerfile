# otelgrade serve: OTLP gRPC :4317, OTLP HTTP :4318, Prometheus metrics :9464.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY otelgrade ./otelgrade
RUN pip install --no-cache-dir . \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin otelgrade

USER 10001
EXPOSE 4317 4318 9464
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9464/healthz')"
ENTRYPOINT ["otelgrade"]
CMD ["serve"]
