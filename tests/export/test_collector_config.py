"""Structure of the shipped Collector, Prometheus and Grafana configs (no collector binary needed):
pipelines reference defined components, trace-id routing reaches otelgrade's ports, and every metric
the rules and dashboard use is one otelgrade exports."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from otelgrade.core.metrics import Metrics
from otelgrade.service.workers.health import WorkerWatch
from tests.paths import REPO

REPO = REPO
CONFIG_DIR = REPO / "collector_config"
GRAFANA = CONFIG_DIR / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "otelgrade.json"
COLLECTORS = ["agent-collector.yaml", "loadbalancer.yaml", "loadbalancer-dns.yaml"]


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _default_port(section: str, key: str) -> int:
    defaults = _load(REPO / "otelgrade" / "defaults" / "otelgrade.yaml")
    return int(str(defaults[section][key]).rsplit(":", 1)[1])


@pytest.mark.parametrize("name", COLLECTORS)
def test_collector_pipelines_use_only_defined_components(name: str) -> None:
    config = _load(CONFIG_DIR / name)
    service = config["service"]
    for extension in service.get("extensions", []):
        assert extension in config["extensions"]
    assert {"traces", "logs"} <= set(service["pipelines"]), "GenAI log events must travel with the spans"
    for pipeline_name, pipeline in service["pipelines"].items():
        for kind in ("receivers", "processors", "exporters"):
            for component in pipeline.get(kind, []):
                assert component in (config.get(kind) or {}), f"{name}: {pipeline_name} uses undefined {component}"
        # memory_limiter has to come first to protect the collector.
        assert pipeline["processors"][0] == "memory_limiter"


def test_agent_collector_fans_out_to_tracing_backend_and_otelgrade() -> None:
    config = _load(CONFIG_DIR / "agent-collector.yaml")
    pipelines = config["service"]["pipelines"]
    assert set(pipelines["traces"]["exporters"]) == {"otlp_grpc/tracing", "otlp_grpc/otelgrade"}
    assert "otlp_grpc/otelgrade" in pipelines["logs"]["exporters"]
    endpoint = config["exporters"]["otlp_grpc/otelgrade"]["endpoint"]
    assert int(endpoint.rsplit(":", 1)[1]) == _default_port("receivers", "grpc")


@pytest.mark.parametrize("name,resolver", [("loadbalancer.yaml", "static"), ("loadbalancer-dns.yaml", "dns")])
def test_load_balancer_routes_traces_and_logs_by_trace_id(name: str, resolver: str) -> None:
    config = _load(CONFIG_DIR / name)
    exporter = config["exporters"]["load_balancing"]
    assert exporter["routing_key"] == "traceID"
    assert "endpoint" not in exporter["protocol"]["otlp"], "the resolver supplies the endpoints"
    assert list(exporter["resolver"]) == [resolver]
    grpc_port = _default_port("receivers", "grpc")
    if resolver == "static":
        hosts = exporter["resolver"]["static"]["hostnames"]
        assert len(hosts) > 1 and all(int(h.rsplit(":", 1)[1]) == grpc_port for h in hosts)
    else:
        assert exporter["resolver"]["dns"]["hostname"] and exporter["resolver"]["dns"]["port"] == grpc_port
    for signal in ("traces", "logs"):
        assert config["service"]["pipelines"][signal]["exporters"] == ["load_balancing"]
    header = (CONFIG_DIR / name).read_text().split("\nreceivers:")[0]
    assert "trace id" in header and "tail sampling" in header, "the header must say why routing is by trace id"


def test_prometheus_scrapes_otelgrade_metrics_port_and_loads_all_rules() -> None:
    config = _load(CONFIG_DIR / "prometheus.yml")
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "otelgrade")
    targets = [t for sc in job["static_configs"] for t in sc["targets"]]
    assert all(int(t.rsplit(":", 1)[1]) == _default_port("metrics", "endpoint") for t in targets)
    rule_files = {CONFIG_DIR / f for f in config["rule_files"]}
    assert rule_files == set((CONFIG_DIR / "rules").glob("*.yml"))


def _exported_names() -> set[str]:
    """Every sample name otelgrade can expose (counters as *_total, histograms as their series): its Metrics, and
    what the receiving process adds of its grading workers (`WorkerWatch`)."""
    suffixes = {"counter": ["_total"], "gauge": [""], "histogram": ["_bucket", "_sum", "_count"]}
    workers = CollectorRegistry()
    WorkerWatch([], timeout=1.0, restart_after=1.0, registry=workers)
    families = [*Metrics().registry.collect(), *workers.collect()]
    return {family.name + suffix for family in families for suffix in suffixes[family.type]}


def _promql_sources() -> dict[str, str]:
    sources = {str(p.relative_to(REPO)): p.read_text() for p in (CONFIG_DIR / "rules").glob("*.yml")}
    board = json.loads(DASHBOARD.read_text())
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            sources[f"dashboard panel {panel['title']!r}"] = target["expr"]
    return sources


def test_rules_and_dashboard_use_only_metrics_otelgrade_exports() -> None:
    exported = _exported_names()
    assert "otelgrade_grades_total" in exported and "otelgrade_grading_delay_seconds_bucket" in exported
    for where, text in _promql_sources().items():
        for name in set(re.findall(r"\botelgrade_[a-z_]+", text)):
            assert name in exported, f"{where} uses {name}, which otelgrade does not export"


def test_alert_dashboard_links_open_the_provisioned_dashboard() -> None:
    board = json.loads(DASHBOARD.read_text())
    variables = {v["name"] for v in board["templating"]["list"]}
    alerts = (CONFIG_DIR / "rules" / "otelgrade-alerts.yml").read_text()
    links = re.findall(r'dashboard: "([^"]+)"', alerts)
    assert links
    for link in links:
        assert link.startswith(f"/d/{board['uid']}/")
        assert set(re.findall(r"var-(\w+)=", link)) <= variables


def test_dashboard_variables_are_defined_and_failures_carry_exemplars() -> None:
    board = json.loads(DASHBOARD.read_text())
    variables = {v["name"] for v in board["templating"]["list"]}
    builtin = {"__rate_interval", "__interval", "__range"}
    targets = [t for p in board["panels"] for t in p.get("targets", [])]
    for target in targets:
        used = set(re.findall(r"\$\{?(\w+)", target["expr"]))
        assert used <= variables | builtin, used - variables - builtin
    assert any(t["exemplar"] and 'outcome="fail"' in t["expr"] for t in targets)
    refs = [(p["id"], t["refId"]) for p in board["panels"] for t in p.get("targets", [])]
    assert len(set(refs)) == len(refs) and all(r for _, r in refs)


def test_grafana_provisioning_points_at_the_dashboard_and_a_trace_datasource() -> None:
    providers = _load(GRAFANA / "provisioning" / "dashboards" / "otelgrade.yaml")["providers"]
    assert providers[0]["type"] == "file" and providers[0]["options"]["path"]
    sources = _load(GRAFANA / "provisioning" / "datasources" / "otelgrade.yaml")["datasources"]
    by_uid = {s["uid"]: s for s in sources}
    prometheus = next(s for s in sources if s["type"] == "prometheus")
    destinations = prometheus["jsonData"]["exemplarTraceIdDestinations"]
    # The exemplar label otelgrade attaches to failed grades, linked to a tracing datasource.
    assert destinations[0]["name"] == "trace_id"
    assert by_uid[destinations[0]["datasourceUid"]]["type"] in {"tempo", "jaeger", "zipkin"}


def test_committed_dashboard_matches_its_generator() -> None:
    pytest.importorskip("grafana_foundation_sdk", reason="grafana-foundation-sdk generates the dashboard")
    spec = importlib.util.spec_from_file_location("generate_dashboard", GRAFANA / "generate_dashboard.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.render() == DASHBOARD.read_text(), "run collector_config/grafana/generate_dashboard.py"


def test_otelgrade_listens_on_localhost_and_the_shipped_collectors_on_all_interfaces_explicitly() -> None:
    defaults = _load(REPO / "otelgrade" / "defaults" / "otelgrade.yaml")
    addresses = [defaults["receivers"]["grpc"], defaults["receivers"]["http"], defaults["metrics"]["endpoint"]]
    assert all(address.startswith("localhost:") for address in addresses)
    for name in COLLECTORS:
        protocols = _load(CONFIG_DIR / name)["receivers"]["otlp"]["protocols"]
        assert {p["endpoint"].rsplit(":", 1)[0] for p in protocols.values()} == {"0.0.0.0"}, name


def test_the_score_heatmap_draws_the_bucketed_scores_as_they_are() -> None:
    (panel,) = [p for p in json.loads(DASHBOARD.read_text())["panels"] if p["type"] == "heatmap"]
    # With no options Grafana re-buckets the already bucketed histogram into buckets of its own.
    assert panel["options"]["calculate"] is False
    assert panel["options"]["rowsFrame"]["layout"] == "le"
    assert panel["targets"][0]["format"] == "heatmap"


def test_failing_runs_are_linked_from_the_dashboard_without_the_provisioned_data_source() -> None:
    board = json.loads(DASHBOARD.read_text())
    # A dashboard link (and each failed-grades series' link) opens otelgrade's list of failing runs; only the
    # exemplar links need the data source's exemplarTraceIdDestinations.
    assert [link["url"] for link in board["links"]] == ["${otelgrade_url}/?outcome=fail"]
    (failed,) = [p for p in board["panels"] if p.get("title") == "Failed grades"]
    assert [link["url"].split("?")[0] for link in failed["fieldConfig"]["defaults"]["links"]] == ["${otelgrade_url}/"]


def test_the_provisioned_dashboard_can_be_saved_with_the_users_otelgrade_url() -> None:
    (provider,) = _load(GRAFANA / "provisioning" / "dashboards" / "otelgrade.yaml")["providers"]
    assert provider["allowUiUpdates"] is True


def test_conversation_router_routes_turn_records_by_conversation_id_to_the_same_replicas() -> None:
    config = _load(CONFIG_DIR / "conversation-router.yaml")
    pipelines = config["service"]["pipelines"]
    assert list(pipelines) == ["logs"], "turn records are log records"
    logs = pipelines["logs"]
    assert logs["processors"][0] == "memory_limiter"
    for kind in ("receivers", "processors", "exporters"):
        assert all(component in config[kind] for component in logs[kind])
    exporter = config["exporters"]["load_balancing"]
    assert logs["exporters"] == ["load_balancing"]
    assert exporter["routing_key"] == "attributes"
    assert exporter["routing_attributes"] == ["gen_ai.conversation.id"]
    replicas = _load(CONFIG_DIR / "loadbalancer.yaml")["exporters"]["load_balancing"]["resolver"]["static"]["hostnames"]
    assert exporter["resolver"]["static"]["hostnames"] == replicas, "the conversation owners are the trace replicas"
