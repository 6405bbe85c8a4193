"""The `disruption` kind: how voluntary disruptions may touch a cluster (issue 14, item 3).

`options` reads the platform's `disruption:` entries, `document` takes the one a document picks
(`disruption: "<name>"`), `values` writes the coordinator Deployment's strategy through
templates/values/disruption.yaml.j2 (for every cluster: a `RollingUpdate` one when none is
picked) and a PodDisruptionBudget per role under `manifests/` (`manifests`). See
`trinogen.kinds`.
"""
