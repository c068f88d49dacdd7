"""The chart's optional monitoring: the Grafana dashboard ConfigMap and the PrometheusRule.

Both are off by default and rendered by Helm's own engine here. Every query of the dashboard
and every alert expression names only metrics topobridge exports (read from the real
registries, with the `_total`/`_bucket`/`_sum`/`_count` series Prometheus stores), and parses
with `promtool` (Debian's `prometheus` package, which `make test` installs). `promtool test rules`
then runs each alert over made-up series: it fires when it should, stays quiet when it
should, and its annotations come out with Prometheus' `{{ $labels }}` filled in, not Helm's.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import exported_metrics
import pytest
import yaml

from e2e.chart import CHART_DIR, ChartError, render

NS = "tb-system"
DASHBOARD_FILE = CHART_DIR / "dashboards" / "topobridge.json"
ALL_ALERTS = {
    "TopobridgeGangPending",
    "TopobridgeSchedulingErrors",
    "TopobridgeGangRolledBack",
    "TopobridgeNoLeader",
    "TopobridgeWebhookDenialSpike",
    "TopobridgeSchedulerErrors",
    "TopobridgeWebhookUnavailable",
    "TopobridgeWebhookSlow",
}
FOREIGN_METRICS = {
    "up",
    "apiserver_admission_webhook_rejection_count",
    "apiserver_admission_webhook_admission_duration_seconds_bucket",
}
"""Series alerts read that topobridge does not export: Prometheus' own `up`, and the API
server's view of its webhooks (where Prometheus scrapes the API server)."""
API = 'name=~".+[.]topobridge[.]io"'
"""The chart's default selector of the API server's webhook series."""
GRAFANA_PANELS = {"row", "timeseries", "stat", "gauge", "bargauge", "table", "text"}
"""Panel types Grafana ships: the dashboard needs no plugin."""
GRAFANA_VARIABLES = {
    "$__rate_interval": "5m",
    "$__range": "6h",
    "$namespace": ".*",
    "$resource": "nvidia.com/gpu",
}
"""What Grafana puts in place of the variables the queries use, for promtool to parse them."""


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def monitoring(**values: Any) -> dict[str, Any]:
    """Values turning both resources on, with `values` merged into `metrics`."""
    metrics: dict[str, Any] = {"dashboard": {"enabled": True}, "prometheusRule": {"enabled": True}}
    for key, sub in values.items():
        metrics[key] = {**metrics.get(key, {}), **sub}
    return {"metrics": metrics}


def rule_group(values: dict[str, Any] | None = None) -> dict[str, Any]:
    objs = render(values or monitoring(), namespace=NS)
    (rule,) = by_kind(objs, "PrometheusRule")
    (group,) = rule["spec"]["groups"]
    assert isinstance(group, dict)
    return group


def alerts(values: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for r in rule_group(values)["rules"]}


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD_FILE.read_text())
    return loaded


def panels(dash: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel, those inside collapsed rows too."""
    out = []
    for panel in dash["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))
    return out


def targets(dash: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(p, t) for p in panels(dash) for t in p.get("targets", [])]


# --- metric names in PromQL -------------------------------------------------------------------

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\[\]]*\]")
_LABEL_LIST = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_CALL = re.compile(r"\b[a-zA-Z_][a-zA-Z0-9_]*\s*\(")
_NAME = re.compile(r"(?<![\w.:])[a-zA-Z_:][a-zA-Z0-9_:]*")
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan"}
_LABEL_VALUES = re.compile(r"^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*[a-zA-Z_]\w*\s*\)$")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: what is left once strings, label
    matchers, ranges, grouping label lists and function names are taken out."""
    for pattern, by in ((_STRING, '""'), (_MATCHERS, ""), (_RANGE, ""), (_LABEL_LIST, ""), (_CALL, "(")):
        expr = pattern.sub(by, expr)
    return {n for n in _NAME.findall(expr) if n.lower() not in _KEYWORDS}


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        pytest.param("up", {"up"}, id="bare"),
        pytest.param(
            'rate(a_total{kind="x",b=~"$v"}[5m] offset 1h)', {"a_total"}, id="matchers-range-offset"
        ),
        pytest.param(
            "histogram_quantile(0.99, sum by (kind, le) (rate(h_bucket[1m])))", {"h_bucket"}, id="by-clause"
        ),
        pytest.param("sum(x) without (pod) / on(job) group_left(team) y", {"x", "y"}, id="trailing-clauses"),
        pytest.param("(sum(g) or vector(0)) < 1e3", {"g"}, id="functions-numbers"),
        pytest.param('a > 3 * b and c{l="or and"} > 0.1', {"a", "b", "c"}, id="keywords-in-strings"),
        pytest.param("ns:rule:rate5m", {"ns:rule:rate5m"}, id="recording-rule-name"),
    ],
)
def test_metric_names_of_an_expression(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


def unknown_metrics(exprs: dict[str, str]) -> dict[str, set[str]]:
    exported = exported_metrics.series_names()
    found = {where: metric_names(expr) - exported for where, expr in exprs.items()}
    return {where: names for where, names in found.items() if names}


def test_the_exported_names_include_each_series_prometheus_stores() -> None:
    names = exported_metrics.series_names()
    assert {"topobridge_gangs_placed_total", "topobridge_webhook_denials_total"} <= names
    assert {f"topobridge_gang_scheduling_duration_seconds{s}" for s in ("_bucket", "_sum", "_count")} <= names
    assert "topobridge_gangs_placed" not in names, "a counter is stored with _total only"
    assert "topobridge_oldest_pending_gang_age_seconds" in names


# --- promtool ---------------------------------------------------------------------------------


def promtool(*args: str, cwd: Path) -> str:
    """Run promtool; its output, or a failure naming what it said."""
    binary = shutil.which("promtool")
    assert binary is not None, (
        "promtool not found: `apt-get install prometheus` (Debian ships it; make test does)"
    )
    done = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"promtool {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def write_rules(path: Path, groups: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    return path


# --- off by default, on by value ---------------------------------------------------------------


def test_both_are_off_by_default() -> None:
    objs = render(namespace=NS)
    assert by_kind(objs, "PrometheusRule") == []
    assert [c for c in by_kind(objs, "ConfigMap") if "grafana_dashboard" in c["metadata"]["labels"]] == []


def test_enabled_both_render() -> None:
    objs = render(monitoring(), namespace=NS)
    (config,) = by_kind(objs, "ConfigMap")
    assert config["metadata"]["namespace"] == NS
    assert config["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert "annotations" not in config["metadata"], "no folder asked for"
    assert json.loads(config["data"]["topobridge.json"]) == dashboard()
    (rule,) = by_kind(objs, "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1" and rule["metadata"]["namespace"] == NS
    assert set(alerts()) == ALL_ALERTS


@pytest.mark.parametrize(
    ("values", "labels", "annotations", "namespace"),
    [
        pytest.param(
            {"label": "dashboards", "labelValue": "topo"}, {"dashboards": "topo"}, None, NS, id="label"
        ),
        pytest.param(
            {"folder": "Scheduling"},
            {"grafana_dashboard": "1"},
            {"grafana_folder": "Scheduling"},
            NS,
            id="folder",
        ),
        pytest.param(
            {"folder": "Sched", "folderAnnotation": "k8s-sidecar-target-directory"},
            {"grafana_dashboard": "1"},
            {"k8s-sidecar-target-directory": "Sched"},
            NS,
            id="folder-annotation",
        ),
        pytest.param(
            {"namespace": "monitoring"}, {"grafana_dashboard": "1"}, None, "monitoring", id="namespace"
        ),
    ],
)
def test_dashboard_configmap_follows_the_sidecars_settings(
    values: dict[str, Any], labels: dict[str, str], annotations: dict[str, str] | None, namespace: str
) -> None:
    (config,) = by_kind(render(monitoring(dashboard=values), namespace=NS), "ConfigMap")
    meta = config["metadata"]
    assert labels.items() <= meta["labels"].items()
    assert meta.get("annotations") == annotations
    assert meta["namespace"] == namespace


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param(
            monitoring(prometheusRule={"gangPending": {"minutes": 0}}),
            "at '/metrics/prometheusRule/gangPending/minutes'",
            id="minutes",
        ),
        pytest.param(
            monitoring(prometheusRule={"webhookDenialSpike": {"factor": 1}}),
            "at '/metrics/prometheusRule/webhookDenialSpike/factor'",
            id="factor",
        ),
        pytest.param(
            monitoring(prometheusRule={"noLeader": {"severity": ""}}),
            "at '/metrics/prometheusRule/noLeader/severity'",
            id="severity",
        ),
        pytest.param(
            monitoring(prometheusRule={"gangPending": {"minuts": 5}}),
            "additional properties 'minuts' not allowed",
            id="typo",
        ),
        pytest.param(monitoring(dashboard={"label": ""}), "at '/metrics/dashboard/label'", id="label"),
    ],
)
def test_the_schema_refuses_bad_monitoring_values(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ChartError, match=re.escape(message)):
        render(values, namespace=NS)


# --- the dashboard ----------------------------------------------------------------------------


def test_dashboard_structure() -> None:
    dash = dashboard()
    ids = [p["id"] for p in panels(dash)]
    assert len(ids) == len(set(ids)), f"panel ids repeat: {sorted(ids)}"
    assert {p["type"] for p in panels(dash)} <= GRAFANA_PANELS
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    uses_datasource = {"type": "prometheus", "uid": "${datasource}"}
    for panel in panels(dash):
        if panel["type"] == "row":
            continue
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(refs) == len(set(refs)), panel["title"]
        assert panel["datasource"] == uses_datasource, panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip(), f"{panel['title']} {target['refId']}: no expr"
            assert target["datasource"] == uses_datasource, panel["title"]
    assert variables["namespace"]["datasource"] == uses_datasource


def test_dashboard_panels_do_not_overlap() -> None:
    def cells(panel: dict[str, Any]) -> set[tuple[int, int]]:
        g = panel["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24, panel["title"]
        return set(itertools.product(range(g["x"], g["x"] + g["w"]), range(g["y"], g["y"] + g["h"])))

    taken: dict[tuple[int, int], str] = {}
    for panel in panels(dashboard()):
        for cell in cells(panel):
            assert cell not in taken, f"{panel['title']} overlaps {taken[cell]}"
            taken[cell] = panel["title"]


def test_every_dashboard_query_selects_by_the_namespace_variable() -> None:
    for panel, target in targets(dashboard()):
        selectors = _MATCHERS.findall(target["expr"])
        assert selectors, f"{panel['title']}: no selector"
        assert all('namespace=~"$namespace"' in s for s in selectors), f"{panel['title']}: {target['expr']}"


def dashboard_queries() -> dict[str, str]:
    dash = dashboard()
    exprs = {f"{p['title']} {t['refId']}": t["expr"] for p, t in targets(dash)}
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            found = _LABEL_VALUES.match(var["definition"])
            assert found, f"variable {var['name']}: {var['definition']}"
            exprs[f"variable {var['name']}"] = found.group(1)
    return exprs


def test_dashboard_queries_name_exported_metrics() -> None:
    assert unknown_metrics(dashboard_queries()) == {}


def test_dashboard_shows_what_the_issue_asks() -> None:
    used = set().union(*(metric_names(e) for e in dashboard_queries().values()))
    asked = {
        "topobridge_gangs_placed_total",
        "topobridge_gangs_rolled_back_total",
        "topobridge_scheduling_attempts_total",
        "topobridge_gang_scheduling_duration_seconds_bucket",
        "topobridge_preemptions_total",
        "topobridge_preemption_victims_total",
        "topobridge_pending_gangs",
        "topobridge_oldest_pending_gang_age_seconds",
        "topobridge_webhook_requests_total",
        "topobridge_webhook_denials_total",
        "topobridge_webhook_request_duration_seconds_bucket",
        "topobridge_leader",
        "topobridge_kube_requests_total",
        "topobridge_kube_client_throttle_seconds_total",
        "topobridge_workqueue_depth",
        "topobridge_pending_gangs_by_reason",
        "topobridge_scheduler_errors_total",
        "topobridge_tier_free",
        "topobridge_tier_largest_free",
    }
    assert asked - used == set()
    attempts = next(e for e in dashboard_queries().values() if "topobridge_scheduling_attempts_total" in e)
    assert "by (result)" in attempts, "attempts are split by result, Error included"


def test_dashboard_queries_parse(tmp_path: Path) -> None:
    """Each query as a recording rule: promtool parses them all."""
    rules = []
    for i, expr in enumerate(dashboard_queries().values()):
        for var, value in GRAFANA_VARIABLES.items():
            expr = expr.replace(var, value)
        assert "$" not in expr, f"a Grafana variable this test does not know: {expr}"
        rules.append({"record": f"dashboard:query{i}", "expr": expr})
    out = promtool(
        "check",
        "rules",
        write_rules(tmp_path / "queries.yaml", [{"name": "q", "rules": rules}]).name,
        cwd=tmp_path,
    )
    assert f"{len(rules)} rules found" in out


# --- the alerts -------------------------------------------------------------------------------


def test_alert_expressions_name_exported_metrics() -> None:
    exprs = {name: rule["expr"] for name, rule in alerts().items()}
    unknown = {name: names - FOREIGN_METRICS for name, names in unknown_metrics(exprs).items()}
    assert {name: names for name, names in unknown.items() if names} == {}


def test_rules_parse(tmp_path: Path) -> None:
    out = promtool("check", "rules", write_rules(tmp_path / "rules.yaml", [rule_group()]).name, cwd=tmp_path)
    assert f"{len(ALL_ALERTS)} rules found" in out


@pytest.mark.parametrize(
    ("args", "left_out"),
    [
        pytest.param(
            {"no-controller": True},
            {
                "TopobridgeGangPending",
                "TopobridgeSchedulingErrors",
                "TopobridgeGangRolledBack",
                "TopobridgeNoLeader",
                "TopobridgeSchedulerErrors",
            },
            id="webhook-only",
        ),
        pytest.param(
            {"no-webhook": True},
            {"TopobridgeWebhookDenialSpike", "TopobridgeWebhookUnavailable", "TopobridgeWebhookSlow"},
            id="controller-only",
        ),
        pytest.param(
            {"no-fallback-scheduler": True},
            {
                "TopobridgeGangPending",
                "TopobridgeSchedulingErrors",
                "TopobridgeGangRolledBack",
                "TopobridgeSchedulerErrors",
            },
            id="no-scheduler",
        ),
        pytest.param({"no-leader-elect": True}, {"TopobridgeNoLeader"}, id="no-election"),
    ],
)
def test_alerts_on_parts_switched_off_are_left_out(args: dict[str, Any], left_out: set[str]) -> None:
    values = {**monitoring(), "args": args, "replicaCount": 1}
    assert set(alerts(values)) == ALL_ALERTS - left_out


def test_thresholds_severities_labels_and_selector_are_values() -> None:
    values = monitoring(
        prometheusRule={
            "labels": {"release": "prom"},
            "selector": 'job="tb"',
            "gangPending": {"minutes": 30, "severity": "page"},
            "schedulingErrors": {"minutes": 3},
            "webhookDenialSpike": {"factor": 5, "minPerSecond": 0.5},
            "gangRolledBack": {"minutes": 60},
        }
    )
    rule = by_kind(render(values, namespace=NS), "PrometheusRule")[0]
    assert rule["metadata"]["labels"]["release"] == "prom"
    found = alerts(values)
    assert found["TopobridgeGangPending"]["expr"].endswith("> 1800")
    assert found["TopobridgeGangPending"]["labels"] == {"severity": "page"}
    assert found["TopobridgeSchedulingErrors"]["for"] == "3m"
    assert "> 5 * (" in found["TopobridgeWebhookDenialSpike"]["expr"]
    assert found["TopobridgeWebhookDenialSpike"]["expr"].endswith("> 0.5")
    assert "[60m]" in found["TopobridgeGangRolledBack"]["expr"]
    for name, alert in found.items():
        selectors = [m for m in _MATCHERS.findall(alert["expr"]) if API not in m]
        assert selectors and all('job="tb"' in s for s in selectors), name
        assert all(NS not in s for s in selectors), name


S = f'namespace="{NS}"'
"""The default selector: the release namespace."""

PROMTOOL_CASES = [
    pytest.param(
        [
            (f'topobridge_oldest_pending_gang_age_seconds{{{S},pod="a"}}', "0+60x30"),
            (f'topobridge_oldest_pending_gang_age_seconds{{{S},pod="b"}}', "0x30"),
        ],
        [("TopobridgeGangPending", "15m", []), ("TopobridgeGangPending", "20m", [{"severity": "warning"}])],
        id="pending-past-15-minutes",
    ),
    pytest.param(
        [('topobridge_oldest_pending_gang_age_seconds{namespace="other"}', "0+60x30")],
        [("TopobridgeGangPending", "25m", [])],
        id="pending-in-another-release",
    ),
    pytest.param(
        [
            (f'topobridge_scheduling_attempts_total{{{S},result="Error"}}', "0+1x40"),
            (f'topobridge_scheduling_attempts_total{{{S},result="Success"}}', "0+9x40"),
        ],
        [
            ("TopobridgeSchedulingErrors", "6m", []),
            ("TopobridgeSchedulingErrors", "20m", [{"severity": "critical"}]),
        ],
        id="errors-for-10-minutes",
    ),
    pytest.param(
        [(f'topobridge_scheduling_attempts_total{{{S},result="Unschedulable"}}', "0+9x40")],
        [("TopobridgeSchedulingErrors", "30m", [])],
        id="unschedulable-is-no-error",
    ),
    pytest.param(
        [(f"topobridge_gangs_rolled_back_total{{{S}}}", "0x10 1x60")],
        [
            ("TopobridgeGangRolledBack", "5m", []),
            ("TopobridgeGangRolledBack", "20m", [{"severity": "warning"}]),
            ("TopobridgeGangRolledBack", "50m", []),
        ],
        id="rollback-for-30-minutes",
    ),
    pytest.param(
        [(f'topobridge_leader{{{S},pod="a"}}', "1x10 0x20"), (f'topobridge_leader{{{S},pod="b"}}', "0x30")],
        [
            ("TopobridgeNoLeader", "8m", []),
            ("TopobridgeNoLeader", "13m", []),
            ("TopobridgeNoLeader", "20m", [{"severity": "critical"}]),
        ],
        id="lease-lost",
    ),
    pytest.param(
        [('topobridge_leader{namespace="other"}', "1x30")],
        [("TopobridgeNoLeader", "10m", [{"severity": "critical"}])],
        id="no-replica-scraped",
    ),
    pytest.param(
        [(f'topobridge_webhook_denials_total{{{S},kind="pods",pod="a"}}', "0+3x120 420+60x30")],
        [
            ("TopobridgeWebhookDenialSpike", "110m", []),
            ("TopobridgeWebhookDenialSpike", "135m", [{"severity": "warning", "kind": "pods"}]),
        ],
        id="spike-over-a-baseline",
    ),
    pytest.param(
        [(f'topobridge_webhook_denials_total{{{S},kind="pods",pod="a"}}', "0+60x180")],
        [("TopobridgeWebhookDenialSpike", "150m", [])],
        id="steady-denials",
    ),
    pytest.param(
        [
            (f'topobridge_webhook_denials_total{{{S},kind="jobs",pod="a"}}', "_x100 0+60x40"),
            (f'topobridge_webhook_denials_total{{{S},kind="jobs",pod="b"}}', "_x100 0+60x40"),
        ],
        [("TopobridgeWebhookDenialSpike", "110m", [{"severity": "warning", "kind": "jobs"}])],
        id="new-kind-denied",
    ),
    pytest.param(
        [(f'topobridge_webhook_denials_total{{{S},kind="jobs",pod="a"}}', "_x100 0+3x40")],
        [("TopobridgeWebhookDenialSpike", "130m", [])],
        id="too-few-to-matter",
    ),
    pytest.param(
        [
            (f'topobridge_scheduler_errors_total{{{S},where="view"}}', "0x10 1x30"),
            (f'topobridge_scheduler_errors_total{{{S},where="gang"}}', "0x40"),
            (f'topobridge_scheduler_errors_total{{{S},where="cycle"}}', "0x40"),
        ],
        [
            ("TopobridgeSchedulerErrors", "8m", []),
            ("TopobridgeSchedulerErrors", "12m", [{"severity": "warning", "where": "view"}]),
            ("TopobridgeSchedulerErrors", "25m", []),
        ],
        id="a-view-error-of-the-last-10-minutes",
    ),
    pytest.param(
        [(f'topobridge_scheduler_errors_total{{{S},where="gang"}}', "0x40")],
        [("TopobridgeSchedulerErrors", "30m", [])],
        id="no-scheduler-errors",
    ),
    pytest.param(
        [(f'up{{{S},pod="a"}}', "1x10 0x20"), (f'up{{{S},pod="b"}}', "0x30")],
        [
            ("TopobridgeWebhookUnavailable", "11m", []),
            ("TopobridgeWebhookUnavailable", "13m", [{"severity": "critical"}]),
        ],
        id="no-replica-up",
    ),
    pytest.param(
        [
            (f'up{{{S},pod="a"}}', "1x40"),
            (
                'apiserver_admission_webhook_rejection_count{name="pods-labelled.validate.topobridge.io",'
                'error_type="calling_webhook_error",operation="CREATE",type="validating"}',
                "0x10 0+2x30",
            ),
            (
                'apiserver_admission_webhook_rejection_count{name="other.example.com",'
                'error_type="calling_webhook_error",operation="CREATE",type="validating"}',
                "0+2x40",
            ),
        ],
        [
            ("TopobridgeWebhookUnavailable", "9m", []),
            ("TopobridgeWebhookUnavailable", "14m", [{"severity": "critical"}]),
        ],
        id="api-server-cannot-call-it",
    ),
    pytest.param(
        [
            (f'up{{{S},pod="a"}}', "1x40"),
            (
                'apiserver_admission_webhook_rejection_count{name="pods-labelled.validate.topobridge.io",'
                'error_type="no_error",operation="CREATE",type="validating"}',
                "0+2x40",
            ),
        ],
        [("TopobridgeWebhookUnavailable", "30m", [])],
        id="denials-are-no-outage",
    ),
    pytest.param(
        [
            (
                f'topobridge_webhook_request_duration_seconds_bucket{{{S},kind="pods",le="0.5"}}',
                "0+10x10 100+1x30",
            ),
            (
                f'topobridge_webhook_request_duration_seconds_bucket{{{S},kind="pods",le="2.5"}}',
                "0+10x10 100+10x30",
            ),
            (
                f'topobridge_webhook_request_duration_seconds_bucket{{{S},kind="pods",le="+Inf"}}',
                "0+10x10 100+10x30",
            ),
        ],
        [
            ("TopobridgeWebhookSlow", "10m", []),
            ("TopobridgeWebhookSlow", "25m", [{"severity": "warning"}]),
        ],
        id="slow-answers",
    ),
    pytest.param(
        [
            (
                'apiserver_admission_webhook_admission_duration_seconds_bucket{name="podgroups.mutate.topobridge.io",le="0.5"}',
                "0+10x40",
            ),
            (
                'apiserver_admission_webhook_admission_duration_seconds_bucket{name="podgroups.mutate.topobridge.io",le="+Inf"}',
                "0+10x40",
            ),
            (f'topobridge_webhook_request_duration_seconds_bucket{{{S},kind="pods",le="0.5"}}', "0+10x40"),
            (f'topobridge_webhook_request_duration_seconds_bucket{{{S},kind="pods",le="+Inf"}}', "0+10x40"),
        ],
        [("TopobridgeWebhookSlow", "30m", [])],
        id="fast-answers",
    ),
    pytest.param(
        [
            (
                'apiserver_admission_webhook_admission_duration_seconds_bucket{name="podgroups.mutate.topobridge.io",le="0.5"}',
                "0+1x40",
            ),
            (
                'apiserver_admission_webhook_admission_duration_seconds_bucket{name="podgroups.mutate.topobridge.io",le="2.5"}',
                "0+10x40",
            ),
            (
                'apiserver_admission_webhook_admission_duration_seconds_bucket{name="podgroups.mutate.topobridge.io",le="+Inf"}',
                "0+10x40",
            ),
        ],
        [("TopobridgeWebhookSlow", "20m", [{"severity": "warning"}])],
        id="slow-as-the-api-server-waits",
    ),
]


def promtool_test(
    tmp_path: Path, group: dict[str, Any], series: list[tuple[str, str]], checks: list[dict[str, Any]]
) -> None:
    """`promtool test rules`: `group` evaluated every minute over `series` (selector, values a
    minute apart in promtool's notation), with `checks` as its alert_rule_test."""
    write_rules(tmp_path / "rules.yaml", [group])
    unit = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series],
                "alert_rule_test": checks,
            }
        ],
    }
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(unit, sort_keys=False))
    promtool("test", "rules", "test.yaml", cwd=tmp_path)


@pytest.mark.parametrize(("series", "expected"), PROMTOOL_CASES)
def test_alerts_fire_when_they_should(
    tmp_path: Path, series: list[tuple[str, str]], expected: list[tuple[str, str, list[dict[str, str]]]]
) -> None:
    group = rule_group()
    for rule in group["rules"]:
        del rule["annotations"]  # promtool compares them whole; the next test does
    checks = [
        {"eval_time": at, "alertname": name, "exp_alerts": [{"exp_labels": labels} for labels in firing]}
        for name, at, firing in expected
    ]
    promtool_test(tmp_path, group, series, checks)


@pytest.mark.parametrize(
    ("series", "alert", "labels", "annotations"),
    [
        pytest.param(
            [(f'topobridge_webhook_denials_total{{{S},kind="pods"}}', "_x100 0+60x40")],
            ("TopobridgeWebhookDenialSpike", "110m"),
            {"severity": "warning", "kind": "pods"},
            {
                "summary": "The webhook denies pods far more often than in the last hour.",
                "description": "1 denials per second of pods, more than 3 times the rate of the hour "
                "before. A client or a controller keeps submitting objects the webhook refuses; the "
                "denied requests' messages name the field.",
            },
            id="labels-and-value",
        ),
        pytest.param(
            [(f"topobridge_oldest_pending_gang_age_seconds{{{S}}}", "0+60x30")],
            ("TopobridgeGangPending", "20m"),
            {"severity": "warning"},
            {
                "summary": "A gang has waited more than 15 minutes to be placed.",
                "description": "The oldest gang pending in topobridge's fallback scheduler has waited "
                "20m 0s. Its pods' PodScheduled condition and its PodGroup's status say why; "
                "`topobridge tree` lists the pending gangs.",
            },
            id="value-as-a-duration",
        ),
    ],
)
def test_annotations_are_prometheus_templates(
    tmp_path: Path,
    series: list[tuple[str, str]],
    alert: tuple[str, str],
    labels: dict[str, str],
    annotations: dict[str, str],
) -> None:
    """Helm leaves `{{ $labels.kind }}` and `{{ $value }}` to Prometheus, which fills them in."""
    name, at = alert
    expected = [{"exp_labels": labels, "exp_annotations": annotations}]
    promtool_test(
        tmp_path, rule_group(), series, [{"eval_time": at, "alertname": name, "exp_alerts": expected}]
    )
