{{/* The chart's name, and the release's full name (at most 63). */}}
{{- define "gco-console.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gco-console.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "gco-console.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "gco-console.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "gco-console.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gco-console.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "gco-console.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "gco-console.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "gco-console.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gco-console.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: name the ServiceAccount to use when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository@digest, else repository:tag. */}}
{{- define "gco-console.image" -}}
{{- $repository := required "image.repository is required: the registry repository scripts/image.sh's image was pushed to" .Values.image.repository }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (required "image.tag or image.digest is required" .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The ALB's name: at most 32 letters, digits and hyphens. */}}
{{- define "gco-console.albName" -}}
{{- default (include "gco-console.fullname" .) .Values.ingress.loadBalancerName | trunc 32 | trimSuffix "-" }}
{{- end }}

{{- define "gco-console.groupName" -}}
{{- default (include "gco-console.fullname" .) .Values.ingress.group.name }}
{{- end }}

{{/* --alb-arn: given, else any ALB of the chart's ALB name in the account
and region (the controller makes the ALB, so its id is not known). */}}
{{- define "gco-console.albArn" -}}
{{- if .Values.console.albArn }}
{{- .Values.console.albArn }}
{{- else }}
{{- $region := required "aws.region is required (the ALB's region)" .Values.aws.region }}
{{- $account := required "aws.accountId is required (the ALB's account: its ARN names it)" .Values.aws.accountId }}
{{- $partition := ternary "aws-cn" (ternary "aws-us-gov" "aws" (hasPrefix "us-gov-" $region)) (hasPrefix "cn-" $region) }}
{{- printf "arn:%s:elasticloadbalancing:%s:%s:loadbalancer/app/%s/*" $partition $region (toString $account) (include "gco-console.albName" .) }}
{{- end }}
{{- end }}

{{/* --roles: the roles file's TOML (JSON strings are TOML basic strings). */}}
{{- define "gco-console.rolesToml" -}}
default = {{ .Values.console.roles.default | toJson }}

[groups]
{{- range $group, $role := .Values.console.roles.groups }}
{{ $group | toJson }} = {{ $role | toJson }}
{{- end }}
{{- end }}

{{/* The OIDC client's Secret, for the controller's auth-idp-oidc. */}}
{{- define "gco-console.oidcSecretName" -}}
{{- default (printf "%s-oidc" (include "gco-console.fullname" .)) .Values.ingress.oidc.existingSecret }}
{{- end }}

{{/* Files the flags read: "<flag> <volume kind> <name> <key>" per line. */}}
{{- define "gco-console.files" -}}
{{- $c := .Values.console }}
{{- range $entry := list (list "auth-token-file" "GCO_AUTH_TOKEN_FILE" "secret" $c.authTokenFile) (list "tokens-file" "GCO_TOKENS_FILE" "secret" $c.tokensFile) (list "oidc-client-secret-file" "GCO_OIDC_CLIENT_SECRET_FILE" "secret" $c.oidc.clientSecretFile) (list "session-key-file" "GCO_SESSION_KEY_FILE" "secret" $c.oidc.sessionKeyFile) (list "roles-file" "GCO_ROLES_FILE" "configMap" $c.rolesFile) (list "monitor-settings" "GCO_MONITOR_SETTINGS" "configMap" $c.monitorSettings) }}
{{- $source := index $entry 3 }}
{{- $name := ternary $source.secret $source.configMap (eq (index $entry 2) "secret") }}
{{- if $name }}
{{ index $entry 0 }} {{ index $entry 1 }} {{ index $entry 2 }} {{ $name }} {{ required (printf "console: the %s source needs its key" (index $entry 0)) $source.key }}
{{- end }}
{{- end }}
{{- end }}
