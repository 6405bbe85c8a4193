"""`authentication`: the option a document picks by name, as Trino and the chart need it.

The option (settings `authentication.<name>`, `trinogen.kinds.authentication.options`) names
every secret as a Vault reference; here each becomes a `SecretUse` for this cluster. Secrets a
property takes (shared secret, keystore password, OAuth client secret) are written as
`${ENV:VAR}` and carried by the cluster's env Secret; files (password.db, group.db, the
keystore) are Secrets of files that ESO fills, mounted where the chart and Trino read them.

The chart's part (chart 1.42.2 templates): `server.config.authenticationType` goes into the
coordinator's config.properties; with PASSWORD the chart writes password-authenticator.properties
(file.password-file=/etc/trino/auth/password/password.db) and mounts key `password.db` of
`auth.passwordAuthSecret` there; `auth.groupsAuthSecret` likewise gives group-provider.properties
and key `group.db` at /etc/trino/auth/group. `server.config.https` adds the HTTPS lines and port
to the coordinator. The probes stay on the HTTP port: /v1/info is public in Trino.

LDAP and JWT (trinogen.trino.auth_methods, issue 21): LDAP's password-authenticator.properties
goes into `coordinator.additionalConfigFiles`, which the chart writes instead of its file
authenticator; JWT's lines join the coordinator's config. Their bind password is a
`${ENV:VAR}`, their CA files Secrets of files (`<cluster>-trino-ldap-ca`, `-jwt-ca`) mounted on
the coordinator where the properties point.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from trinogen.model.checker import Checker
from trinogen.model.server_secrets import env_reference
from trinogen.model.types import Authentication, FileSecret, ServerSecret
from trinogen.secrets import PlaceholderError, SecretUse, settings_use
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the option modules load with the settings that name them
    from trinogen.kinds.authentication.options import AuthOption
    from trinogen.trino.auth_methods import Lines as MethodLines

FIELD = "authentication"
TLS_DIR = "/etc/trino/tls"  # the keystore Secret, on the coordinator only
KEYSTORE_FILE = "keystore.pem"
PASSWORD_FILE = "password.db"  # the key the chart mounts from auth.passwordAuthSecret
GROUP_FILE = "group.db"  # the key the chart mounts from auth.groupsAuthSecret
SHARED_SECRET = "internal-communication.shared-secret"
# Properties the option decides: a document that picks an option may not set them itself
# (allow-insecure-over-http=true would let plain HTTP in with a bare user name).
# jwk.http-client.*: how Trino fetches the JWT option's JWKS; oauth2-jwk.http-client.*: how it
# fetches the OAuth2 IdP's signing keys. A trust store of the document's, or no hostname
# check, lets whoever answers for the IdP sign the tokens.
OWNED_PREFIXES = ("http-server.authentication.", "http-server.https.", "jwk.", "oauth2-jwk.")
OWNED_KEYS = frozenset({SHARED_SECRET, "http-server.process-forwarded", "http-server.http.enabled"})


class AuthParts(NamedTuple):
    """What one picked option adds to a cluster."""

    auth: Authentication
    config: tuple[tuple[str, str], ...]  # both roles' config.properties
    coordinator: tuple[tuple[str, str], ...]  # the coordinator's only
    secrets: tuple[ServerSecret, ...]  # the placeholders behind ${ENV:...} in those lines
    file_secrets: tuple[FileSecret, ...]


def owned(key: str) -> bool:
    """True for a property the authentication option sets (a document then may not)."""
    return key in OWNED_KEYS or key.startswith(OWNED_PREFIXES)


def authentication(value: object, s: Settings, cluster_id: str | None, owner: str | None,
                   c: Checker) -> AuthParts | None:
    """The option a document picked (None: none picked, or reported)."""
    option: AuthOption | None = c.pick(value, FIELD, s.options(FIELD), FIELD)
    if option is None or cluster_id is None or owner is None:
        return None
    return _Builder(str(value), option, cluster_id, owner, c).build()


def check_owned(name: str, keys: Iterable[tuple[str, str]], c: Checker) -> None:
    """Report every property (key, field path) the picked option `name` sets itself."""
    for key, path in keys:
        if owned(key):
            c.error(path, f"{key} is set by the authentication option {name!r}; remove it "
                    "(the platform decides authentication and TLS in the settings)")


def check_private(parts: AuthParts, uses: Iterable[tuple[str, SecretUse]],
                  c: Checker) -> None:
    """Report a document placeholder (field path, use) naming one of the option's own secrets.

    The shared secret signs internal requests, which Trino trusts without a password: a document
    must not copy it (or the password file) into a property of its own, even when the platform
    keeps those secrets inside `secrets.scope`.
    """
    private = {s.use.ref for s in parts.secrets} | {
        u.ref for f in parts.file_secrets for u in f.secret_uses}
    for path, use in uses:
        if use.ref in private:
            c.error(path, f"placeholder {use.placeholder.text} names a secret of the "
                    f"authentication option {parts.auth.name!r}; documents may not use it")


class _Builder:
    def __init__(self, name: str, option: AuthOption, cluster_id: str, owner: str,
                 c: Checker) -> None:
        self.name, self.o, self.cid, self.owner, self.c = name, option, cluster_id, owner, c
        self.failed = False
        self.secrets: list[ServerSecret] = []

    def use(self, template: str) -> SecretUse | None:
        """A settings reference for this cluster, bound like a `{{ vault:... }}` placeholder."""
        try:
            return settings_use(template, self.cid, self.owner)
        except PlaceholderError as e:
            self.c.error(FIELD, f"option {self.name!r}: reference {template!r}: {e}")
            self.failed = True
            return None

    def env_line(self, key: str, template: str) -> tuple[str, str]:
        use = self.use(template)
        if use is None:
            return key, ""
        self.secrets.append(ServerSecret(FIELD, key, use))
        return key, env_reference(use)

    def file(self, secret: str, key: str, template: str | None) -> FileSecret | None:
        use = self.use(template) if template else None
        return FileSecret(secret, ((key, use),)) if use is not None else None

    def build(self) -> AuthParts | None:
        o, cid = self.o, self.cid
        config = [self.env_line(SHARED_SECRET, o.shared_secret)]
        coordinator: list[tuple[str, str]] = []
        files: list[FileSecret | None] = []
        auth = Authentication(name=self.name, type=o.type, tls=o.tls)
        if o.tls == "pod":
            assert o.keystore is not None  # the option parser requires it
            secret = f"{cid}-trino-tls"
            files.append(self.file(secret, KEYSTORE_FILE, o.keystore))
            auth = replace(auth, https_port=o.https_port, keystore_secret=secret,
                         keystore_dir=TLS_DIR, keystore_path=f"{TLS_DIR}/{KEYSTORE_FILE}")
            if o.keystore_password:
                coordinator.append(self.env_line("http-server.https.keystore.key",
                                                 o.keystore_password))
        else:
            # TLS ends at the proxy: Trino then takes X-Forwarded-Proto: https as a secure
            # request, and refuses authentication over plain HTTP by itself.
            coordinator.append(("http-server.process-forwarded", "true"))
        if "PASSWORD" in o.methods:
            # <= 63 characters: the chart truncates auth.passwordAuthSecret to 63
            auth = replace(auth, password_secret=f"{cid}-trino-passwd",
                         refresh_period=o.refresh_period)
            files.append(self.file(f"{cid}-trino-passwd", PASSWORD_FILE, o.password_file))
            if o.group_file:
                auth = replace(auth, groups_secret=f"{cid}-trino-groups")
                files.append(self.file(f"{cid}-trino-groups", GROUP_FILE, o.group_file))
        if "OAUTH2" in o.methods:
            coordinator.extend(self._oauth2())
        auth = self._more(auth, coordinator, files)
        if self.failed:
            return None
        return AuthParts(auth, tuple(config), tuple(sorted(coordinator)), tuple(self.secrets),
                         tuple(f for f in files if f is not None))

    def _more(self, auth: Authentication, coordinator: list[tuple[str, str]],
              files: list[FileSecret | None]) -> Authentication:
        """LDAP's file and JWT's lines, their secrets and CA mounts."""
        o = self.o
        if o.ldap is None and o.jwt is None:
            return auth
        # imported here: loaded with an option that uses LDAP or JWT (parsed by then), not by
        # every run
        from trinogen.trino import auth_methods as am

        fill = am.fill_for(self.cid, self.owner)
        mounts: list[tuple[str, str, str]] = []
        if o.ldap is not None:
            lines = self._lines(am.ldap_lines(o.ldap, fill), files, mounts)
            auth = replace(auth, password_authenticator=tuple(lines))
        if o.jwt is not None:
            coordinator.extend(self._lines(am.jwt_lines(o.jwt, fill), files, mounts))
        return replace(auth, mounts=tuple(mounts))

    def _lines(self, lines: MethodLines, files: list[FileSecret | None],
               mounts: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
        """Each value as the pod reads it: text, `${ENV:VAR}`, or a mounted file's path."""
        from trinogen.trino import auth_methods as am

        out = []
        for key, value in lines:
            if isinstance(value, am.SecretValue):
                out.append(self.env_line(key, value.ref))
                continue
            if isinstance(value, am.SecretFile):
                directory, _, name = value.path.rpartition("/")
                secret = f"{self.cid}-trino-{directory.rsplit('/', 1)[1]}-ca"  # ldap | jwt
                files.append(self.file(secret, name, value.ref))
                mounts.append((secret.removeprefix(f"{self.cid}-"), secret, directory))
                value = value.path
            out.append((key, value))
        return out

    def _oauth2(self) -> list[tuple[str, str]]:
        o, prefix = self.o, "http-server.authentication.oauth2."
        assert o.issuer and o.client_id and o.client_secret  # the option parser requires them
        lines = [(f"{prefix}issuer", o.issuer),
                 (f"{prefix}client-id", o.client_id.format(cluster=self.cid, owner=self.owner)),
                 self.env_line(f"{prefix}client-secret", o.client_secret)]
        if o.principal_field:
            lines.append((f"{prefix}principal-field", o.principal_field))
        if o.scopes:
            lines.append((f"{prefix}scopes", ",".join(o.scopes)))
        return lines
