"""The chart values of the `authentication` kind (templates/values/authentication.yaml.j2):
the server's authentication type and HTTPS, the coordinator's secretMounts, the chart's
`auth:` password files, and LDAP's password-authenticator.properties.

Pure: the cluster's `Authentication` in, plain values for the template out (the render layer).
"""

from __future__ import annotations

from typing import Any

from trinogen.model import Authentication
from trinogen.render.escape import prop_key, prop_value
from trinogen.settings import Settings


def values(part: Authentication, s: Settings) -> dict[str, Any]:
    """The template variable `authentication`: `type` (server.config.authenticationType),
    `https` (server.config.https, None without TLS on the pod), `secret_mounts` (the
    coordinator's: its keystore, then the option's CA files) and `auth` (the chart's `auth:`
    keys, None without a password file)."""
    https = ({"port": part.https_port, "keystore": part.keystore_path}
             if part.keystore_path else None)
    mounts = [{"name": "trino-tls", "secretName": part.keystore_secret, "path": part.keystore_dir}
              ] if part.keystore_secret else []
    mounts += [{"name": name, "secretName": secret, "path": path}
               for name, secret, path in part.mounts]
    return {"type": part.type, "https": https, "secret_mounts": mounts, "auth": _auth(part)}


def _auth(part: Authentication) -> dict[str, str] | None:
    if not part.password_secret:
        return None
    keys = {"passwordAuthSecret": part.password_secret, "groupsAuthSecret": part.groups_secret,
            "refreshPeriod": part.refresh_period}
    return {key: value for key, value in keys.items() if value}


def files(part: Authentication) -> tuple[tuple[str, str], ...]:
    """(name, text as Trino reads it) of the coordinator files the option adds: LDAP's
    password-authenticator.properties (the chart writes its file authenticator unless this
    file is given), or none."""
    if not part.password_authenticator:
        return ()
    text = "".join(f"{prop_key(k)}={prop_value(v)}\n" for k, v in part.password_authenticator)
    return (("password-authenticator.properties", text),)
