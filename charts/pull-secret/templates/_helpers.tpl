{{/*
Object names are fixed (pullsecret-adapter, ...), as in the Kustomize overlays of deploy/: several of
the objects are cluster-scoped, so one release per cluster.
*/}}

{{/* Helm's own labels; the equivalence test with deploy/ ignores exactly these. */}}
{{- define "pull-secret.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/* Labels of the adapter's namespaced objects (deploy/base). */}}
{{- define "pull-secret.labels" -}}
app: pullsecret-adapter
app.kubernetes.io/part-of: hyperfleet
app.kubernetes.io/component: pullsecret-adapter
{{ include "pull-secret.helmLabels" . }}
{{- end }}

{{/* Labels of the Jobs' objects (deploy/overlays/job). */}}
{{- define "pull-secret.jobLabels" -}}
app: pullsecret-job
app.kubernetes.io/part-of: hyperfleet
{{ include "pull-secret.helmLabels" . }}
{{- end }}

{{/*
Labels of the optional parts (admission policies, shares, KEDA): the overlays label them
part-of=hyperfleet in Job execution only (the job overlay's labels reach its components), and the
chart renders the same objects.
*/}}
{{- define "pull-secret.optionalLabels" -}}
app: pullsecret-adapter
{{- if eq .Values.execution.mode "job" }}
app.kubernetes.io/part-of: hyperfleet
{{- end }}
{{ include "pull-secret.helmLabels" . }}
{{- end }}

{{- define "pull-secret.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The service account usernames the admission policies match, in the release namespace. */}}
{{- define "pull-secret.adapterUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:pullsecret-adapter
{{- end }}

{{/* Annotations of a service account: the cloud identity it acts as. */}}
{{- define "pull-secret.identityAnnotations" -}}
{{- with .Values.identity.gcp.serviceAccount }}
iam.gke.io/gcp-service-account: {{ . }}
{{- end }}
{{- with .Values.identity.aws.roleArn }}
eks.amazonaws.com/role-arn: {{ . }}
{{- end }}
{{- with .Values.identity.azure.clientId }}
azure.workload.identity/client-id: {{ . | quote }}
{{- end }}
{{- end }}

{{/* The adapter configuration file (adapter.yaml, docs/configuration.md) built from the values. */}}
{{- define "pull-secret.config" -}}
{{- $v := .Values -}}
{{- $broker := dict "type" $v.broker.type -}}
{{- if eq $v.broker.type "rabbitmq" -}}
{{- $_ := set $broker "exchange" ($v.broker.rabbitmq.exchange | default $v.broker.topic) -}}
{{- end -}}
{{- $_ := set $broker "topic" $v.broker.topic -}}
{{- $_ := set $broker "subscriptionId" $v.broker.subscriptionId -}}
{{- if eq $v.broker.type "pubsub" -}}
{{- $_ := set $broker "createIfMissing" $v.broker.pubsub.createIfMissing -}}
{{- end -}}
{{- $_ := set $broker "maxInFlight" $v.broker.maxInFlight -}}
{{- $execution := dict "mode" $v.execution.mode "concurrency" $v.execution.concurrency -}}
{{- if eq $v.execution.mode "job" -}}
{{- $_ := set $execution "job" (dict "namespace" .Release.Namespace "image" (include "pull-secret.image" .) "timeoutSeconds" $v.execution.job.timeoutSeconds "waitSeconds" $v.execution.job.waitSeconds) -}}
{{- end -}}
{{- $config := dict
  "hyperfleetApi" $v.hyperfleetApi
  "broker" $broker
  "store" (dict "type" $v.store.type "settings" $v.store.settings "writesPerMinute" $v.store.writesPerMinute)
  "kubernetes" (dict "target" "api")
  "execution" $execution
  "deletion" $v.deletion
  "server" $v.server
  "logLevel" $v.logLevel
-}}
{{- if $v.shares.enabled -}}
{{- $_ := set $config "shares" (dict "enabled" true "recheckSeconds" $v.shares.recheckSeconds) -}}
{{- end -}}
{{- toYaml (mustMergeOverwrite (deepCopy $config) (deepCopy $v.extraConfig)) -}}
{{- end }}

{{/* The ConfigMap's name: a hash suffix rolls the Deployment whenever the configuration changes. */}}
{{- define "pull-secret.configName" -}}
pullsecret-adapter-config-{{ include "pull-secret.config" . | sha256sum | trunc 10 }}
{{- end }}
