"""The `resource_groups` kind: how a cluster's coordinator queues and admits queries (issue 21,
item 1).

`options` reads the platform's `resource_groups:` entries (each a Trino resource-groups.json),
`document` fills the one a document picks (`resourceGroups: "<name>"`) or the document's own
groups (`resourceGroups: {rootGroups, selectors, ...}`), both checked by
`trinogen.model.resource_groups`; `values` writes the chart's `resourceGroups:` section through
templates/values/resource_groups.yaml.j2. A tenant or profile that requires the kind requires a
platform policy: a document's own groups do not count (`trinogen.kinds.OWN_VALUE`). See
`trinogen.kinds`.
"""
