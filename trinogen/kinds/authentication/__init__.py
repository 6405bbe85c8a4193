"""The `authentication` kind: how a cluster's users sign in, and where HTTPS ends (issue 21).

Moving into its home one layer at a time, every output byte-identical: `options` reads the
platform's `authentication:` entries (the LDAP and JWT fields through
`trinogen.trino.auth_methods`); `document` reads a document's pick (`authentication(...)`, its
`AuthParts`) and what the picked option owns, called by `model/document.py` after `files` and
before `accessControl` (where its problems were always reported) and imported only for a
document that picks one. It is not in `HOMED` yet: its `AuthParts` is not a `Part`, and its
chart values are still the `auth` variable of templates/values.yaml.j2 (with LDAP's
password-authenticator.properties from `render/kinds.py`); they move once `Part` carries
Secrets, files of Secrets and mounts (docs/development.md, "Option kinds"). See `trinogen.kinds`.
"""
