"""A throwaway OpenLDAP server for the tests: Debian's `slapd` on loopback, as the test user.

Its own directory holds everything: a `slapd.conf` (read with `slapd -f`, no cn=config), an mdb
database loaded offline with `slapadd`, and a self-signed certificate for `localhost` and
127.0.0.1 (openssl) that slapd serves LDAPS with; the test hands that certificate to the client
as the server's CA. Users sit under `ou=people`; `departmentNumber` stands for a group, so a
search filter can tell who may sign in without the memberOf overlay. A service account binds for
searches; user passwords are stored as slappasswd's {SSHA} hashes.

.ci/run installs `slapd` and `ldap-utils` when they are missing (a fresh CI machine has neither).
Run `python -m tests.ldap_server` to start one by hand and print how to reach it.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.trino_server import free_port

SLAPD = Path("/usr/sbin/slapd")
SLAPADD = Path("/usr/sbin/slapadd")
SLAPPASSWD = Path("/usr/sbin/slappasswd")
SCHEMA_DIR = Path("/etc/ldap/schema")
MODULE_DIR = Path("/usr/lib/ldap")
BASE = "dc=example,dc=org"
PEOPLE = f"ou=people,{BASE}"
SERVICE_DN = f"cn=trino-svc,{BASE}"


@dataclass(frozen=True)
class User:
    uid: str
    password: str
    group: str  # departmentNumber


USERS = (User("alice", "alice-ldap-pw-3k9", "analysts"), User("bob", "bob-ldap-pw-7q2", "sales"))
SERVICE_PASSWORD = "svc-bind-pw-5x8c"


@dataclass(frozen=True)
class LdapServer:
    """A running slapd: LDAPS on `port` (certificate `ca_file`), plain LDAP on `plain_port`."""

    port: int
    plain_port: int
    ca_file: Path
    root: Path

    @property
    def url(self) -> str:
        return f"ldaps://localhost:{self.port}"

    @property
    def plain_url(self) -> str:
        return f"ldap://127.0.0.1:{self.plain_port}"


def available() -> bool:
    """Whether slapd and its tools are installed (apt: slapd)."""
    return all(p.is_file() for p in (SLAPD, SLAPADD, SLAPPASSWD)) and (
        MODULE_DIR / "back_mdb.so").exists() and shutil.which("openssl") is not None


def _run(*cmd: str, cwd: Path, stdin: str | None = None) -> str:
    out = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise AssertionError(f"{cmd[0]} failed ({out.returncode}): {out.stderr[-2000:]}")
    return out.stdout


def certificate(root: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1 and its unencrypted key."""
    _run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", "key.pem", "-out", "cert.pem", cwd=root)
    return root / "cert.pem", root / "key.pem"


def _config(root: Path, cert: Path, key: Path) -> str:
    schemas = "".join(f"include {SCHEMA_DIR / s}.schema\n"
                      for s in ("core", "cosine", "inetorgperson", "nis"))
    return (f"{schemas}modulepath {MODULE_DIR}\nmoduleload back_mdb\n"
            f"pidfile {root / 'slapd.pid'}\nargsfile {root / 'slapd.args'}\n"
            f"TLSCertificateFile {cert}\nTLSCertificateKeyFile {key}\n"
            f"database mdb\nmaxsize 10485760\nsuffix \"{BASE}\"\n"
            f"rootdn \"cn=admin,{BASE}\"\ndirectory {root / 'data'}\n"
            # users bind with their password; the service account searches; nobody reads hashes
            "access to attrs=userPassword by anonymous auth by * none\n"
            "access to * by users read by * none\n")


def _ldif(root: Path, users: tuple[User, ...]) -> str:
    def hashed(password: str) -> str:
        return _run(str(SLAPPASSWD), "-T", "/dev/stdin", cwd=root, stdin=password).strip()

    entries = [(f"dn: {BASE}\nobjectClass: dcObject\nobjectClass: organization\n"
                "dc: example\no: Example\n"),
               f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
               (f"dn: {SERVICE_DN}\nobjectClass: person\ncn: trino-svc\nsn: svc\n"
                f"userPassword: {hashed(SERVICE_PASSWORD)}\n")]
    entries += [f"dn: uid={u.uid},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: {u.uid}\n"
                f"cn: {u.uid}\nsn: {u.uid}\ndepartmentNumber: {u.group}\n"
                f"userPassword: {hashed(u.password)}\n" for u in users]
    return "\n".join(entries)


@contextmanager
def running(root: Path, users: tuple[User, ...] = USERS,
            cert: tuple[Path, Path] | None = None) -> Iterator[LdapServer]:
    """slapd serving `users` from `root` (created), stopped and removed afterwards."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "data").mkdir()
    cert_file, key_file = cert or certificate(root)
    conf = root / "slapd.conf"
    conf.write_text(_config(root, cert_file, key_file))
    (root / "data.ldif").write_text(_ldif(root, users))
    _run(str(SLAPADD), "-f", str(conf), "-l", str(root / "data.ldif"), cwd=root)
    port, plain = free_port(), free_port()
    urls = f"ldaps://127.0.0.1:{port}/ ldap://127.0.0.1:{plain}/"
    log = (root / "slapd.log").open("w")
    # -d keeps slapd in the foreground, so the process is ours to stop.
    proc = subprocess.Popen([str(SLAPD), "-f", str(conf), "-h", urls, "-d", "0"], cwd=root,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait(proc, port, root)
        yield LdapServer(port, plain, cert_file, root)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait(proc: subprocess.Popen[bytes], port: int, root: Path) -> None:
    import socket

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"slapd exited: {(root / 'slapd.log').read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("slapd did not listen within 20 s")


def search(server: LdapServer, bind_dn: str, password: str,
           filter_: str = "(objectClass=*)") -> Mapping[str, str]:
    """ldapsearch over LDAPS (ldap-utils), trusting only the server's certificate: dn -> text."""
    env = {"LDAPTLS_CACERT": str(server.ca_file), "LDAPTLS_REQCERT": "demand",
           "PATH": "/usr/bin:/bin"}
    # By address: libldap checks the certificate against the reverse-resolved name of a host
    # name (on some machines 127.0.0.1 is also "vm"), but against the IP SAN of an address.
    url = f"ldaps://127.0.0.1:{server.port}"
    out = subprocess.run(["ldapsearch", "-LLL", "-H", url, "-D", bind_dn, "-w", password,
                          "-b", BASE, filter_], capture_output=True, text=True, env=env,
                         check=False)
    if out.returncode != 0:
        raise AssertionError(f"ldapsearch: {out.returncode} {out.stderr.strip()}")
    blocks = [b for b in out.stdout.strip().split("\n\n") if b]
    return {b.splitlines()[0].removeprefix("dn: "): b for b in blocks}


if __name__ == "__main__":  # pragma: no cover - by hand
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, running(Path(tmp) / "ldap") as server:
        print(f"{server.url} (CA {server.ca_file}); {server.plain_url}; Ctrl-C stops it")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
