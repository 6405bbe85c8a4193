"""The kitchen sink: one cluster document and one settings file using every platform option of
issues 13 and 14 at once (authentication with TLS in the pod, access rules, a storage option on a
catalog, fault tolerance, files, a shared catalog from the library, placement per role,
disruption, a service account, monitoring with a ServiceMonitor, an ingress), and of issue 21
(the client spooling protocol; the platform hatches: an image mirror, a runtime option, a
network policy, a LoadBalancer service; an HTTP event listener with a Vault header and a Kafka
one logging splits, so workers have a listener too; a resource-group policy; LDAP and JWT
sign-in at once, with the CA files of both servers).

Shared by tests/test_features_together.py (through the real chart) and
tests/test_features_secrets.py (a real sync against OpenBao). Every Vault reference is listed in
`VAULT`, so a test can put distinctive values there and scan for them.
"""

from __future__ import annotations

import copy
from typing import Any

CID = "sink"
OWNER = "data_platform"

# Settings file text: the demo's layers plus one option of every kind. The Vault paths of the
# options lie outside secrets.scope (secret/trino/{cluster}), as README recommends.
SETTINGS = """\
argocd:
  repo_url: https://git.example.com/platform/trino-gitops.git
output:
  root_app: argocd/trino-clusters.yaml
monitoring:
  exporter_image: mirror.example.com/jmx-exporter
  exporter_tag: 1.4.0
  service_monitor_labels: {release: kube-prom}
defaults:
  trinoVersion: "476"
  clusterConfig:
    coordinator:
      jvm: {maxHeapSize: "6G"}
      resources: {requests: {cpu: "1", memory: "6Gi"}, limits: {cpu: "2", memory: "8Gi"}}
    worker:
      replicas: 2
      jvm: {maxHeapSize: "6G"}
      resources: {requests: {cpu: "1", memory: "6Gi"}, limits: {cpu: "2", memory: "8Gi"}}
  properties:
    query: {max-memory-per-node: "2GB"}
    node: {environment: production}
storage:
  lake-minio:
    type: s3
    region: us-east-1
    endpoint: http://minio.data:9000
    path_style_access: true
    credentials:
      vault: {access_key: "secret/platform/{cluster}/s3#access_key",
              secret_key: "secret/platform/{cluster}/s3#secret_key"}
    spooling:
      location: s3://trino-spool/{cluster}
      shared_secret_key: secret/platform/{cluster}/spooling#key
exchange:
  spool:
    storage: lake-minio
    location: s3://trino-exchange/{cluster}
authentication:
  corp-ldap-jwt:
    type: [LDAP, JWT]
    tls: pod
    shared_secret: secret/platform/{cluster}/auth#shared-secret
    keystore: secret/platform/{cluster}/tls#keystore.pem
    keystore_password: secret/platform/{cluster}/tls#password
    ldap:
      url: ldaps://ldap.corp.example:636
      truststore: secret/platform/ldap#ca.pem
      bind_dn: cn=trino,ou=services,dc=corp,dc=example
      bind_password: secret/platform/ldap#bind-password
      user_base_dn: ou=people,dc=corp,dc=example
      group_auth_pattern: (&(uid=${USER})(memberOf=cn=trino-{cluster},ou=groups,dc=corp,dc=example))
    jwt:
      jwks_url: https://idp.corp.example/.well-known/jwks.json
      jwks_ca: secret/platform/idp#ca.pem
      required_issuer: https://idp.corp.example
      required_audience: trino-{cluster}
service_accounts:
  aws-lake:
    annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::123456789012:role/trino-{cluster}"}
ingress:
  public:
    host: "{cluster}.trino.example.com"
    class_name: nginx
    tls_secret: "{cluster}-ingress-tls"
    annotations: {nginx.ingress.kubernetes.io/backend-protocol: HTTPS}
placement:
  spot-workers:
    nodeSelector: {node.kubernetes.io/lifecycle: spot}
    tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]
    topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
  steady:
    affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [
      {matchExpressions: [{key: pool, operator: In, values: [steady]}]}]}}}
    priorityClassName: trino-coordinator
disruption:
  strict: {worker_max_unavailable: "25%", coordinator_max_unavailable: 0}
images:
  mirror:
    repository: registry.example.com/mirror/trino
    pull_secrets: [registry-credentials]
runtime:
  otel:
    env: {OTEL_SERVICE_NAME: "trino-{cluster}"}
    jvm: ["-XX:+UseStringDeduplication"]
network_policies:
  standard:
    clients: [bi-tools]
    ingress_controller: ingress-nginx
    monitoring: monitoring
event_listeners:
  audit:
    type: http
    uri: "https://audit.example.com/trino/{cluster}"
    headers:
      Authorization: {vault: "secret/platform/{cluster}/audit#token", prefix: "Bearer "}
      X-Trino-Owner: "{owner}"
    events: [created, completed]
  splits:
    type: kafka
    brokers: ["kafka-0.kafka:9092", "kafka-1.kafka:9092"]
    topics: {completed: "trino.{cluster}.completed", split: "trino.{cluster}.split"}
    client_id: "trino-{cluster}"
    exit_on_startup_failure: false
resource_groups:
  shared:
    rootGroups:
      - {name: adhoc, softMemoryLimit: 60%, hardConcurrencyLimit: 10, maxQueued: 100,
         subGroups: [{name: "${USER}", hardConcurrencyLimit: 2, maxQueued: 10}]}
      - {name: etl, softMemoryLimit: 40%, hardConcurrencyLimit: 5, maxQueued: 50}
    selectors:
      - {source: ".*airflow.*", group: etl}
      - {group: "adhoc.${USER}"}
services:
  internal-lb:
    type: LoadBalancer
    annotations: {service.beta.kubernetes.io/aws-load-balancer-scheme: internal}
"""

# The spooling protocol's shared secret key: a test's value for it must be what Trino (and
# trinogen, when it reads Vault) accepts, 32 bytes in base64.
SPOOLING_KEY_TAG = "spooling-key"
# Every Vault secret the kitchen sink reads: KV v2 path under secret/ -> {key: tag}. A test
# turns each tag into a distinctive value.
VAULT: dict[str, dict[str, str]] = {
    f"platform/{CID}/s3": {"access_key": "s3-access", "secret_key": "s3-secret"},
    f"platform/{CID}/auth": {"shared-secret": "shared-secret"},
    "platform/ldap": {"ca.pem": "ldap-ca", "bind-password": "ldap-bind-password"},
    "platform/idp": {"ca.pem": "jwks-ca"},
    f"platform/{CID}/audit": {"token": "audit-token"},
    f"platform/{CID}/tls": {"keystore.pem": "keystore", "password": "keystore-password"},
    f"trino/{CID}": {"WAREHOUSE_PASSWORD": "warehouse", "WEB_UI_SECRET": "web-ui-secret"},
    f"trino/{CID}/kerberos": {"keytab": "keytab"},
    f"platform/{CID}/spooling": {"key": SPOOLING_KEY_TAG},
}

# The shared catalog: a warehouse database whose password each using cluster reads with its own
# scope (secret/trino/<cluster>).
WAREHOUSE = {
    "_id": "catalog-warehouse", "name": "warehouse", "owner": OWNER, "shareWith": ["*"],
    "properties": {"connector.name": "postgresql",
                   "connection-url": "jdbc:postgresql://warehouse.data:5432/dw",
                   "connection-user": "trino",
                   "connection-password": "{{ WAREHOUSE_PASSWORD }}"},
}

_DOCUMENT: dict[str, Any] = {
    "_id": "kitchen-sink", "clusterId": CID, "owner": OWNER, "enabled": True,
    "authentication": "corp-ldap-jwt",
    "eventListeners": ["audit", "splits"],
    "resourceGroups": "shared",
    "serviceAccount": "aws-lake",
    "ingress": "public",
    "disruption": "strict",
    "image": "mirror",
    "runtime": "otel",
    "networkPolicy": "standard",
    "service": "internal-lb",
    "monitoring": {"jmx": True, "serviceMonitor": True},
    "faultTolerance": {"retryPolicy": "TASK", "exchange": "spool"},
    "spooling": {"storage": "lake-minio", "inlining": {"maxRows": 1000}},
    "accessControl": {"rules": {
        "catalogs": [{"user": "admin", "allow": "all"}, {"catalog": "lake", "allow": "read-only"},
                     {"catalog": "system", "allow": "read-only"}],
        "system_information": [{"user": "admin", "allow": ["read", "write"]}]}},
    "clusterConfig": {
        "coordinator": {"placement": "steady",
                        "properties": {"web-ui.shared-secret": "{{ WEB_UI_SECRET }}"}},
        "worker": {"placement": "spot-workers",
                   "gracefulShutdown": {"enabled": True, "gracePeriodSeconds": 60}}},
    "files": [
        {"name": "core-site.xml", "content": "<configuration/>\n"},
        {"name": "trino.keytab", "secret": f"{{{{ vault:secret/trino/{CID}/kerberos#keytab }}}}",
         "encoding": "base64"}],
    "connectors": [
        {"name": "lake", "storage": "lake-minio", "properties": {
            "connector.name": "hive", "hive.metastore.uri": "thrift://hive-metastore.data:9083",
            "hive.metastore.authentication.type": "KERBEROS",
            "hive.metastore.service.principal": "hive/_HOST@EXAMPLE.COM",
            "hive.metastore.client.principal": "trino@EXAMPLE.COM",
            "hive.metastore.client.keytab": "/etc/trino/secret-files/trino.keytab"}},
        {"name": "dw", "shared": "warehouse"}],
}


def document() -> dict[str, Any]:
    """A fresh copy of the kitchen-sink document."""
    return copy.deepcopy(_DOCUMENT)


def catalogs() -> list[dict[str, Any]]:
    """The catalog library the document uses."""
    return [copy.deepcopy(WAREHOUSE)]
