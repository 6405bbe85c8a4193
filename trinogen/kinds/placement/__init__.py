"""The `placement` kind: where a role's pods may run (issue 14, item 2).

`options` reads the platform's `placement:` entries; each role picks its own
(`clusterConfig.<role>.placement: "<name>"`, read by `model/operation.py` with
`model.kinds.option_of`, which checks what the chart can do for that role); `document` makes the
two picks the cluster's value, `values` writes the pod-spec keys into each role's section of
values.yaml through templates/values/placement.yaml.j2. See `trinogen.kinds`.
"""
