"""The `service_accounts` kind: the workload identity a cluster runs as (issue 13, item 4).

`options` reads the platform's `service_accounts:` entries, `document` fills the one a document
picks (`serviceAccount: "<name>"`) for its cluster, `values` writes the chart's
`serviceAccount:` section through templates/values/service_accounts.yaml.j2. The profile's pod
labels go on both roles' pods with trinogen's own (render/workload.py). See `trinogen.kinds`.
"""
