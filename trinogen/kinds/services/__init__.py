"""The `services` kind: the coordinator Service's type and the Services' annotations (issue 21,
item 6, a platform hatch).

`options` reads the platform's `services:` entries (refusing what pins one address or name for
every cluster), `document` fills the one a document or profile picks (`service: "<name>"`) and
judges it with the cluster's network policy and authentication, `values` gives the chart's
`service` through templates/values/services.yaml.j2. See `trinogen.kinds`.
"""
