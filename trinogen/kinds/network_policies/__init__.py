"""The `network_policies` kind: who may reach a cluster's pods (issue 21, item 6, a platform
hatch).

`options` reads the platform's `network_policies:` entries (client namespaces and CIDRs, the
ingress controller, Prometheus), `document` fills the one a document or profile picks
(`networkPolicy: "<name>"`) with what the cluster's other picks need (an Ingress, the exporter,
TLS in the pod), `values` gives the chart's `networkPolicy` (templates/values/network_policies
.yaml.j2) and trinogen's coordinator-only client policy (manifests/, written by the renderer).
See `trinogen.kinds`.
"""
