"""Argo CD's view of trinogen's Applications, read from the Kubernetes API (read-only).

`argo_view(settings)` finds the credentials the way Kubernetes clients do (`KUBECONFIG`, then
the in-cluster service account, then ~/.kube/config; docs/status.md) and returns an `ArgoView`
whose `applications()` lists the Applications labelled `app.kubernetes.io/managed-by=trinogen`
in `argocd.namespace`, a page at a time (limit/continue). Nothing is sent before that call, and
only GETs are ever sent.

The client is the standard library's http.client over ssl, not the `kubernetes` package: after
pymongo (which `status` loads anyway) it adds ~2-6 ms and 0.2 MiB, where `import kubernetes`
costs ~370-500 ms and ~35 MiB (126 MB installed); figures in docs/status.md. This module is
imported only by a command that reads Argo CD, so a sync never loads it.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from trinogen.errors import ArgoUnavailable, ConfigError
from trinogen.ports import AppView
from trinogen.settings import Settings

MANAGED_BY = "app.kubernetes.io/managed-by=trinogen"  # templates/application.yaml.j2
CLUSTER_LABEL, OWNER_LABEL = "trinogen.io/cluster", "trinogen.io/owner"
PAGE = 500  # Applications per list call
MAX_PAGE_BYTES = 64 * 1024 * 1024
MAX_TEXT = 1000  # a status message longer than this is cut (a tenant's pod writes them)
SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
_APPS = "/apis/argoproj.io/v1alpha1/namespaces/{ns}/applications"


@dataclass(frozen=True)
class KubeAccess:
    """Where the API server is and how to prove who we are (never printed: `where` is)."""

    server: str
    where: str  # "in-cluster" or "kubeconfig <path> context <name>", for messages
    token: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    ca_data: str | None = field(default=None, repr=False)
    cert_pem: bytes | None = field(default=None, repr=False)
    key_pem: bytes | None = field(default=None, repr=False)


def kube_access(environ: Mapping[str, str], context: str = "",
                sa_dir: Path = SA_DIR) -> KubeAccess | None:
    """The credentials a Kubernetes client would use here, or None when there are none.

    Order (controller-runtime's): `KUBECONFIG`, the in-cluster service account, ~/.kube/config.
    """
    paths = [p for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if paths:
        return _from_kubeconfig([Path(p).expanduser() for p in paths], context, environ)
    host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT")
    if host and port and (sa_dir / "token").is_file():
        return _in_cluster(host, port, sa_dir)
    home = Path(environ.get("HOME") or Path.home()) / ".kube" / "config"
    return _from_kubeconfig([home], context, environ) if home.is_file() else None


def _in_cluster(host: str, port: str, sa_dir: Path) -> KubeAccess:
    host = f"[{host}]" if ":" in host else host
    try:
        token = (sa_dir / "token").read_text().strip()
    except OSError as e:
        raise ArgoUnavailable(f"cannot read the service account token {sa_dir / 'token'}: "
                              f"{e.strerror}") from e
    return KubeAccess(f"https://{host}:{port}", "in-cluster", token=token,
                      ca_file=str(sa_dir / "ca.crt"))


def _read_kubeconfig(path: Path) -> dict[str, Any]:
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"kubeconfig {path} cannot be read: {e}") from e
    except yaml.YAMLError as e:  # its message quotes the line (a token?): say where, only
        mark = getattr(e, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise ConfigError(f"kubeconfig {path} is not valid YAML{at}") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"kubeconfig {path} is not a mapping")
    return doc


_KINDS = (("clusters", "cluster"), ("users", "user"), ("contexts", "context"))


def _load_kubeconfigs(paths: list[Path]) -> tuple[dict[str, Any], dict[str, Path]]:
    """The files merged as kubectl does (the first to set a name or current-context wins),
    and the file each cluster and user came from (relative paths are relative to it)."""
    merged: dict[str, Any] = {"clusters": {}, "users": {}, "contexts": {}}
    origin: dict[str, Path] = {}
    for path in (p for p in paths if p.is_file()):
        doc = _read_kubeconfig(path)
        merged["current-context"] = (merged.get("current-context")
                                     or doc.get("current-context") or None)
        for kind, key in _KINDS:
            for entry in _list(doc.get(kind)):
                if isinstance(_dict(entry).get(key), dict):
                    merged[kind].setdefault(str(entry.get("name")), entry[key])
                    origin.setdefault(f"{kind}/{entry.get('name')}", path)
    return merged, origin


def _context(merged: Mapping[str, Any], name: str | None, shown: str,
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(cluster, user) of the context `name`; ConfigError naming what is missing."""
    if not name or name not in merged["contexts"]:
        what = f"context {name!r} not found" if name else "no current-context"
        raise ConfigError(f"kubeconfig {shown}: {what}; set argocd.kube_context or the "
                          "kubeconfig's current-context")
    ctx = merged["contexts"][name]
    cluster = merged["clusters"].get(str(ctx.get("cluster")))
    user = merged["users"].get(str(ctx.get("user")))
    if not isinstance(cluster, dict) or not cluster.get("server"):
        raise ConfigError(f"kubeconfig {shown}: context {name!r} names no cluster with a server")
    return cluster, user if isinstance(user, dict) else {}


def _from_kubeconfig(paths: list[Path], context: str,
                     environ: Mapping[str, str]) -> KubeAccess:
    merged, origin = _load_kubeconfigs(paths)
    shown = os.pathsep.join(str(p) for p in paths)
    name = context or merged.get("current-context")
    cluster, user = _context(merged, name, shown)
    where = f"kubeconfig {shown} context {name}"
    if cluster.get("insecure-skip-tls-verify"):
        raise ConfigError(f"{where}: insecure-skip-tls-verify is set; trinogen always verifies "
                          "the API server's certificate: give certificate-authority(-data)")
    server = urlsplit(str(cluster["server"]))  # printed in messages: never its user:password@
    if server.scheme != "https" or "@" in server.netloc:
        raise ConfigError(f"{where}: the server is not https:// or carries user:password@; "
                          "trinogen sends credentials over verified TLS only, as the user's")
    if cluster.get("tls-server-name") or cluster.get("proxy-url"):
        raise ConfigError(f"{where}: tls-server-name and proxy-url are not supported; name the "
                          "API server by an address its certificate covers")
    ctx = merged["contexts"][name]
    base = origin.get(f"clusters/{ctx.get('cluster')}", paths[0]).parent
    ubase = origin.get(f"users/{ctx.get('user')}", paths[0]).parent
    ca_data = _b64(cluster.get("certificate-authority-data"), where, "certificate-authority-data")
    token, cert, key = _user_credentials(user, ubase, where, environ)
    return KubeAccess(str(cluster["server"]).rstrip("/"), where, token=token,
                      ca_file=_rel(cluster.get("certificate-authority"), base),
                      ca_data=ca_data.decode("ascii", "replace") if ca_data else None,
                      cert_pem=cert, key_pem=key)


def _rel(value: Any, base: Path) -> str | None:
    return str(base / Path(str(value)).expanduser()) if value else None


def _b64(value: Any, where: str, what: str) -> bytes | None:
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except ValueError as e:
        raise ConfigError(f"{where}: {what} is not base64") from e


def _read(path: str, where: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise ConfigError(f"{where}: cannot read {path}: {e.strerror}") from e


def _user_credentials(user: Mapping[str, Any], base: Path, where: str,
                      environ: Mapping[str, str]) -> tuple[str | None, bytes | None, bytes | None]:
    """(bearer token, client certificate PEM, client key PEM) of a kubeconfig user."""
    if user.get("auth-provider") or user.get("username"):
        raise ConfigError(f"{where}: the user's auth-provider or basic auth is not supported; "
                          "use a token, tokenFile, client certificate or an exec plugin")
    if user.get("exec"):
        return _exec_credential(user["exec"], base, where, environ)
    token = str(user["token"]) if user.get("token") else None
    if not token and user.get("tokenFile"):
        token = _read(str(_rel(user["tokenFile"], base)), where).decode().strip()
    return (token, _pem(user, "client-certificate", base, where),
            _pem(user, "client-key", base, where))


def _pem(user: Mapping[str, Any], key: str, base: Path, where: str) -> bytes | None:
    """`<key>-data` (base64) or the file `<key>` names, or None."""
    data = _b64(user.get(f"{key}-data"), where, f"{key}-data")
    if data is None and user.get(key):
        data = _read(str(_rel(user[key], base)), where)
    return data


def _exec_credential(spec: Mapping[str, Any], base: Path, where: str, environ: Mapping[str, str],
                     ) -> tuple[str | None, bytes | None, bytes | None]:
    """Run a client-go credential plugin (aws eks get-token, kubelogin...) for its token."""
    info = {"apiVersion": spec.get("apiVersion"), "kind": "ExecCredential",
            "spec": {"interactive": False}}  # what client-go hands a plugin: no prompt here
    env = {**environ, "KUBERNETES_EXEC_INFO": json.dumps(info),
           **{str(e.get("name")): str(e.get("value"))
              for e in _list(spec.get("env")) if isinstance(e, dict)}}
    program = str(spec.get("command"))  # `./x` is the kubeconfig's (client-go), never the cwd's
    command = [str(base / program) if "/" in program else program,
               *(str(a) for a in _list(spec.get("args")))]
    try:
        out = subprocess.run(command, env=env, capture_output=True, timeout=60, check=True,
                             stdin=subprocess.DEVNULL)
        status = _dict(json.loads(out.stdout)["status"])
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError) as e:
        raise ArgoUnavailable(f"{where}: the credential plugin {command[0]} failed "
                              f"({type(e).__name__}); run it by hand to see why") from e
    token, cert, key = (status.get(k) for k in ("token", "clientCertificateData", "clientKeyData"))
    return (str(token) if token else None, str(cert).encode() if cert else None,
            str(key).encode() if key else None)


def _tls(access: KubeAccess) -> ssl.SSLContext:
    """Verified TLS: the kubeconfig's CA (or the system's), plus a client certificate if any."""
    try:
        ctx = ssl.create_default_context(cafile=access.ca_file, cadata=access.ca_data)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"{access.where}: the API server's CA cannot be loaded: {e}") from e
    if access.cert_pem and access.key_pem:
        # ssl loads a client certificate from files only: a private file, removed at once.
        fd, path = tempfile.mkstemp(prefix="trinogen-kube-", suffix=".pem")
        try:
            os.write(fd, access.cert_pem + b"\n" + access.key_pem)
            os.close(fd)
            ctx.load_cert_chain(path)
        except ssl.SSLError as e:
            raise ConfigError(f"{access.where}: the client certificate or key is unusable") from e
        finally:
            os.unlink(path)
    return ctx


@dataclass
class KubeArgoView:
    """`ArgoView` over the Kubernetes API: one GET per page of Applications, nothing else.

    Building it reads and sends nothing; `applications()` finds the credentials (`kube_access`)
    and lists.
    """

    namespace: str
    environ: Mapping[str, str] = field(repr=False)
    context: str = ""
    page: int = PAGE
    timeout: float = 30.0
    requests: int = 0
    sa_dir: Path = SA_DIR
    _access: KubeAccess | None = field(default=None, repr=False)

    @property
    def access(self) -> KubeAccess:
        if self._access is None:
            self._access = kube_access(self.environ, self.context, self.sa_dir)
            if self._access is None:
                raise ConfigError("no Kubernetes credentials to read Argo CD with: set "
                                  "KUBECONFIG, create ~/.kube/config or run in a pod (or turn "
                                  "the reading off: --no-argocd, argocd.read_status: never)")
        return self._access

    def applications(self) -> dict[str, AppView]:
        ctx = _tls(self.access)
        url = urlsplit(self.access.server)
        path = url.path.rstrip("/") + _APPS.format(ns=quote(self.namespace, safe=""))
        apps: dict[str, AppView] = {}
        token = ""
        while True:
            query = f"?labelSelector={quote(MANAGED_BY)}&limit={self.page}"
            body = self._get(ctx, url.hostname or "", url.port or 443,
                             path + query + (f"&continue={quote(token)}" if token else ""))
            apps.update((v.name, v) for v in map(app_view, _list(body.get("items"))) if v)
            token = str(_dict(body.get("metadata")).get("continue") or "")
            if not token:
                return apps

    def _get(self, ctx: ssl.SSLContext, host: str, port: int, target: str) -> Any:
        import http.client

        self.requests += 1
        headers = {"Accept": "application/json", "User-Agent": "trinogen"}
        if self.access.token:
            headers["Authorization"] = f"Bearer {self.access.token}"
        conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=self.timeout)
        try:
            conn.request("GET", target, headers=headers)
            resp = conn.getresponse()
            raw = resp.read(MAX_PAGE_BYTES + 1)
        except (OSError, http.client.HTTPException) as e:
            raise ArgoUnavailable(f"the Kubernetes API at {self.access.server} ({self.access.where}"
                                  f") cannot be reached: {e}; check the address and the CA, or "
                                  "run status with --no-argocd") from e
        finally:
            conn.close()
        return _decode(resp.status, raw, self)


_REFUSED = {
    401: "the API server did not accept the credentials of {where} (an expired token?): renew "
         "them",
    403: "{where} may not list applications.argoproj.io in namespace {ns}: grant get and list "
         "on them (deploy/kubernetes/argocd-read/)",
    404: "the API server of {where} serves no Argo CD Applications: is Argo CD installed there, "
         "and is this the right context (argocd.kube_context)?",
    410: "the Application list changed while it was read page by page: run status again",
}


def _decode(status: int, raw: bytes, view: KubeArgoView) -> Any:
    if status != 200:
        hint = _REFUSED.get(status, "the API server answered HTTP {status} for {where}")
        raise ArgoUnavailable(hint.format(where=view.access.where, ns=view.namespace,
                                          status=status))
    if len(raw) > MAX_PAGE_BYTES:
        raise ArgoUnavailable(f"a page of Applications from {view.access.where} is larger "
                              f"than {MAX_PAGE_BYTES} bytes")
    try:
        body = json.loads(raw)
    except ValueError as e:
        raise ArgoUnavailable(f"the API server of {view.access.where} answered no JSON") from e
    if not isinstance(body, dict):
        raise ArgoUnavailable(f"the API server of {view.access.where} answered no list")
    return body


def _text(value: Any) -> str | None:
    """A string from an Application as trinogen shows it: printable, at most MAX_TEXT long;
    None for none (or an empty one)."""
    if value is None or value == "" or isinstance(value, (dict, list)):
        return None
    text = "".join(c if c.isprintable() else " " for c in str(value)[:MAX_TEXT + 1])
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 3] + "..."


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _values_revision(spec: Mapping[str, Any], sync: Mapping[str, Any]) -> str | None:
    """The revision of the `ref: values` source (trinogen's GitOps repository)."""
    sources = spec.get("sources")
    revisions = sync.get("revisions")
    if isinstance(sources, list) and isinstance(revisions, list):
        for i, source in enumerate(sources):
            if _dict(source).get("ref") == "values" and i < len(revisions):
                return _text(revisions[i])
    return _text(sync.get("revision"))


def app_view(item: Any) -> AppView | None:
    """One Application object as an `AppView` (None when it has no name)."""
    meta = _dict(_dict(item).get("metadata"))
    name = _text(meta.get("name"))
    if not name:
        return None
    labels = _dict(meta.get("labels"))
    status = _dict(item.get("status"))
    sync, health = _dict(status.get("sync")), _dict(status.get("health"))
    op = _dict(status.get("operationState"))
    return AppView(
        name=name, cluster_id=_text(labels.get(CLUSTER_LABEL)),
        owner=_text(labels.get(OWNER_LABEL)),
        sync=_text(sync.get("status")) or "Unknown",
        health=_text(health.get("status")) or "Unknown",
        message=_text(health.get("message")),
        revision=_values_revision(_dict(item.get("spec")), sync),
        operation=_text(op.get("phase")), operation_message=_text(op.get("message")),
        observed_at=_text(status.get("reconciledAt")))


def argo_view(settings: Settings, environ: Mapping[str, str] | None = None) -> KubeArgoView:
    """The view of `argocd.namespace` through `argocd.kube_context` (nothing read or sent yet)."""
    return KubeArgoView(settings.argocd.namespace, os.environ if environ is None else environ,
                        settings.argocd.kube_context)


def has_access(environ: Mapping[str, str], sa_dir: Path = SA_DIR) -> bool:
    """True when a kubeconfig or an in-cluster service account is there (no file is parsed)."""
    if any(p for p in environ.get("KUBECONFIG", "").split(os.pathsep)):
        return True
    if environ.get("KUBERNETES_SERVICE_HOST") and (sa_dir / "token").is_file():
        return True
    return (Path(environ.get("HOME") or Path.home()) / ".kube" / "config").is_file()
