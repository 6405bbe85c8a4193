"""The `ingress` kind: how a cluster's coordinator is exposed (issue 14, item 6).

`options` reads the platform's `ingress:` entries, `document` fills the one a document picks
(`ingress: "<name>"`) for its cluster, `values` writes the chart's `ingress:` section through
templates/values/ingress.yaml.j2. See `trinogen.kinds`.
"""
