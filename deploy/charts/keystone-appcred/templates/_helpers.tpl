{{- /* keystone-appcred 0.2.0, generated from the construct library by tools/release.ts: do not edit (npm run release:artifacts). */}}
{{/*
The operator's namespace: the value, or the release's namespace (helm install --namespace).
*/}}
{{- define "keystone-appcred.namespace" -}}
{{- .Values.namespace | default .Release.Namespace -}}
{{- end -}}

{{/*
A string as a YAML scalar, as the construct library's YAML writes it: plain when YAML reads it back as that same
string, double-quoted otherwise (a number, a boolean, null, an indicator first, ": " or " #" inside, a line break).
*/}}
{{- define "keystone-appcred.string" -}}
{{- $s := toString . -}}
{{- if or (eq $s "") (regexMatch "^(?i:true|false|yes|no|on|off|y|n|null|~|[-+]?(\\.[0-9]+|[0-9][0-9_]*(\\.[0-9]*)?)([eE][-+]?[0-9]+)?|0x[0-9a-f]+|0o[0-7]+|[-+]?\\.inf|\\.nan)$" $s) (regexMatch "^[-?:,\\[\\]{}#&*!|>'\"%@`\\s]|\\s$|: | #|[\\n\\t]|:$" $s) }}
{{- quote $s -}}
{{- else -}}
{{- $s -}}
{{- end -}}
{{- end -}}
