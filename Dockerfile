# otelgrade serve: OTLP gRPC :4317, OTLP HTTP :4318, Prometheus metrics :9464.
# otelgrade listens on localhost unless told otherwise; in the image every listener is on 0.0.0.0 so
# that the ports are reachable from outside the container. The image's config is the embedded
# default with those addresses; mount your own file at /etc/otelgrade/otelgrade.yaml to replace it
# (keep 0.0.0.0 addresses in it, and see docs/operations.md for `tls:` and `auth:`).
# The base image and every dependency are pinned (requirements.lock, made by pip-tools), so a rebuild
# gives the same image. Write grades or a spool under /var/lib/otelgrade (a volume, writable by uid 10001).
FROM python:3.11.14-slim-bookworm

WORKDIR /app
COPY requirements.lock pyproject.toml README.md ./
COPY otelgrade ./otelgrade
RUN pip install --no-cache-dir --no-deps -r requirements.lock \
 && pip install --no-cache-dir --no-deps . \
 && pip check \
 && mkdir /etc/otelgrade \
 && sed 's/"localhost:/"0.0.0.0:/' otelgrade/defaults/otelgrade.yaml > /etc/otelgrade/otelgrade.yaml \
 && test "$(grep -c '"0.0.0.0:' /etc/otelgrade/otelgrade.yaml)" = 3 \
 && otelgrade check-config /etc/otelgrade/otelgrade.yaml \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin otelgrade \
 && install -d -o 10001 -g 10001 /var/lib/otelgrade

VOLUME /var/lib/otelgrade
USER 10001
EXPOSE 4317 4318 9464
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9464/healthz')"
ENTRYPOINT ["otelgrade"]
CMD ["serve", "--config", "/etc/otelgrade/otelgrade.yaml"]
