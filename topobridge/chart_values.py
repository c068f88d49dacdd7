"""The Helm chart's values, described once: the JSON Schema Helm checks at install
(`values.schema.json`) and the chart's README table are both generated from `values_schema()`
by `topobridge manifests`.

`args` is exactly the flags of `topobridge run` (from its parser) less `cmd_manifests`'
NOT_VALUES; every other key is declared below with its type, its allowed values and what it
does. Every object is closed (`additionalProperties: false`), so a typo such as `image.tagg`
is refused by Helm before anything reaches the cluster, and a policy spelled `fail` is refused
by its enum.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from typing import Any

Schema = dict[str, Any]

OPEN_OBJECT: Schema = {"type": "object"}
"""A Kubernetes structure passed through as is (affinity, resources, ...): the API server
validates it."""


def _str(description: str, **extra: Any) -> Schema:
    return {"type": "string", "description": description, **extra}


def _bool(description: str) -> Schema:
    return {"type": "boolean", "description": description}


def _int(description: str, **extra: Any) -> Schema:
    return {"type": "integer", "description": description, **extra}


def _number(description: str, **extra: Any) -> Schema:
    return {"type": "number", "description": description, **extra}


def _obj(description: str, properties: Mapping[str, Schema]) -> Schema:
    return {
        "type": "object",
        "description": description,
        "additionalProperties": False,
        "properties": dict(properties),
    }


def _passthrough(description: str, kind: str = "object") -> Schema:
    schema: Schema = {"type": kind, "description": description}
    if kind == "array":
        schema["items"] = OPEN_OBJECT
    return schema


def _string_map(description: str) -> Schema:
    return {"type": "object", "description": description, "additionalProperties": {"type": "string"}}


DURATION = r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"
QUANTITY = r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$"


def _flag_schema(action: argparse.Action) -> Schema:
    described = {"description": action.help or ""}
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        return {"type": ["boolean", "null"], **described}
    if isinstance(action, argparse._AppendAction):
        return {"type": ["array", "null"], "items": {"type": "string", "minLength": 1}, **described}
    kind = {int: "integer", float: "number"}.get(action.type, "string")  # type: ignore[call-overload]
    schema: Schema = {"type": [kind, "null"], **described}
    if action.choices:
        schema["enum"] = [*action.choices, None]
    return schema


def run_flags(not_values: Mapping[str, str]) -> dict[str, Schema]:
    """One schema per flag of `topobridge run`, keyed by the flag without its dashes."""
    from topobridge.cli import GLOBAL_FLAGS, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags: dict[str, Schema] = {}
    global_flags = {flag for flag, _ in GLOBAL_FLAGS}
    for action in sub.choices["run"]._actions:
        long = next((o for o in action.option_strings if o.startswith("--")), None)
        if long is None or long in not_values or long in global_flags or action.help == argparse.SUPPRESS:
            continue  # hidden flags are set by topobridge itself (e.g. on webhook workers)
        flags[long.removeprefix("--")] = _flag_schema(action)
    return flags


def values_schema(not_values: Mapping[str, str]) -> Schema:
    """JSON Schema (draft 7) of every value of the chart."""
    from topobridge.cli import LOG_FORMATS, LOG_LEVELS

    properties: dict[str, Schema] = {
        "image": _obj(
            "The topobridge image (built from the repository's Dockerfile).",
            {
                "repository": _str("Image repository.", minLength=1),
                "tag": _str("Image tag; empty: the chart's appVersion."),
                "pullPolicy": _str("Kubernetes imagePullPolicy.", enum=["Always", "IfNotPresent", "Never"]),
            },
        ),
        "imagePullSecrets": {
            "type": "array",
            "description": "Secrets for pulling the image (`[{name: ...}]`).",
            "items": _obj("", {"name": _str("A Secret in the release namespace.", minLength=1)}),
        },
        "replicaCount": _int(
            "Replicas: every replica serves the webhook, the one holding the Lease schedules. "
            "Above 1 the chart adds a PodDisruptionBudget.",
            minimum=1,
        ),
        "nameOverride": _str("Replaces the chart name in object names."),
        "fullnameOverride": _str("Replaces the whole object name prefix."),
        "logLevel": _str("`--log-level` before `run`.", enum=list(LOG_LEVELS)),
        "logFormat": _str("`--log-format` before `run`.", enum=list(LOG_FORMATS)),
        "args": {
            "type": "object",
            "description": "One key per flag of `topobridge run`, without its dashes: true adds a "
            "switch, false or null leaves it out, a list repeats it, anything else is `--flag=value`.",
            "additionalProperties": False,
            "properties": run_flags(not_values),
        },
        "extraArgs": {
            "type": "array",
            "description": "Appended verbatim after the flags.",
            "items": {"type": "string"},
        },
        "serviceAccount": _obj(
            "The ServiceAccount topobridge runs as.",
            {
                "create": _bool("Create it (else it must exist)."),
                "name": _str("Its name; empty: the release's full name."),
                "annotations": _string_map("Annotations on it (e.g. for a cloud identity)."),
            },
        ),
        "rbac": _obj(
            "RBAC generated from the code (`controller/rbac.py`).",
            {
                "create": _bool(
                    "Create the ClusterRole (Deployments by name only) and the Lease Role in the "
                    "lease namespace, with their bindings."
                )
            },
        ),
        "crds": _obj(
            "The third-party CRDs topobridge works with (LeaderWorkerSet, Volcano PodGroup and "
            "HyperNode, Koordinator ClusterNetworkTopology, both coscheduling PodGroups).",
            {
                "install": _bool(
                    "Install them with the release (kept on uninstall). Off by default: they belong "
                    "to LWS', Volcano's and Koordinator's own charts, and two owners collide."
                )
            },
        ),
        "webhook": _obj(
            "The admission webhooks.",
            {
                "failurePolicy": _str(
                    "Validating webhooks while no replica answers: Fail refuses objects, Ignore "
                    "admits them unchecked (the mutating ones and the one for Jobs are always Ignore).",
                    enum=["Fail", "Ignore"],
                ),
                "timeoutSeconds": _int("Seconds the API server waits for an answer.", minimum=1, maximum=30),
                "excludeNamespaces": {
                    "type": "array",
                    "description": "Namespaces never sent to the webhook (the release's is always added).",
                    "items": {"type": "string", "minLength": 1},
                },
                "service": _obj(
                    "The webhook Service.", {"port": _int("Service port.", minimum=1, maximum=65535)}
                ),
                "certManager": _obj(
                    "Serving certificate from cert-manager.",
                    {
                        "enabled": {
                            "description": "auto: when cert-manager.io/v1 is served; true; false: "
                            "the chart makes a CA and a certificate itself (`--set` may pass "
                            '"true"/"false" as strings).',
                            "enum": ["auto", True, False, "true", "false"],
                        },
                        "issuerRef": {
                            "type": "object",
                            "description": "An existing Issuer or ClusterIssuer; empty: a self-signed Issuer.",
                            "additionalProperties": False,
                            "properties": {
                                "name": _str("Issuer name.", minLength=1),
                                "kind": _str("Issuer kind.", enum=["Issuer", "ClusterIssuer"]),
                                "group": _str("Issuer API group."),
                            },
                        },
                        "duration": _str("Certificate lifetime (Go duration).", pattern=DURATION),
                        "renewBefore": _str("Renew this long before expiry (Go duration).", pattern=DURATION),
                    },
                ),
                "selfSigned": _obj(
                    "The chart's own CA and certificate (without cert-manager).",
                    {"validityDays": _int("Days the certificate is valid.", minimum=1)},
                ),
            },
        ),
        "service": _obj(
            "The Service in front of the webhook and metrics ports.",
            {"type": _str("Service type.", enum=["ClusterIP", "NodePort", "LoadBalancer"])},
        ),
        "metrics": _obj(
            "Prometheus metrics.",
            {
                "serviceMonitor": _obj(
                    "A ServiceMonitor (needs the Prometheus Operator's monitoring.coreos.com/v1).",
                    {
                        "enabled": _bool("Create it."),
                        "interval": _str("Scrape interval.", pattern=DURATION),
                        "scrapeTimeout": _str("Scrape timeout.", pattern=DURATION),
                        "labels": _string_map("Labels the Prometheus selects ServiceMonitors by."),
                    },
                ),
                "dashboard": _dashboard_values(),
                "prometheusRule": _rule_values(),
            },
        ),
        "networkPolicy": _obj(
            "A NetworkPolicy admitting only the API server to the webhook port.",
            {
                "enabled": _bool("Create it (needs a network plugin that enforces NetworkPolicies)."),
                "apiServerCIDRs": {
                    "type": "array",
                    "description": "Where the API server's requests come from (its addresses as "
                    "pods see them; `kubectl get endpoints kubernetes`). Required when enabled.",
                    "items": {"type": "string", "minLength": 1},
                },
                "metricsFrom": _passthrough(
                    "NetworkPolicyPeers allowed to scrape the metrics port (empty: nobody).", "array"
                ),
            },
        ),
        "podDisruptionBudget": _obj(
            "A PodDisruptionBudget, rendered only with more than one replica (with one it "
            "would block every node drain).",
            {
                "enabled": _bool("Create it when replicaCount > 1."),
                "minAvailable": {
                    "type": ["integer", "string"],
                    "description": "Replicas kept through voluntary disruptions (a number or a percentage).",
                },
            },
        ),
        "resources": _passthrough("The container's resources (requests/limits)."),
        "podAnnotations": _string_map("Annotations on the pods."),
        "podLabels": _string_map("Labels on the pods."),
        "priorityClassName": _str(
            "The pods' PriorityClass: the webhook and the fallback scheduler are cluster-critical "
            "(empty: none)."
        ),
        "nodeSelector": _string_map("The pods' nodeSelector."),
        "tolerations": _passthrough("The pods' tolerations.", "array"),
        "affinity": _passthrough("The pods' affinity; empty: prefer spreading replicas over nodes."),
        "topologySpreadConstraints": _passthrough("The pods' topologySpreadConstraints.", "array"),
        "podSecurityContext": _passthrough("The pods' securityContext."),
        "securityContext": _passthrough("The container's securityContext."),
        "tmpSizeLimit": _str("Size of the writable tmpfs (certificates, temporary files).", pattern=QUANTITY),
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "topobridge chart values",
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }


def _dashboard_values() -> Schema:
    return _obj(
        "A Grafana dashboard (`dashboards/topobridge.json`) in a ConfigMap, for the Grafana "
        "chart's dashboard sidecar to load.",
        {
            "enabled": _bool("Create the ConfigMap."),
            "label": _str(
                "The label key the sidecar selects ConfigMaps by (its `sidecar.dashboards.label`).",
                minLength=1,
            ),
            "labelValue": _str("That label's value (its `sidecar.dashboards.labelValue`)."),
            "folderAnnotation": _str(
                "The annotation the sidecar reads a Grafana folder from (its "
                "`sidecar.dashboards.folderAnnotation`).",
                minLength=1,
            ),
            "folder": _str("The Grafana folder; empty: no annotation (the sidecar's default folder)."),
            "namespace": _str(
                "The ConfigMap's namespace; empty: the release's (the sidecar watches Grafana's own "
                "namespace unless its `searchNamespace` names others)."
            ),
        },
    )


def _severity() -> Schema:
    return _str("The alert's `severity` label (what Alertmanager routes by).", minLength=1)


def _rule_values() -> Schema:
    """The PrometheusRule and, per alert, its threshold, its `for` and its severity."""
    minutes = "Minutes the condition must hold before the alert fires."
    return _obj(
        "A PrometheusRule with topobridge's alerts (needs the Prometheus Operator's "
        "monitoring.coreos.com/v1). Alerts on parts switched off by `args` are left out.",
        {
            "enabled": _bool("Create the PrometheusRule."),
            "labels": _string_map("Labels the Prometheus selects rules by (its `ruleSelector`)."),
            "selector": _str(
                'PromQL label matchers picking this release\'s series (e.g. `job="topobridge"`); '
                'empty: `namespace="<release namespace>"`, as the Prometheus Operator labels targets.'
            ),
            "gangPending": _obj(
                "TopobridgeGangPending: a gang has waited too long to be placed.",
                {
                    "minutes": _int("Minutes the oldest pending gang may wait.", minimum=1),
                    "severity": _severity(),
                },
            ),
            "schedulingErrors": _obj(
                "TopobridgeSchedulingErrors: scheduling attempts end in `Error`.",
                {"minutes": _int(minutes, minimum=1), "severity": _severity()},
            ),
            "webhookDenialSpike": _obj(
                "TopobridgeWebhookDenialSpike: a kind's denials over 10 minutes well above its "
                "rate in the hour before.",
                {
                    "factor": _number(
                        "How many times the hour's rate counts as a spike.", exclusiveMinimum=1
                    ),
                    "minPerSecond": _number(
                        "Denials per second below which nothing is a spike.", exclusiveMinimum=0
                    ),
                    "minutes": _int(minutes, minimum=0),
                    "severity": _severity(),
                },
            ),
            "gangRolledBack": _obj(
                "TopobridgeGangRolledBack: a gang's partial binding was rolled back.",
                {
                    "minutes": _int("Minutes the alert stays after the last rollback.", minimum=1),
                    "severity": _severity(),
                },
            ),
            "noLeader": _obj(
                "TopobridgeNoLeader: no replica holds the controller lease (left out without "
                "leader election).",
                {"minutes": _int(minutes, minimum=1), "severity": _severity()},
            ),
            "schedulerErrors": _obj(
                "TopobridgeSchedulerErrors: failures inside the fallback scheduler of any kind "
                "(`topobridge_scheduler_errors_total`: a gang's attempt, the cycle's view, the cycle).",
                {
                    "minutes": _int("Minutes of errors the alert looks back over.", minimum=1),
                    "severity": _severity(),
                },
            ),
            "webhookUnavailable": _obj(
                "TopobridgeWebhookUnavailable: no replica serves (none scraped up), or the API "
                "server fails to call the webhook (its `apiserver_admission_webhook_rejection_count` "
                "with `calling_webhook_error`, where Prometheus scrapes the API server).",
                {
                    "apiServerSelector": _str(
                        "PromQL label matchers picking the API server's series of topobridge's "
                        "webhooks; empty: every webhook named `*.topobridge.io`."
                    ),
                    "minutes": _int(minutes, minimum=1),
                    "severity": _severity(),
                },
            ),
            "webhookSlow": _obj(
                "TopobridgeWebhookSlow: the 99th percentile of admission time, as topobridge "
                "answers and (where scraped) as the API server waits, is above `seconds` "
                "(the webhooks' timeoutSeconds is 5).",
                {
                    "seconds": _number("The p99 latency that counts as slow.", exclusiveMinimum=0),
                    "minutes": _int(minutes, minimum=1),
                    "severity": _severity(),
                },
            ),
        },
    )


def _leaves(schema: Schema, prefix: str = "") -> Iterator[tuple[str, Schema]]:
    """(dotted key, schema) of every documented value, depth first."""
    for name, sub in schema.get("properties", {}).items():
        key = f"{prefix}{name}"
        if sub.get("properties") and sub.get("additionalProperties") is False and name != "args":
            yield from _leaves(sub, key + ".")
        else:
            yield key, sub


def _default(values: Mapping[str, Any], key: str) -> Any:
    node: Any = values
    for part in key.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _type(schema: Schema) -> str:
    if "enum" in schema:
        return " \\| ".join(
            "null" if v is None else str(v).lower() if isinstance(v, bool) else str(v) for v in schema["enum"]
        )
    kind = schema.get("type", "any")
    return " \\| ".join(kind) if isinstance(kind, list) else str(kind)


def _shown(value: Any) -> str:
    import json

    if value is None:
        return "null"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def readme(schema: Schema, values: Mapping[str, Any]) -> str:
    """The chart's README: how to install it, and a table of every value."""
    rows = []
    for key, sub in _leaves(schema):
        if key == "args":
            for flag, flag_schema in sub["properties"].items():
                rows.append(
                    f"| `args.{flag}` | {_type(flag_schema)} | {_shown(_default(values, 'args')[flag])} | "
                    f"`--{flag}`: {flag_schema['description']} |"
                )
            continue
        rows.append(
            f"| `{key}` | {_type(sub)} | {_shown(_default(values, key))} | {sub.get('description', '')} |"
        )
    return (
        "<!-- Generated by `topobridge manifests` from topobridge/chart_values.py and values.yaml. "
        "Do not edit. -->\n"
        "# topobridge Helm chart\n\n"
        "Network-topology-aware gang scheduling across LeaderWorkerSet, Koordinator and Volcano: "
        "the admission webhooks, the translations and the fallback gang scheduler, in one "
        "Deployment.\n\n"
        "```sh\n"
        "helm install topobridge deploy/topobridge -n topobridge-system --create-namespace\n"
        "# on a cluster without the LWS / Volcano / Koordinator CRDs:\n"
        "helm install topobridge deploy/topobridge -n topobridge-system --create-namespace "
        "--set crds.install=true\n"
        "```\n\n"
        "See [docs/install.md](../../docs/install.md) for a walk-through (with and without "
        "Volcano) and [docs/reference.md](../../docs/reference.md) for every flag. Helm checks "
        "every value against `values.schema.json` at install: an unknown key or a value outside "
        "its allowed set is refused.\n\n"
        "## Values\n\n"
        "| key | type | default | description |\n"
        "|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )
