"""The `authentication` kind: how a cluster's users sign in, and where HTTPS ends (issue 21).

Moving into its home one layer at a time, every output byte-identical: `options` reads the
platform's `authentication:` entries (the LDAP and JWT fields through
`trinogen.trino.auth_methods`). The document's pick is still read by `trinogen.model.auth` (in
`model/document.py`, after `files` and before `accessControl`) and its chart values are still
the `auth` variable of templates/values.yaml.j2: they move once `Part` carries Secrets, files of
Secrets and mounts (docs/development.md, "Option kinds"). See `trinogen.kinds`.
"""
