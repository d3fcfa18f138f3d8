"""Generate the otelgrade Grafana dashboard (dashboards/otelgrade.json) with grafana-foundation-sdk.

Run `python collector_config/grafana/generate_dashboard.py` after changing a panel and commit
the JSON; a test checks that the committed file matches this script's output.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml
from grafana_foundation_sdk.builders import bargauge, common, dashboard, heatmap, prometheus, stat, timeseries
from grafana_foundation_sdk.builders.dashboard import Dashboard, Row, ThresholdsConfig
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import HeatmapCellLayout, LegendDisplayMode, LegendPlacement, VisibilityMode
from grafana_foundation_sdk.models.dashboard import (
    DashboardLinkType,
    DataSourceRef,
    Threshold,
    ThresholdsMode,
    VariableOption,
    VariableRefresh,
    VariableSort,
)
from grafana_foundation_sdk.models.heatmap import HeatmapColorMode, HeatmapColorScale
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

OUTPUT = Path(__file__).parent / "dashboards" / "otelgrade.json"
RECORDING_RULES = Path(__file__).parent.parent / "rules" / "otelgrade-recording.yml"
UID = "otelgrade"  # alert annotations link to /d/otelgrade/otelgrade
PROM = DataSourceRef(type_val="prometheus", uid="${datasource}")
# Suite and grader filters, as chosen in the dashboard's variables: production traffic (every environment but
# the test environments), and every environment chosen in `environment` (test traffic included).
PICKED = 'suite=~"$suite", grader=~"$grader"'
SEL = f'{PICKED}, environment!~"$test_environments"'
BY_ENVIRONMENT = f'{PICKED}, environment=~"$environment"'
RATE = "$__rate_interval"
# Where a browser reaches otelgrade's grades page (its metrics endpoint); the `otelgrade_url` variable.
OTELGRADE_URL = "http://localhost:9464"


def _query(expr: str, legend: str, *, exemplar: bool = False, instant: bool = False) -> prometheus.Dataquery:
    q = prometheus.Dataquery().expr(expr).legend_format(legend).exemplar(exemplar)
    return q.instant() if instant else q.range()


def nonproduction_regex() -> str:
    """The regex of the environments that are test traffic, from the recording rule that decides it for the
    alerts (`otelgrade:environment:nonproduction`), so the dashboard and the alerts agree."""
    groups = yaml.safe_load(RECORDING_RULES.read_text())["groups"]
    rule = next(r for g in groups for r in g["rules"] if r.get("record") == "otelgrade:environment:nonproduction")
    match = re.search(r'environment=~"([^"]+)"', rule["expr"])
    assert match, f'{RECORDING_RULES}: otelgrade:environment:nonproduction must select environment=~"..."'
    return match.group(1)


def _pass_rate(window: str, selector: str = SEL, by: str = "suite, grader") -> str:
    """Share of decided grades (pass or fail) that passed; errors and skips are left out."""
    decided = f'sum by ({by}) (rate(otelgrade_grades_total{{{selector}, outcome=~"pass|fail"}}[{window}]))'
    passed = f'sum by ({by}) (rate(otelgrade_grades_total{{{selector}, outcome="pass"}}[{window}]))'
    return f"({passed} or on ({by}) 0 * {decided})\n/ on ({by}) {decided}"


def _coverage() -> str:
    """Share of the runs routed to each judge (otelgrade_runs_eligible_total) that got a pass or fail from it."""
    by = "suite, grader, environment"
    judged = f'sum by ({by}) (rate(otelgrade_grades_total{{{BY_ENVIRONMENT}, outcome=~"pass|fail"}}[{RATE}]))'
    eligible = f"sum by ({by}) (rate(otelgrade_runs_eligible_total{{{BY_ENVIRONMENT}}}[{RATE}]))"
    return f"{judged}\n/ on ({by}) {eligible}"


def _quantile(q: float, metric: str, by: str = "") -> str:
    keys = f"{by}, le" if by else "le"
    return f"histogram_quantile({q}, sum by ({keys}) (rate({metric}_bucket[{RATE}])))"


def _timeseries(title: str, description: str, unit: str, *queries: prometheus.Dataquery) -> timeseries.Panel:
    panel = (
        timeseries.Panel()
        .title(title)
        .description(description)
        .datasource(PROM)
        .unit(unit)
        .height(8)
        .span(12)
        .fill_opacity(10)
        .legend(
            common.VizLegendOptions()
            .show_legend(True)
            .display_mode(LegendDisplayMode.TABLE)
            .placement(LegendPlacement.BOTTOM)
            .calcs(["lastNotNull", "max"])
        )
    )
    for query in queries:
        panel = panel.with_target(query)
    return panel


def _pass_rate_panel(title: str, description: str, query: prometheus.Dataquery) -> timeseries.Panel:
    return _timeseries(title, description, "percentunit", query).min(0).max(1).thresholds(_pass_rate_thresholds())


def _pass_rate_thresholds() -> ThresholdsConfig:
    return (
        ThresholdsConfig()
        .mode(ThresholdsMode.ABSOLUTE)
        .steps(
            [
                Threshold(value=None, color="red"),
                Threshold(value=0.9, color="orange"),
                Threshold(value=0.95, color="green"),
            ]
        )
    )


def _label_variable(name: str, label: str, query: str) -> dashboard.QueryVariable:
    """A variable choosing any of a label's values, "All" (any value) by default."""
    return (
        dashboard.QueryVariable(name)
        .label(label)
        .datasource(PROM)
        .query(query)
        .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(VariableSort.ALPHABETICAL_ASC)
        .multi(True)
        .include_all(True)
        .all_value(".*")
        .current(VariableOption(selected=True, text="All", value="$__all"))
    )


def _variables(board: Dashboard) -> Dashboard:
    suite = _label_variable("suite", "Suite", "label_values(otelgrade_grades_total, suite)")
    grader = _label_variable("grader", "Grader", 'label_values(otelgrade_grades_total{suite=~"$suite"}, grader)')
    environment = _label_variable(
        "environment", "Environment", 'label_values(otelgrade_grades_total{suite=~"$suite"}, environment)'
    ).description('The environments the "by environment" panels show, test traffic included.')
    tests = nonproduction_regex()
    test_traffic = (
        dashboard.TextBoxVariable("test_environments")
        .label("Test environments")
        .description(
            "A regex of the environments that are test traffic, left out of the production panels as the alerts "
            "leave them out (otelgrade:environment:nonproduction in otelgrade-recording.yml)."
        )
        .default_value(tests)
        .current(VariableOption(selected=True, text=tests, value=tests))
    )
    source = dashboard.DatasourceVariable("datasource").label("Prometheus").type("prometheus")
    otelgrade = (
        dashboard.TextBoxVariable("otelgrade_url")
        .label("otelgrade URL")
        .description("Where your browser reaches otelgrade's grades page; failing runs link there.")
        .default_value(OTELGRADE_URL)
        .current(VariableOption(selected=True, text=OTELGRADE_URL, value=OTELGRADE_URL))
    )
    for variable in (source, suite, grader, environment, test_traffic, otelgrade):
        board = board.with_variable(variable)
    return board


def _grades_row(board: Dashboard) -> Dashboard:
    board = board.with_row(Row("Grades (production)"))
    board = board.with_panel(
        _pass_rate_panel(
            "Pass rate by suite and grader",
            "Passed / (passed + failed) grades of production runs (every environment but the test environments, "
            "as the alerts count them). Errors and skipped grades are not failures and are left out.",
            _query(_pass_rate(RATE), "{{suite}} / {{grader}}"),
        )
    )
    board = board.with_panel(
        bargauge.Panel()
        .title("Pass rate, last hour")
        .description(
            "Decided production grades of the last hour that passed, per grader. Red under 90%, orange under 95%."
        )
        .datasource(PROM)
        .unit("percentunit")
        .min(0)
        .max(1)
        .thresholds(_pass_rate_thresholds())
        .height(8)
        .span(12)
        .with_target(_query(_pass_rate("1h"), "{{suite}} / {{grader}}", instant=True))
    )
    board = board.with_panel(
        _timeseries(
            "Failed grades",
            "Failed production grades per interval. Click a series for otelgrade's list of its failing runs and why "
            "they failed; each point (exemplar) carries a failing run's trace id and links to the run and its trace.",
            "short",
            _query(
                f'sum by (suite, grader) (increase(otelgrade_grades_total{{{SEL}, outcome="fail"}}[{RATE}]))',
                "{{suite}} / {{grader}}",
                exemplar=True,
            ),
        ).data_links([_failing_runs_link()])
    )
    return board.with_panel(
        _timeseries(
            "Errors and skipped grades",
            "Grades that could not be decided (judge failed, nothing to grade, grader raised) or were skipped.",
            "ops",
            _query(
                "sum by (suite, grader, outcome) "
                f'(rate(otelgrade_grades_total{{{SEL}, outcome=~"error|skipped"}}[{RATE}]))',
                "{{suite}} / {{grader}}: {{outcome}}",
            ),
            _query(
                f"sum by (suite, grader) (rate(otelgrade_grader_exceptions_total{{{SEL}}}[{RATE}]))",
                "{{suite}} / {{grader}}: raised",
            ),
        )
    )


def _environments_row(board: Dashboard) -> Dashboard:
    board = board.with_row(Row("By environment (test traffic included)"))
    board = board.with_panel(
        _pass_rate_panel(
            "Pass rate by environment",
            "Passed / (passed + failed) grades per environment, for the environments chosen above: how eval and CI "
            "runs do, apart from production. Runs that name no environment are `unknown`.",
            _query(
                _pass_rate(RATE, BY_ENVIRONMENT, "suite, grader, environment"),
                "{{environment}}: {{suite}} / {{grader}}",
            ),
        )
    )
    return board.with_panel(
        _timeseries(
            "Grades by environment",
            "Grades per second per environment and outcome.",
            "ops",
            _query(
                f"sum by (environment, outcome) (rate(otelgrade_grades_total{{{BY_ENVIRONMENT}}}[{RATE}]))",
                "{{environment}}: {{outcome}}",
            ),
        )
    )


def _failing_runs_link() -> dashboard.DashboardLink:
    """A click on a failed-grades series opens otelgrade's list of that grader's failing runs, each with its
    rationale and a link to the run (an exemplar's own link, from the data source, opens `/runs/<trace_id>`)."""
    labels = "suite=${__field.labels.suite}&grader=${__field.labels.grader}"
    return (
        dashboard.DashboardLink("Why they failed: ${__field.labels.suite} / ${__field.labels.grader} in otelgrade")
        .url(f"${{otelgrade_url}}/?outcome=fail&{labels}")
        .target_blank(True)
    )


def _scores_row(board: Dashboard) -> Dashboard:
    board = board.with_row(Row("Scores"))
    board = board.with_panel(
        heatmap.Panel()
        .title("Score distribution")
        .description("How many grades fell in each score bucket (0.0-1.0) per interval, for the selected graders.")
        .datasource(PROM)
        .height(8)
        .span(12)
        # The histogram is already bucketed (`le`): draw its buckets as they are, never re-bucketed by Grafana.
        .calculate(False)
        .rows_frame(heatmap.RowsHeatmapOptions().layout(HeatmapCellLayout.LE).value("Grades"))
        .y_axis(heatmap.YAxisConfig().unit("none").decimals(2).min(0).max(1).axis_label("score"))
        .color(
            heatmap.HeatmapColorOptions()
            .mode(HeatmapColorMode.SCHEME)
            .scheme("Oranges")
            .scale(HeatmapColorScale.EXPONENTIAL)
            .exponent(0.5)
            .steps(64)
        )
        .cell_values(heatmap.CellValues().unit("short"))
        .show_value(VisibilityMode.AUTO)
        .show_tooltip()
        .with_target(
            _query(f"sum by (le) (increase(otelgrade_grade_score_bucket{{{SEL}}}[{RATE}]))", "{{le}}").format(
                PromQueryFormat.HEATMAP
            )
        )
    )
    return board.with_panel(
        _timeseries(
            "Mean score",
            "Average score per grader.",
            "percentunit",
            _query(
                f"sum by (suite, grader) (rate(otelgrade_grade_score_sum{{{SEL}}}[{RATE}]))\n"
                f"/ sum by (suite, grader) (rate(otelgrade_grade_score_count{{{SEL}}}[{RATE}]))",
                "{{suite}} / {{grader}}",
            ),
        )
        .min(0)
        .max(1)
    )


def _pipeline_row(board: Dashboard) -> Dashboard:
    board = board.with_row(Row("Ingest and grading"))
    board = board.with_panel(
        _timeseries(
            "Spans per second",
            "Spans received over OTLP, rejected (by reason), and arriving after their run was graded.",
            "ops",
            _query(f"sum by (protocol) (rate(otelgrade_spans_received_total[{RATE}]))", "received ({{protocol}})"),
            _query(f"sum by (reason) (rate(otelgrade_spans_rejected_total[{RATE}]))", "rejected: {{reason}}"),
            _query(f"sum(rate(otelgrade_late_spans_total[{RATE}]))", "late"),
        )
    )
    board = board.with_panel(
        _timeseries(
            "Runs per second",
            "Agent runs rebuilt (per service and agent) and graded (per suite and environment).",
            "ops",
            _query(
                f'sum by (suite, environment) (rate(otelgrade_runs_graded_total{{suite=~"$suite"}}[{RATE}]))',
                "graded: {{suite}} ({{environment}})",
            ),
            _query(f"sum by (service, agent) (rate(otelgrade_runs_total[{RATE}]))", "{{service}} / {{agent}}"),
        )
    )
    board = board.with_panel(
        _timeseries(
            "In flight",
            "Traces held until their run completes, per replica.",
            "short",
            _query("sum by (instance) (otelgrade_traces_in_flight)", "traces {{instance}}"),
            _query("sum by (instance) (otelgrade_spans_in_flight)", "spans {{instance}}"),
        )
    )
    board = board.with_panel(
        _timeseries(
            "Traces closed, by reason",
            "Why traces were closed: complete, timed out, cut to stay within memory (evicted), shut down.",
            "ops",
            _query(f"sum by (reason) (rate(otelgrade_traces_completed_total[{RATE}]))", "{{reason}}"),
        )
    )
    board = board.with_panel(
        _timeseries(
            "Grading delay",
            "From a run's last span received to its code graders done; normally a little above assembly.settle.",
            "s",
            _query(_quantile(0.5, "otelgrade_grading_delay_seconds"), "p50"),
            _query(_quantile(0.99, "otelgrade_grading_delay_seconds"), "p99"),
        )
    )
    return board.with_panel(
        _timeseries(
            "OTLP requests",
            "Export requests answered, by protocol, signal and result.",
            "reqps",
            _query(
                f"sum by (protocol, signal, result) (rate(otelgrade_requests_total[{RATE}]))",
                "{{protocol}} {{signal}}: {{result}}",
            ),
            _query(
                f"sum by (reason) (rate(otelgrade_log_records_dropped_total[{RATE}]))",
                "log records not kept: {{reason}}",
            ),
        )
    )


def _judges_row(board: Dashboard) -> Dashboard:
    board = board.with_row(Row("LLM judges"))
    board = board.with_panel(
        _timeseries(
            "Judge requests",
            "Requests to judge models per second, by outcome.",
            "reqps",
            _query(f"sum by (model, outcome) (rate(otelgrade_judge_requests_total[{RATE}]))", "{{model}}: {{outcome}}"),
        )
    )
    board = board.with_panel(
        _timeseries(
            "Judge latency",
            "Judge request latency per model.",
            "s",
            _query(_quantile(0.5, "otelgrade_judge_latency_seconds", "model"), "p50 {{model}}"),
            _query(_quantile(0.99, "otelgrade_judge_latency_seconds", "model"), "p99 {{model}}"),
        )
    )
    board = board.with_panel(
        _timeseries(
            "Judge tokens",
            "Tokens per second sent to and received from judge models.",
            "short",
            _query(f"sum by (model, kind) (rate(otelgrade_judge_tokens_total[{RATE}]))", "{{model}}: {{kind}}"),
        )
    )
    board = board.with_panel(
        _timeseries(
            "Judge spend",
            "Spend per hour at the current rate, by the configured price table.",
            "currencyUSD",
            _query(f"sum by (model) (rate(otelgrade_judge_cost_usd_total[{RATE}])) * 3600", "{{model}} per hour"),
        )
    )
    board = board.with_panel(
        _timeseries(
            "Judge coverage",
            "Share of the runs routed to a judge that it gave a verdict (pass or fail) on, per environment: its "
            "`sample` for that environment, less what budgets, outages and missing content cost.",
            "percentunit",
            _query(_coverage(), "{{environment}}: {{suite}} / {{grader}}"),
        )
        .min(0)
        .max(1)
    )
    board = board.with_panel(
        _timeseries(
            "Runs not judged",
            "Runs a judge skipped, by reason (not sampled, budget spent, ...).",
            "ops",
            _query(
                f'sum by (grader, reason) (rate(otelgrade_judge_skipped_runs_total{{grader=~"$grader"}}[{RATE}]))',
                "{{grader}}: {{reason}}",
            ),
        )
    )
    return board.with_panel(
        stat.Panel()
        .title("Judge queue and paused judges")
        .description("Runs waiting for a judge, and graders whose judging is paused because their budget is spent (1).")
        .datasource(PROM)
        .height(8)
        .span(12)
        .with_target(_query("sum(otelgrade_judge_queue_length)", "queued runs"))
        .with_target(_query('max by (grader) (otelgrade_judge_paused{grader=~"$grader"})', "paused: {{grader}}"))
    )


def _conversations_row(board: Dashboard) -> Dashboard:
    board = board.with_row(Row("Conversations"))
    board = board.with_panel(
        _pass_rate_panel(
            "Conversation pass rate by suite and grader",
            "Passed / (passed + failed) grades of whole production conversations (`level: conversation` suites), "
            "each conversation counted once, as first graded; its re-grades after it resumes are in "
            "otelgrade_regrades_total.",
            _query(
                _pass_rate(RATE).replace("otelgrade_grades_total", "otelgrade_conversation_grades_total"),
                "{{suite}} / {{grader}}",
            ),
        )
    )
    return board.with_panel(
        _timeseries(
            "Conversations completed",
            "Conversations graded per second, by why they completed: settled (`conversations.settle` after the "
            "last turn), ended (an end marker), evicted (graded as they stood to stay within "
            "`conversations.max_conversations` / `max_bytes`), shutdown; re-opened by a later turn; and the runs "
            "that name no conversation.",
            "ops",
            _query(f"sum by (reason) (rate(otelgrade_conversations_completed_total[{RATE}]))", "{{reason}}"),
            _query(f"sum(rate(otelgrade_conversations_reopened_total[{RATE}]))", "re-opened"),
            _query(f"sum(rate(otelgrade_runs_without_conversation_total[{RATE}]))", "runs without a conversation id"),
        )
    )


def build() -> dict[str, Any]:
    """The dashboard as a JSON-ready dict."""
    board = (
        Dashboard("otelgrade")
        .uid(UID)
        .description("Pass rates of graded agent runs, failing traces, and otelgrade's own health.")
        .tags(["otelgrade", "agents", "opentelemetry"])
        .refresh("30s")
        .time("now-6h", "now")
        .timezone("browser")
        # Reachable whatever the data source: every failing run held, with why it failed (exemplars keep one
        # trace id per scrape; this list has them all).
        .link(
            dashboard.DashboardLink("Failing runs (otelgrade)")
            .type(DashboardLinkType.LINK)
            .url("${otelgrade_url}/?outcome=fail")
            .tooltip("otelgrade's grades page: every failing run it holds, with the grades' rationale")
            .target_blank(True)
        )
    )
    rows = (_variables, _grades_row, _environments_row, _scores_row, _conversations_row, _pipeline_row, _judges_row)
    for add in rows:
        board = add(board)
    built: dict[str, Any] = json.loads(json.dumps(board.build(), cls=JSONEncoder))
    return _numbered(built)


def _numbered(board: dict[str, Any]) -> dict[str, Any]:
    """Give panels stable ids (for `viewPanel=` links) and queries their A, B, ... reference ids."""
    for number, panel in enumerate(board["panels"], start=1):
        panel["id"] = number
        for index, target in enumerate(panel.get("targets", [])):
            target["refId"] = target.get("refId") or chr(ord("A") + index)
    return board


def render() -> str:
    return json.dumps(build(), indent=2, sort_keys=True) + "\n"


def main() -> int:
    OUTPUT.write_text(render())
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
