"""trinogen.render.templates and the renderer's use of them: sources read once, at the edge."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, demo_settings, example_docs
from tests.test_auth import OPTIONS as AUTH_OPTIONS
from tests.test_auth_option_methods import OPTIONS as LDAP_OPTIONS
from tests.test_fault_tolerance import EXCHANGE, STORAGE
from tests.test_render import cluster_of
from trinogen.errors import ConfigError
from trinogen.render import Renderer, RenderError
from trinogen.render.templates import TEMPLATE_NAMES, Templates, bytecode_cache, load_templates
from trinogen.settings import OutputSettings, replace
from trinogen.settings.named import parse_kind

BUILTIN = ROOT / "templates"


def test_the_first_directory_with_a_name_wins(tmp_path: Path) -> None:
    """A user directory listed first shadows the built-in template of the same name only."""
    (tmp_path / "catalog.properties.j2").write_text("mine\n")
    templates = Templates([tmp_path, BUILTIN])
    mine, builtin = templates.source("catalog.properties.j2"), templates.source("values.yaml.j2")
    assert mine is not None and mine.text == "mine\n"
    assert mine.filename == str(tmp_path / "catalog.properties.j2")
    assert builtin is not None and builtin.data == (BUILTIN / "values.yaml.j2").read_bytes()


@pytest.mark.parametrize("name", ["../values.yaml.j2", "a/../../x.j2", "missing.j2"])
def test_names_outside_the_directories_are_not_found(tmp_path: Path, name: str) -> None:
    """A name that climbs out of the directories, or does not exist, has no source."""
    (tmp_path / "x.j2").write_text("x")
    assert Templates([tmp_path / "sub", BUILTIN]).source(name) is None


def test_a_missing_templates_dir_is_a_config_error(tmp_path: Path) -> None:
    """output.templates_dir that is not a directory names the setting."""
    with pytest.raises(ConfigError, match="output.templates_dir"):
        load_templates(OutputSettings(templates_dir=str(tmp_path / "nope")))


def test_identity_changes_with_any_template(tmp_path: Path) -> None:
    """The fingerprint input covers every built-in name's source."""
    before = Templates([BUILTIN]).identity()
    (tmp_path / "values.yaml.j2").write_bytes((BUILTIN / "values.yaml.j2").read_bytes() + b"#\n")
    assert Templates([tmp_path, BUILTIN]).identity() != before
    assert all(name.encode() in before for name in TEMPLATE_NAMES)


def test_a_user_template_may_include_its_own_files(tmp_path: Path) -> None:
    """Templates in the user directory can include other files from it (as Jinja's loader did)."""
    (tmp_path / "labels.j2").write_text("    team: {{ cluster.owner | yaml }}\n")
    builtin = (BUILTIN / "application.yaml.j2").read_text()
    (tmp_path / "application.yaml.j2").write_text(builtin.replace(
        "app.kubernetes.io/managed-by: trinogen\n",
        "app.kubernetes.io/managed-by: trinogen\n{% include 'labels.j2' %}", 1))
    settings = replace(demo_settings(), output={"templates_dir": str(tmp_path)})
    doc = next(d for d in example_docs() if d["clusterId"] == "adhoc-dev")
    files = Renderer(settings).render_cluster(cluster_of(doc, settings), {})
    assert "    team: growth_analytics\n" in files["trino-applications/adhoc-dev.yaml"].decode()


def test_a_kind_fragment_in_templates_dir_replaces_the_builtin_one(tmp_path: Path) -> None:
    """templates_dir/values/ingress.yaml.j2 is what the built-in values.yaml.j2 includes for a
    cluster with an ingress, and it changes the render fingerprint."""
    from tests.test_workload import doc, outcome, with_options

    (tmp_path / "values").mkdir()
    (tmp_path / "values" / "ingress.yaml.j2").write_text(
        "ingress:\n  enabled: true\n  hosts: [{host: {{ ingress.hosts[0].host | yaml }}}]\n")
    base = with_options()
    settings = replace(base, output={"templates_dir": str(tmp_path)})
    cluster = outcome(doc(ingress="public"), settings)
    values = Renderer(settings).render_cluster(cluster, {})["trino-clusters/lake/values.yaml"]
    assert b"ingress:\n  enabled: true\n  hosts: [{host: lake.trino.example.com}]\n" in values
    assert b"className" not in values
    assert Renderer(settings).fingerprint != Renderer(base).fingerprint


# The platform hatches' parts of values.yaml.j2 (issue 21, item 6), written after this test's
# "before": an override from before them has none of them.
_HATCH_INCLUDES = re.compile(r'\{% if (images|runtime and runtime\.env|network_policies|services) %\}\n'
                             r'\{% include "values/\w+\.yaml\.j2" %\}\n\{% endif %\}\n')
_HATCH_JVM = re.compile(r"\{# The image kind's pinned.*?additionalJVMConfig: .*?\{% endif %\}\n",
                        re.DOTALL)


def _without_hatches(text: str) -> str:
    text = _HATCH_INCLUDES.sub("", _HATCH_JVM.sub("", text))
    out = text.replace("(images.repository if images else chart.image_repository)",
                       "chart.image_repository")
    assert "images" not in out and "runtime" not in out, "a hatch part left in the template"
    return out


def test_a_values_template_written_before_kind_fragments_still_renders(tmp_path: Path) -> None:
    """A values.yaml.j2 override that writes serviceAccount, ingress, an OPA access control,
    authentication and the coordinator's strategy, the placements and the exchange manager
    itself, with the variable names of before issue 21 (`service_account`, `ingress`,
    `access_control` and `access_properties`, `coordinator_strategy` and
    `coordinator_deployment_annotations`, `placement`, `cluster.exchange`, `auth`),
    renders what the built-in does."""
    from tests.test_workload import doc, outcome, with_options

    builtin = _without_hatches((BUILTIN / "values.yaml.j2").read_text())
    old = builtin.replace('{% include "values/service_accounts.yaml.j2" %}\n', (
        "serviceAccount:\n  create: true\n  name: {{ service_account.name | yaml }}\n"
        "  annotations: {{ service_account.annotations | yaml }}\n")).replace(
        '{% include "values/ingress.yaml.j2" %}\n', (
            "ingress:\n  enabled: true\n{% if ingress.className %}\n"
            "  className: {{ ingress.className | yaml }}\n{% endif %}\n"
            "  annotations: {{ ingress.annotations | yaml }}\n"
            "  hosts: {{ ingress.hosts | yaml }}\n"
            "{% if ingress.tls %}\n  tls: {{ ingress.tls | yaml }}\n{% endif %}\n"))
    old = old.replace("{% if service_accounts %}", "{% if service_account %}").replace(
        '{% endif %}\n{% if opa %}\n{% include "values/opa.yaml.j2" %}\n{% endif %}\n', (
            "{% elif access_control %}\naccessControl:\n  type: properties\n"
            "  properties: {{ access_properties | yaml_text(4) }}\n{% endif %}\n"))
    old = old.replace('{% include "values/disruption.yaml.j2" %}\n', (
        "  deployment:\n    strategy: {{ coordinator_strategy | yaml }}\n"
        "{% if coordinator_deployment_annotations %}\n"
        "    annotations: {{ coordinator_deployment_annotations | yaml }}\n{% endif %}\n"))
    old = old.replace(
        '{% if placement and placement[name] %}\n{% include "values/placement.yaml.j2" %}\n'
        '{% endif %}\n', (
            "{% if placement[name] %}\n{% for key, value in placement[name] | dictsort %}\n"
            "  {{ key | yaml }}: {{ value | yaml }}\n{% endfor %}\n{% endif %}\n"))
    old = old.replace(
        '{% if exchange %}\n{% include "values/exchange.yaml.j2" %}\n{% endif %}\n', (
            "{% if cluster.exchange %}\n  exchangeManager:\n    name: filesystem\n"
            "    baseDir: {{ cluster.exchange.base_directories | list | yaml }}\n"
            "{% endif %}\n"))
    # an override written before event listeners has no worker files block (none picked here)
    old = old.replace('{% if name == "worker" and event_listeners %}\n'
                      '{% include "values/event_listeners.yaml.j2" %}\n{% endif %}\n', "")
    # written before resource groups existed: no include of theirs
    old = old.replace('{% if resource_groups %}\n{% include "values/resource_groups.yaml.j2" %}'
                      '\n{% endif %}\n', "")
    # nor of session property defaults
    old = old.replace('{% if session_defaults %}\n{% include "values/session_defaults.yaml.j2" %}'
                      '\n{% endif %}\n', "")
    old = _with_old_auth(old)
    assert "{% include" not in old and "service_accounts" not in old
    (tmp_path / "values.yaml.j2").write_text(old)
    base = with_options()
    auths = {"corp-password": AUTH_OPTIONS["corp-password"], "corp-ldap": LDAP_OPTIONS["corp-ldap"]}
    base = dataclasses.replace(base, named={
        **base.named, "authentication": parse_kind("authentication", auths, "test"),
        "opa": parse_kind("opa", {
        "central": {"policy_uri": "https://opa.example.com/v1/data/trino/allow"}}, "test"),
        "disruption": parse_kind("disruption", {"calm": {}, "rolling": {
            "coordinator_rollout": "RollingUpdate"}}, "test"),
        **{kind: parse_kind(kind, raw, "test") for kind, raw in (
            ("storage", STORAGE), ("exchange", EXCHANGE))},
        "placement": parse_kind("placement", {"spot": {
            "nodeSelector": {"pool": "spot"}, "topologySpreadConstraints": [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway"}]}}, "test")})
    mine = replace(base, output={"templates_dir": str(tmp_path)})
    path = "trino-clusters/lake/values.yaml"
    for body in ({"serviceAccount": "aws", "ingress": "public"}, {},
                 {"accessControl": {"opa": "central"}, "disruption": "calm"},
                 {"disruption": "rolling", "clusterConfig": {"worker": {"placement": "spot"}},
                  "faultTolerance": {"retryPolicy": "TASK", "exchange": "minio"}},
                 {"authentication": "corp-password"}, {"authentication": "corp-ldap"}):
        cluster = outcome(doc(**body), base)
        builtin_values = Renderer(base).render_cluster(cluster, {})[path]
        assert Renderer(mine).render_cluster(cluster, {})[path] == builtin_values
        assert (b"access-control.name=opa" in builtin_values) == ("accessControl" in body)
        assert (b"pool: spot" in builtin_values) == ("clusterConfig" in body)
        assert (b"exchangeManager" in builtin_values) == ("faultTolerance" in body)
        auth = body.get("authentication")
        assert (b"passwordAuthSecret" in builtin_values) == (auth == "corp-password")
        assert (b"secretMounts" in builtin_values) == (auth is not None)
        assert (b"password-authenticator.properties" in builtin_values) == (auth == "corp-ldap")


def _with_old_auth(text: str) -> str:
    """`text` with the authentication kind's includes written as before issue 21 moved them to
    values/authentication.yaml.j2: reading the `auth` variable (the cluster's Authentication)."""
    reps = (("{% if cluster.max_memory or authentication %}",
             "{% if cluster.max_memory or auth %}"),
            (('{% if authentication %}\n{% set auth_section = "server" %}\n'
             '{% include "values/authentication.yaml.j2" %}\n{% endif %}\n'),
             ("{% if auth %}\n    authenticationType: {{ auth.type | yaml }}\n{% endif %}\n"
             "{% if auth and auth.keystore_path %}\n    https:\n      enabled: true\n"
             "      port: {{ auth.https_port | yaml }}\n      keystore:\n"
             "        path: {{ auth.keystore_path | yaml }}\n{% endif %}\n")),
            (('{% if name == "coordinator" and authentication and authentication.secret_mounts %}\n'
             '{% set auth_section = "mounts" %}\n{% include "values/authentication.yaml.j2" %}\n'),
             ('{% if name == "coordinator" and auth and (auth.keystore_secret or auth.mounts) %}\n'
             "  secretMounts:\n{% if auth.keystore_secret %}\n"
             '    - {{ {"name": "trino-tls", "secretName": auth.keystore_secret, '
             '"path": auth.keystore_dir} | yaml }}\n{% endif %}\n'
             "{% for mount_name, secret, path in auth.mounts %}\n"
             '    - {{ {"name": mount_name, "secretName": secret, "path": path} | yaml }}\n'
             "{% endfor %}\n")),
            (('{% if authentication and authentication.auth %}\n{% set auth_section = "auth" %}\n'
             '{% include "values/authentication.yaml.j2" %}\n'),
             ("{% if auth and auth.password_secret %}\nauth:\n"
             "  passwordAuthSecret: {{ auth.password_secret | yaml }}\n"
             "{% if auth.groups_secret %}\n  groupsAuthSecret: {{ auth.groups_secret | yaml }}\n"
             "{% endif %}\n{% if auth.refresh_period %}\n"
             "  refreshPeriod: {{ auth.refresh_period | yaml }}\n{% endif %}\n")))
    for new, before in reps:
        assert text.count(new) == 1, new
        text = text.replace(new, before)
    assert "authentication." not in text and "values/authentication" not in text
    return text


def test_given_templates_are_used_as_given(tmp_path: Path) -> None:
    """A renderer handed its sources renders them; it does not go back to the settings' dirs."""
    (tmp_path / "catalog.properties.j2").write_text("{% for k, v in properties %}{{ k | prop_key }}\n{% endfor %}")
    settings = demo_settings()
    renderer = Renderer(settings, Templates([tmp_path, BUILTIN]))
    doc = next(d for d in example_docs() if d["clusterId"] == "adhoc-dev")
    files = renderer.render_cluster(cluster_of(doc, settings), {})
    assert files["trino-clusters/adhoc-dev/catalog/memory.properties"].endswith(b"\nconnector.name\n")


def test_compiled_templates_are_kept_in_the_bytecode_directory(tmp_path: Path) -> None:
    """With a bytecode directory, compiled templates are written there for the next run."""
    settings = demo_settings()
    doc = next(d for d in example_docs() if d["clusterId"] == "adhoc-dev")
    Renderer(settings, bytecode_dir=tmp_path / "bc").render_cluster(cluster_of(doc, settings), {})
    assert len(list((tmp_path / "bc").iterdir())) >= 3  # catalog, values, application
    factory = bytecode_cache(tmp_path / "other")
    assert not (tmp_path / "other").exists()  # nothing happens before the cache is needed
    factory()
    assert (tmp_path / "other").is_dir()


def test_a_template_error_names_template_and_line(tmp_path: Path) -> None:
    """A syntax error in a user template is a RenderError naming the file and line."""
    (tmp_path / "values.yaml.j2").write_text("{{ header }}\n{% if %}\n")
    settings = replace(demo_settings(), output={"templates_dir": str(tmp_path)})
    with pytest.raises(RenderError, match=r"values.yaml.j2:2"):
        Renderer(settings).render_cluster(cluster_of(example_docs()[0], settings), {})


def test_the_fingerprint_needs_no_jinja() -> None:
    """Computing the cache fingerprint (all a no-op run does) never imports Jinja."""
    code = ("import sys; from trinogen.render import Renderer; from trinogen.settings import "
            "Settings; Renderer(Settings()).fingerprint; print('jinja2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
