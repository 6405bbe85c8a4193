"""Settings: flags > environment > file > defaults, with errors that name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from trinogen.errors import ConfigError
from trinogen.settings import load_settings


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "trinogen.yaml"
    p.write_text(text)
    return p


def test_defaults_without_any_source() -> None:
    """With no file and no environment, the documented defaults apply."""
    s = load_settings(environ={})
    assert (s.mongodb.collection, s.git.branch, s.secrets.mode) == (
        "trino_clusters", "main", "external-secrets")
    assert s.source == "built-in defaults"


def test_precedence_flags_over_env_over_file(tmp_path: Path) -> None:
    """A flag beats TRINOGEN_* which beats the file which beats the default."""
    cfg = write(tmp_path, "mongodb:\n  database: from_file\n  collection: from_file\n"
                          "git:\n  branch: from_file\n")
    env = {"TRINOGEN_MONGODB_DATABASE": "from_env", "TRINOGEN_GIT_BRANCH": "from_env"}
    s = load_settings(cfg, env, {"git.branch": "from_flag"})
    assert s.mongodb.collection == "from_file"
    assert s.mongodb.database == "from_env"
    assert s.git.branch == "from_flag"


def test_config_file_from_trinogen_config(tmp_path: Path) -> None:
    """TRINOGEN_CONFIG names the file when --config is not given."""
    cfg = write(tmp_path, "mongodb:\n  uri: mongodb://db:27017\n")
    assert load_settings(None, {"TRINOGEN_CONFIG": str(cfg)}).mongodb.uri == "mongodb://db:27017"


def test_vault_conventions_are_honoured() -> None:
    """VAULT_ADDR, VAULT_NAMESPACE and VAULT_CACERT fill the vault section."""
    s = load_settings(environ={"VAULT_ADDR": "https://vault:8200", "VAULT_NAMESPACE": "team"})
    assert (s.vault.addr, s.vault.namespace) == ("https://vault:8200", "team")


def test_relative_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    """seed_dir and a local git remote resolve against the settings file's directory."""
    cfg = write(tmp_path, "mongodb:\n  seed_dir: seeds\ngit:\n  remote: ../remote.git\n")
    s = load_settings(cfg, {})
    assert s.mongodb.seed_dir == str(tmp_path / "seeds")
    assert s.git.remote == str((tmp_path / ".." / "remote.git").resolve())


def test_url_remotes_are_not_treated_as_paths(tmp_path: Path) -> None:
    """SSH and HTTPS remotes are kept exactly as written."""
    for remote in ("git@gitlab.example.com:platform/gitops.git", "https://git.example.com/x.git"):
        cfg = write(tmp_path, f"git:\n  remote: {remote}\n")
        assert load_settings(cfg, {}).git.remote == remote


@pytest.mark.parametrize(("text", "message"), [
    ("mongodb:\n  uri: [1]\n", "mongodb.uri must be a string"),
    ("mongodb:\n  colection: x\n", "unknown setting mongodb.colection"),
    ("mongo:\n  uri: x\n", "unknown section 'mongo'"),
    ("git:\n  push_retries: lots\n", "git.push_retries must be a number"),
    ("secrets:\n  mode: plaintext\n", "secrets.mode is 'plaintext'"),
    ("output:\n  clusters_dir: ../up\n", "must be a relative path inside the repo"),
    ("sync:\n  max_prune_share: 2\n", "between 0 and 1"),
    ("validation:\n  max_shutdown_seconds: 0\n", "validation.max_shutdown_seconds must be > 0"),
    ("- a list\n", "top level must be a mapping"),
    ("key: [unclosed\n", "not valid YAML"),
])
def test_bad_settings_name_the_setting(tmp_path: Path, text: str, message: str) -> None:
    """Each configuration mistake is a ConfigError naming the setting or file."""
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_settings(write(tmp_path, text), {})


def test_env_booleans_and_lists(tmp_path: Path) -> None:
    """Booleans accept true/false/1/0 and lists are comma-separated in the environment."""
    s = load_settings(environ={"TRINOGEN_SECRETS_CHECK": "false",
                               "TRINOGEN_ARGOCD_ALLOWED_DESTINATIONS": "prod-eu, prod-us"})
    assert s.secrets.check is False
    assert s.argocd.allowed_destinations == ("prod-eu", "prod-us")
    with pytest.raises(ConfigError, match="secrets.check must be true or false"):
        load_settings(environ={"TRINOGEN_SECRETS_CHECK": "maybe"})


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    """A settings file that does not exist is reported with its path."""
    with pytest.raises(ConfigError, match="cannot read configuration file"):
        load_settings(tmp_path / "nope.yaml", {})


@pytest.mark.parametrize(("section", "message"), [
    ("output:\n  clusters_dir: gitops\n  applications_dir: gitops/apps\n", "must not overlap"),
    ("output:\n  root_app: trino-clusters/root.yaml\n", "must not overlap"),
    ("output:\n  applications_dir: apps//x\n", "empty segments"),
    ("output:\n  clusters_dir: ./clusters\n", "without '.'"),
    # a case-insensitive checkout would put a cluster's Application file on the root's
    ("output:\n  root_app: Trino-Applications/root.yaml\n", "must not overlap"),
    ("argocd:\n  reserved_names: [Trino-Gateway]\n", r"reserved_names\[0\] 'Trino-Gateway'"),
    ("argocd:\n  reserved_names: ['trino-[ab]']\n", "is not a name pattern"),
    ("argocd:\n  reserved_names: ['']\n", "is not a name pattern"),
])
def test_output_roots_are_relative_and_disjoint(tmp_path: Path, section: str, message: str) -> None:
    """Output directories are clean relative paths that do not contain one another (ignoring
    case); reserved names are lowercase name patterns."""
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, section), {})


# --- precedence: one row per layer -------------------------------------------------------------

_FILE = "git:\n  branch: from-file\n"
_ENV = {"TRINOGEN_GIT_BRANCH": "from-env"}
_FLAGS = {"git.branch": "from-flag"}


@pytest.mark.parametrize(("file", "env", "flags", "expected"), [
    (False, False, False, "main"),        # the documented default
    (True, False, False, "from-file"),    # the file beats the default
    (True, True, False, "from-env"),      # TRINOGEN_* beats the file
    (True, True, True, "from-flag"),      # a flag beats everything
    (False, True, False, "from-env"),     # env alone beats the default
    (False, False, True, "from-flag"),    # a flag alone beats the default
    (True, False, True, "from-flag"),     # a flag beats the file without env in between
])
def test_each_layer_overrides_the_ones_below(
    tmp_path: Path, file: bool, env: bool, flags: bool, expected: str
) -> None:
    """git.branch comes from the highest layer that sets it: flags > env > file > defaults."""
    cfg = write(tmp_path, _FILE) if file else None
    s = load_settings(cfg, _ENV if env else {}, _FLAGS if flags else None)
    assert s.git.branch == expected


def test_a_none_flag_leaves_the_lower_layers() -> None:
    """A flag that was not given (None) does not hide the environment."""
    assert load_settings(None, _ENV, {"git.branch": None}).git.branch == "from-env"


def test_vault_addr_convention_is_below_trinogen_variable() -> None:
    """TRINOGEN_VAULT_ADDR wins over the conventional VAULT_ADDR."""
    s = load_settings(environ={"VAULT_ADDR": "https://a:8200", "TRINOGEN_VAULT_ADDR": "https://b:8200"})
    assert s.vault.addr == "https://b:8200"


# --- coercion: what each declared type accepts -------------------------------------------------

@pytest.mark.parametrize(("var", "text", "section", "key", "expected"), [
    ("TRINOGEN_GIT_PUSH_RETRIES", "7", "git", "push_retries", 7),
    ("TRINOGEN_GIT_TIMEOUT", "2.5", "git", "timeout", 2.5),
    ("TRINOGEN_SECRETS_CHECK", "off", "secrets", "check", False),
    ("TRINOGEN_SECRETS_CHECK", " YES ", "secrets", "check", True),
    ("TRINOGEN_WATCH_HEALTH_PORT", "", "watch", "health_port", None),  # optional: empty = unset
    ("TRINOGEN_ARGOCD_ALLOWED_DESTINATIONS", "a,,b ,", "argocd", "allowed_destinations", ("a", "b")),
    ("TRINOGEN_MONGODB_URI", "mongodb://x", "mongodb", "uri", "mongodb://x"),
])
def test_environment_text_becomes_the_declared_type(
    var: str, text: str, section: str, key: str, expected: object
) -> None:
    """Environment values are text; each is read as its setting's type."""
    assert getattr(getattr(load_settings(environ={var: text}), section), key) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("git:\n  push_retries: true\n", "git.push_retries must be a number, not True"),
    ("git:\n  branch: {a: 1}\n", "git.branch must be a string"),
    ("git:\n  branch:\n", "git.branch must not be empty"),
    ("argocd:\n  allowed_destinations: [1, 2]\n", "allowed_destinations must be a list of strings"),
    ("secrets:\n  refs: {A: 1}\n", "secrets.refs must be a mapping of strings"),
    ("secrets:\n  allow_inline: maybe\n", "secrets.allow_inline must be true or false"),
])
def test_file_values_of_the_wrong_type_are_refused(tmp_path: Path, text: str, message: str) -> None:
    """A file value that is not of the setting's type is a ConfigError naming the setting."""
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, text), {})


def test_environment_cannot_set_a_mapping() -> None:
    """secrets.refs is not a scalar: TRINOGEN_SECRETS_REFS is ignored, not half-parsed."""
    assert load_settings(environ={"TRINOGEN_SECRETS_REFS": "A=b"}).secrets.refs == {}


@pytest.mark.parametrize(("key", "message"), [
    ("gti.branch", "unknown section 'gti'"),
    ("git.brnch", "unknown setting git.brnch"),
])
def test_unknown_flag_settings_are_config_errors(key: str, message: str) -> None:
    """--set with a misspelt section or key names it (it used to escape as a KeyError)."""
    with pytest.raises(ConfigError, match=message):
        load_settings(environ={}, overrides={key: "x"})


# --- log ---------------------------------------------------------------------------------------

def test_log_section_is_read_from_file_env_and_flags(tmp_path: Path) -> None:
    """log.level and log.format come through the same layers as every other setting."""
    cfg = write(tmp_path, "log:\n  level: debug\n  format: json\n")
    s = load_settings(cfg, {})
    assert (s.log.level, s.log.format) == ("debug", "json")
    s = load_settings(cfg, {"TRINOGEN_LOG_FORMAT": "text"}, {"log.level": "ERROR"})
    assert (s.log.level, s.log.format) == ("ERROR", "text")


@pytest.mark.parametrize(("text", "message"), [
    ("log:\n  level: loud\n", "log.level is 'loud'"),
    ("log:\n  format: xml\n", "log.format is 'xml'"),
])
def test_bad_log_settings_are_refused(tmp_path: Path, text: str, message: str) -> None:
    """An unknown log level or format is a ConfigError, not silently INFO/text."""
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, text), {})


@pytest.mark.parametrize(("log", "flags", "json_line"), [
    ("log:\n  format: json\n", [], True),                       # the file decides
    ("log:\n  format: json\n", ["--log-format", "text"], False),  # a flag beats the file
    ("log:\n  format: json\n  level: ERROR\n", [], None),        # the level filters the line out
])
def test_the_cli_logs_as_the_log_section_says(
    tmp_path: Path, log: str, flags: list[str], json_line: bool | None
) -> None:
    """The log section of the settings file configures the CLI's logging (issue 12)."""
    import json
    import subprocess
    import sys

    remote = tmp_path / "remote.git"  # created on first use: trinogen logs that at INFO
    cfg = write(tmp_path, log + f"mongodb:\n  uri: mongomock://\ngit:\n  remote: {remote}\n"
                "  init_local_remote: true\n  workdir: work\nargocd:\n  repo_url: https://g/x.git\n")
    run = subprocess.run(
        [sys.executable, "-m", "trinogen.cli", *flags, "--config", str(cfg), "sync"],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = [ln for ln in run.stderr.splitlines() if "bare repository" in ln]
    if json_line is None:
        assert lines == []
    elif json_line:
        assert json.loads(lines[0])["level"] == "info"
    else:
        assert lines[0].startswith("trinogen: INFO: creating an empty bare repository")


SET_SHAPES = [
    ("secrets.refs", "x", "is a map; set one entry with --set secrets.refs.NAME=VALUE"),
    ("git.branch.extra", "x", "git.branch is not a map"),
    ("defaults.trinoVersion", "480", "document layers; set them in the configuration file"),
    ("profiles.small", "x", "document layers"),
    ("sync.max_prunecount", "3", "unknown setting sync.max_prunecount"),
    ("unknown.key", "1", "unknown section 'unknown'"),
    ("git.timeout", "inf", "must be a finite number"),
    ("git.timeout", "nan", "must be a finite number"),
    ("mongodb.timeout_ms", "9" * 400, "must be a finite number"),
]


@pytest.mark.parametrize(("key", "value", "message"), SET_SHAPES)
def test_every_set_shape_is_a_config_error(key: str, value: str, message: str) -> None:
    """A --set that cannot apply is a ConfigError saying how to write it, never a traceback."""
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_settings(environ={}, overrides={key: value})


def test_set_adds_one_entry_to_a_map_setting(tmp_path: Path) -> None:
    """--set secrets.refs.NAME=VALUE adds to the map the file gave, keeping its entries."""
    cfg = write(tmp_path, "secrets:\n  refs:\n    A: secret/trino/a#x\n")
    s = load_settings(cfg, {}, {"secrets.refs.B": "secret/trino/b#y"})
    assert dict(s.secrets.refs) == {"A": "secret/trino/a#x", "B": "secret/trino/b#y"}


@pytest.mark.parametrize("version", ["", "  "])
def test_an_empty_chart_version_is_refused(version: str) -> None:
    """An empty chart.version would unpin the chart in every Application: a ConfigError."""
    with pytest.raises(ConfigError, match="chart.version is empty"):
        load_settings(environ={"TRINOGEN_CHART_VERSION": version})


@pytest.mark.parametrize("key", ["argocd.repo_url", "chart.repo_url"])
def test_a_repository_url_with_credentials_is_refused(key: str) -> None:
    """A committed repository URL may not carry a token; the message does not repeat it."""
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as e:
        load_settings(environ={}, overrides={key: "https://oauth2:SECRET@git.example.com/g.git"})
    assert "SECRET" not in str(e.value)


def test_the_applications_repo_url_drops_git_remote_credentials() -> None:
    """git.remote's token stays out of the repoURL the Applications are rendered with."""
    s = load_settings(environ={"TRINOGEN_GIT_REMOTE": "https://oauth2:SECRET@git.example.com/g.git"})
    assert s.repo_url == "https://git.example.com/g.git"
    assert s.git.remote == "https://oauth2:SECRET@git.example.com/g.git"  # git still needs it
