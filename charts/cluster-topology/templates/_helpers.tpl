{{/* Names, labels and the namespace sets every template shares. */}}

{{- define "cluster-topology.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object name: <release>-<chart>, or the release name when it already contains the chart name. At most 55 characters, so "<fullname>-metrics" is still a valid Service name (63). */}}
{{- define "cluster-topology.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 55 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "cluster-topology.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cluster-topology.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cluster-topology.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "cluster-topology.labels" -}}
helm.sh/chart: {{ include "cluster-topology.chart" . }}
app.kubernetes.io/name: {{ include "cluster-topology.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cluster-topology
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "cluster-topology.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "cluster-topology.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: name the existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "cluster-topology.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "cluster-topology.leaseName" -}}
{{- default (include "cluster-topology.fullname" .) .Values.operator.leaderElection.leaseName -}}
{{- end -}}

{{/*
Namespaces whose ClusterTopology objects the operator serves, as a JSON list (empty when
clusterWide). Contradictions the schema cannot express are refused here with a message.
*/}}
{{- define "cluster-topology.topologyNamespaces" -}}
{{- $s := .Values.scope -}}
{{- if $s.clusterWide -}}
{{- if $s.namespaces -}}
{{- fail "scope.namespaces must be empty when scope.clusterWide is true (cluster-wide already serves every namespace)" -}}
{{- end -}}
{{- list | toJson -}}
{{- else if $s.namespaces -}}
{{- $s.namespaces | uniq | toJson -}}
{{- else -}}
{{- list .Release.Namespace | toJson -}}
{{- end -}}
{{- end -}}

{{/* Namespaces where the operator may list/watch pods through a Role (empty when clusterWide). */}}
{{- define "cluster-topology.podNamespaces" -}}
{{- $s := .Values.scope -}}
{{- if $s.clusterWide -}}
{{- list | toJson -}}
{{- else -}}
{{- if has "*" $s.allowTargetNamespaces -}}
{{- fail "scope.allowTargetNamespaces: \"*\" (any namespace) needs scope.clusterWide=true, since reading pods everywhere needs a ClusterRoleBinding; list the namespaces instead" -}}
{{- end -}}
{{- $topo := include "cluster-topology.topologyNamespaces" . | fromJsonArray -}}
{{- concat $topo $s.allowTargetNamespaces | uniq | toJson -}}
{{- end -}}
{{- end -}}

{{/* The operator's rules where it serves ClusterTopology objects, and where it reads pods. */}}
{{- define "cluster-topology.topologyRules" -}}
- apiGroups: [cluster.netzlive.io]
  resources: [clustertopologies]
  verbs: [get, list, watch]
- apiGroups: [cluster.netzlive.io]
  resources: [clustertopologies/status]
  verbs: [patch]
# The members' reports (ClusterTopologyMember), aggregated into status.mesh.
- apiGroups: [cluster.netzlive.io]
  resources: [clustertopologymembers]
  verbs: [list, watch]
- apiGroups: [""]
  resources: [events]
  verbs: [create]
# Each topology's liveness Lease (clustertopology.<name>, docs/status-protocol.md): created once,
# then renewed by merge patch. Their names follow the topologies', so resourceNames cannot list them.
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create, patch]
{{- end -}}
{{- define "cluster-topology.podRules" -}}
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch]
{{- end -}}
