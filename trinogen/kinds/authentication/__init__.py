"""The `authentication` kind: how a cluster's users sign in, and where HTTPS ends (issue 21).

Moved into its home one layer at a time, every output byte-identical: `options` reads the
platform's `authentication:` entries (the LDAP and JWT fields through
`trinogen.trino.auth_methods`); `document` reads a document's pick (`authentication(...)`, its
`AuthParts`) and what the picked option owns, called by `model/document.py` after `files` and
before `accessControl` (where its problems were always reported) and imported only for a
document that picks one; `values` gives the template variable `authentication` that
templates/values/authentication.yaml.j2 writes (and LDAP's password-authenticator.properties),
called by `render/kinds.py` for a cluster that picked an option. It is not in `HOMED`: its
`AuthParts` is not a `Part` (it adds Secrets, files of Secrets and mounts), so no pick loop picks
it (docs/development.md, "Option kinds"). See `trinogen.kinds`.
"""
