"""The `opa` kind: an Open Policy Agent endpoint that authorizes a cluster's queries (issue 13,
item 3).

`options` reads the platform's `opa:` entries; a document picks one inside its access control
(`accessControl: {opa: "<name>"}`, instead of its own rules: `model/access.py` reads that field
and hands the name to `model.kinds.pick_one`); `document` makes it the coordinator's
access-control.properties, `values` writes them as the chart's `accessControl` through
templates/values/opa.yaml.j2. See `trinogen.kinds`.
"""
