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
])
def test_output_roots_are_relative_and_disjoint(tmp_path: Path, section: str, message: str) -> None:
    """Output directories are clean relative paths that do not contain one another."""
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, section), {})
