{{/* Names, labels and the decisions several templates share. */}}

{{- define "topobridge.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "topobridge.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "topobridge.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "topobridge.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "topobridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "topobridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "topobridge.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "topobridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "topobridge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "topobridge.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "topobridge.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* "true" when the admission webhook runs (and so needs a certificate and configurations). */}}
{{- define "topobridge.webhookEnabled" -}}
{{- if not (index .Values.args "no-webhook") -}}true{{- end -}}
{{- end -}}

{{/* "true" when cert-manager provides the serving certificate and injects the CA bundle. */}}
{{- define "topobridge.certManager" -}}
{{- $mode := toString .Values.webhook.certManager.enabled -}}
{{- if eq $mode "auto" -}}
{{- if .Capabilities.APIVersions.Has "cert-manager.io/v1" -}}true{{- end -}}
{{- else if eq $mode "true" -}}true
{{- else if ne $mode "false" -}}
{{- fail (printf "webhook.certManager.enabled: Unsupported value: %q: supported values: \"auto\", \"true\", \"false\"" $mode) -}}
{{- end -}}
{{- end -}}

{{- define "topobridge.tlsSecretName" -}}
{{- printf "%s-tls" (include "topobridge.fullname" .) -}}
{{- end -}}

{{- define "topobridge.certificateName" -}}
{{- printf "%s-serving-cert" (include "topobridge.fullname" .) -}}
{{- end -}}

{{- define "topobridge.serviceName" -}}
{{- include "topobridge.fullname" . -}}
{{- end -}}

{{/* The DNS names the API server uses to reach the webhook Service. */}}
{{- define "topobridge.serviceDNSNames" -}}
{{- $svc := include "topobridge.serviceName" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson -}}
{{- end -}}

{{/*
The container's arguments: global flags, `run`, then one flag per key of .Values.args
(sorted by name). Empty chart defaults are filled in here.
*/}}
{{- define "topobridge.args" -}}
{{- $args := deepCopy .Values.args -}}
{{- if and (gt (int .Values.replicaCount) 1) (index $args "no-leader-elect") -}}
{{- fail "args.no-leader-elect: Invalid value: true: more than one replica needs leader election (set replicaCount: 1)" -}}
{{- end -}}
{{- if and (index $args "no-controller") (index $args "no-webhook") -}}
{{- fail "args: no-controller and no-webhook together leave nothing to run" -}}
{{- end -}}
{{- if not (index $args "lease-namespace") -}}{{- $_ := set $args "lease-namespace" .Release.Namespace -}}{{- end -}}
{{- if not (index $args "identity") -}}{{- $_ := set $args "identity" "$(POD_NAME)" -}}{{- end -}}
{{- if include "topobridge.webhookEnabled" . -}}
{{- if not (index $args "tls-cert-file") -}}{{- $_ := set $args "tls-cert-file" "/etc/topobridge/tls/tls.crt" -}}{{- end -}}
{{- if not (index $args "tls-key-file") -}}{{- $_ := set $args "tls-key-file" "/etc/topobridge/tls/tls.key" -}}{{- end -}}
{{- end -}}
- --log-level={{ .Values.logLevel }}
- --log-format={{ .Values.logFormat }}
- run
{{- range $flag, $value := $args }}
{{- if kindIs "bool" $value }}
{{- if $value }}
- --{{ $flag }}
{{- end }}
{{- else if kindIs "slice" $value }}
{{- range $value }}
- {{ printf "--%s=%v" $flag . | quote }}
{{- end }}
{{- else if and (not (kindIs "invalid" $value)) (ne (toString $value) "") }}
- {{ printf "--%s=%v" $flag $value | quote }}
{{- end }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* Ports and grace as topobridge will use them: the value, else topobridge's own default. */}}
{{- define "topobridge.metricsPort" -}}
{{- index .Values.args "metrics-port" | default 9090 -}}
{{- end -}}

{{- define "topobridge.webhookPort" -}}
{{- index .Values.args "webhook-port" | default 9443 -}}
{{- end -}}

{{- define "topobridge.grace" -}}
{{- index .Values.args "grace" | default 30 -}}
{{- end -}}
