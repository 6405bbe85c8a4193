"""The pure core of rollouts (issue 20): the `rollout` settings, wave assignment, the record and
the gate's verdict, each a table of cases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from trinogen.errors import ConfigError
from trinogen.ports import AppView
from trinogen.rollout.gate import by_cluster, judge
from trinogen.rollout.state import Halt, Rollout, RolloutState, load
from trinogen.rollout.waves import Facts, assign, bucket, names, wave_of
from trinogen.settings.rollout import WaveRule, parse_rollout

T0 = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
HEAD = "c" * 40
OLD = "a" * 40


# --- settings --------------------------------------------------------------------------------


def test_a_full_rollout_section_is_read_as_written() -> None:
    """Waves keep their order, selectors and share; the soak takes a unit."""
    r = parse_rollout("f.yaml", {"soak": "10m", "waves": [
        {"name": "canary", "clusters": ["adhoc-*"]},
        {"name": "team", "owners": ["data_platform"], "profiles": ["dev"]},
        {"name": "half", "share": 0.5}, {"name": "all"}]})
    assert r.soak_seconds == 600 and r.state_file == ".trinogen/rollout.json"
    assert r.waves == (WaveRule("canary", ("adhoc-*",)),
                       WaveRule("team", (), ("data_platform",), ("dev",)),
                       WaveRule("half", share=0.5), WaveRule("all"))


@pytest.mark.parametrize(("section", "message"), [
    ([], "must be a mapping"),
    ({"waves": []}, "non-empty list"),
    ({"waves": [{"name": "a"}], "soke": 3}, "rollout.soke is not a rollout setting"),
    ({"waves": [{"name": "A"}]}, "waves[0].name must be a lowercase name"),
    ({"waves": [{"name": "a", "labels": {"x": "y"}}]}, "waves[0].labels is not a wave field"),
    ({"waves": [{"name": "a", "share": 0}]}, "share must be a number above 0"),
    ({"waves": [{"name": "a", "share": True}]}, "share must be a number above 0"),
    ({"waves": [{"name": "a", "share": 1.5}]}, "share must be a number above 0"),
    ({"waves": [{"name": "a", "clusters": "adhoc"}]}, "clusters must be a non-empty list"),
    ({"waves": [{"name": "a", "owners": [3]}]}, "owners must be a non-empty list"),
    ({"waves": [{"name": "a"}, {"name": "a"}]}, "unique"),
    ({"waves": [{"name": "rest"}, {"name": "b"}]}, "unique"),
    ({"waves": [{"name": "a"}], "soak": "ten minutes"}, "rollout.soak must be seconds"),
    ({"waves": [{"name": "a"}], "soak": -1}, "between 0 and 7 days"),
    ({"waves": [{"name": "a"}], "soak": "8000h"}, "between 0 and 7 days"),
    ({"waves": [{"name": "a"}], "state_file": "../outside.json"}, "relative path"),
    ({"waves": [{"name": "a"}], "state_file": "/etc/passwd"}, "relative path"),
    ({"waves": [{"name": f"w{i}"} for i in range(21)]}, "at most 20"),
    ({"waves": [{"name": "a"}], "check_seconds": 1}, "check_seconds must be whole seconds"),
    ({"waves": [{"name": "a"}], "check_seconds": "30"}, "check_seconds must be whole seconds"),
])
def test_a_mistaken_rollout_section_is_an_error_naming_the_field(section: Any, message: str
                                                                  ) -> None:
    """Every malformed rollout setting is refused with its field path."""
    with pytest.raises(ConfigError, match="f.yaml") as e:
        parse_rollout("f.yaml", section)
    assert message in str(e.value)


def test_the_loader_reads_the_rollout_section_and_keeps_it_off_the_command_line(tmp_path: Any
                                                                               ) -> None:
    """`rollout` comes from the file only; no file section means no waves."""
    from trinogen.settings import load_settings

    assert load_settings(environ={}).rollout is None
    f = tmp_path / "s.yaml"
    f.write_text("rollout:\n  soak: 30\n  waves: [{name: canary, clusters: [a]}]\n")
    assert load_settings(f, environ={}).rollout is not None
    with pytest.raises(ConfigError, match="configuration file"):
        load_settings(environ={}, overrides={"rollout.soak": "3"})
    f.write_text("rollout:\n  state_file: trino-clusters/x.json\n  waves: [{name: a}]\n")
    with pytest.raises(ConfigError, match="must not overlap"):
        load_settings(f, environ={})


# --- waves -----------------------------------------------------------------------------------

RULES = (WaveRule("canary", ("adhoc-dev", "*-canary")),
         WaveRule("platform", owners=("data_platform",), profiles=("dev",)),
         WaveRule("prod", profiles=("prod",)))


@pytest.mark.parametrize(("cluster", "facts", "wave"), [
    ("adhoc-dev", Facts("data_platform", "dev"), 0),  # the first wave that selects it wins
    ("etl-canary", Facts(), 0),  # a glob
    ("etl-batch", Facts("data_platform", "dev"), 1),  # every selector of a wave matches
    ("etl-batch", Facts("data_platform", "prod"), 2),
    ("etl-batch", Facts("growth", "dev"), 3),  # no wave selects it: the implicit rest
    ("etl-batch", Facts(None, None), 3),
])
def test_a_cluster_goes_to_the_first_wave_that_selects_it(cluster: str, facts: Facts,
                                                          wave: int) -> None:
    """Selectors within a wave must all match; the implicit `rest` takes what none selects."""
    assert wave_of(RULES, cluster, facts) == wave


def test_the_implicit_rest_is_named_only_when_the_last_wave_does_not_take_all() -> None:
    """A last wave with no selector is the rest; otherwise `rest` follows the rules."""
    assert names(RULES) == ["canary", "platform", "prod", "rest"]
    assert names((*RULES, WaveRule("everyone"))) == ["canary", "platform", "prod", "everyone"]


def test_a_share_wave_takes_about_its_share_and_never_moves_a_cluster() -> None:
    """A share is drawn per cluster: adding clusters changes no earlier cluster's wave."""
    rules = (WaveRule("tenth", share=0.1), WaveRule("half", share=0.5))
    few = {f"c{i}": Facts() for i in range(1000)}
    more = {**few, **{f"n{i}": Facts() for i in range(1000)}}
    first, second = assign(rules, few), assign(rules, more)
    assert all(second[c] == w for c, w in first.items())
    counts = [sum(1 for w in first.values() if w == i) for i in range(3)]
    assert 60 < counts[0] < 140 and 380 < counts[1] < 520  # 10%, then half of the other 90%
    assert 0 <= bucket("tenth", "c1") < 1


# --- the record ------------------------------------------------------------------------------


def test_the_record_reads_back_what_was_written() -> None:
    """Every field of a rollout survives a write and a read."""
    state = RolloutState({"a": "d1"}, Rollout(
        T0, 1, {"a": 0, "b": 1}, {"a": {"trino-clusters/a/values.yaml": "b" * 40}},
        T0 + timedelta(seconds=5), Halt(1, "b", "b is Degraded", T0), aborted=False,
        waves=(WaveRule("canary", clusters=("a", "*-c")), WaveRule("half", share=0.5),
               WaveRule("rest"))))
    assert load(state.to_bytes(), "r.json") == state
    assert load(None, "r.json") == RolloutState()


def test_a_hand_edited_record_prints_no_control_characters() -> None:
    """A halt's reason edited to hold terminal escapes reads back without them."""
    state = RolloutState({}, Rollout(T0, 0, halted=Halt(0, "a\x1b[2J", "x\x1b]0;owned\x07\n", T0)))
    halted = load(state.to_bytes(), "r.json").rollout.halted  # type: ignore[union-attr]
    assert halted is not None and halted.reason == "x ]0;owned  " and halted.cluster == "a [2J"


@pytest.mark.parametrize("content", [
    b'{"version": 1, "documents": {}, "rollout": {"started": "2026-12-04T12:00:00+00:00", '
    b'"wave": 0, "released": {' + key + b': 0}, "before": {}, "healthySince": null, '
    b'"halted": null, "aborted": false}}'
    for key in (b'"a\\u001b[2J"', b'""', b'"' + b"a" * 300 + b'"')])
def test_a_record_naming_a_cluster_with_control_characters_is_malformed(content: bytes) -> None:
    """The clusters a record names are printed by `status`: one that is no clusterId is refused."""
    with pytest.raises(ConfigError, match="r.json: the rollout record .* is not a clusterId"):
        load(content, "r.json")


@pytest.mark.parametrize("content", [
    b"not json", b"[]", b'{"version": 2, "documents": {}, "rollout": null}',
    b'{"version": 1, "documents": {"a": 1}, "rollout": null}',
    b'{"version": 1, "documents": {}, "rollout": {"started": "2026-12-04T12:00:00"}}',
    b'{"version": 1, "documents": {}}',
    *(b'{"version": 1, "documents": {}, "rollout": {"started": "2026-12-04T12:00:00+00:00", '
      b'"wave": 0, "released": {}, "before": {}, "healthySince": null, "halted": null, '
      b'"aborted": false, "waves": ' + waves + b'}}'
      for waves in (b'{"name": "a"}', b'[{"name": "A B"}]', b'[{"name": "a", "share": 7}]',
                    b'[{"name": "a", "evil": 1}]', b"[" + b",".join(b'{"name": "w%d"}' % i for i in range(30)) + b"]")),
])
def test_a_malformed_record_is_an_error_naming_the_file(content: bytes) -> None:
    """A record someone broke is refused with what to do, never a traceback."""
    with pytest.raises(ConfigError, match="r.json: the rollout record .* delete it"):
        load(content, "r.json")


# --- the gate --------------------------------------------------------------------------------


def app(cid: str, sync: str = "Synced", health: str = "Healthy", revision: str | None = HEAD,
        operation: str | None = "Succeeded", message: str | None = None) -> AppView:
    return AppView(f"trino-{cid}", cid, None, sync, health, message, revision, operation,
                   "boom" if operation in ("Failed", "Error") else None)


NOW = T0 + timedelta(seconds=600)


@pytest.mark.parametrize(("apps", "since", "action", "cluster", "reason"), [
    # every released cluster ready at the head for the soak time: the next wave goes
    ([app("a"), app("b")], T0, "advance", None, "soak time"),
    ([app("a"), app("b")], NOW - timedelta(seconds=599), "wait", None, "soaking"),
    ([app("a"), app("b")], None, "wait", None, "soaking: every released cluster Healthy for 0s"),
    ([app("a"), app("b", health="Degraded", message="CrashLoopBackOff")], T0, "halt", "b",
     "Degraded: CrashLoopBackOff"),
    ([app("a", operation="Failed"), app("b")], T0, "halt", "a", "failed: boom"),
    ([app("a", operation="Error"), app("b")], T0, "halt", "a", "error: boom"),
    # a halt anywhere wins over a wait elsewhere
    ([app("a", health="Progressing"), app("b", health="Degraded")], T0, "halt", "b", "Degraded"),
    ([app("a", health="Progressing"), app("b")], T0, "wait", "a", "Synced and Progressing"),
    ([app("a", sync="OutOfSync"), app("b")], T0, "wait", "a", "OutOfSync and Healthy"),
    ([app("a", health="Missing"), app("b")], T0, "wait", "a", "Missing"),
    ([app("b")], T0, "wait", "a", "no Application for cluster a"),
    ([app("a", revision=OLD), app("b")], T0, "wait", "a", "has not synced commit cccccccccccc"),
    ([app("a", operation=None), app("b")], T0, "advance", None, "soak time"),
])
def test_the_gate_advances_waits_or_halts(apps: list[AppView], since: datetime | None,
                                          action: str, cluster: str | None, reason: str) -> None:
    """The verdict from each released cluster's Application, the soak clock and the head."""
    verdict = judge(["a", "b"], {a.cluster_id or "": a for a in apps}, head=HEAD, now=NOW,
                    healthy_since=since, soak_seconds=600)
    assert (verdict.action, verdict.cluster) == (action, cluster)
    assert reason in verdict.reason


@pytest.mark.parametrize(("apps", "since", "kept"), [
    ([app("a"), app("b")], None, NOW),  # the clock starts when all are first seen ready
    ([app("a"), app("b")], T0, T0),
    ([app("a", health="Progressing"), app("b")], T0, None),  # not ready: starts over
    ([app("a", revision=OLD), app("b")], T0, T0),  # behind the head: neither starts nor resets
    ([app("a", revision=OLD), app("b")], None, None),
])
def test_the_soak_clock_starts_when_all_are_ready_and_restarts_when_one_is_not(
        apps: list[AppView], since: datetime | None, kept: datetime | None) -> None:
    """When every cluster was first seen ready is kept, started, or forgotten."""
    verdict = judge(["a", "b"], {a.cluster_id or "": a for a in apps}, head=HEAD, now=NOW,
                    healthy_since=since, soak_seconds=3600)
    assert verdict.healthy_since == kept


def test_applications_are_matched_by_their_cluster_label_else_by_name() -> None:
    """The trinogen.io/cluster-id label wins; an unlabelled Application is known by its name."""
    labelled = AppView("custom-name", "a", None, "Synced", "Healthy")
    bare = AppView("trino-b", None, None, "Synced", "Healthy")
    foreign = AppView("other", None, None, "Synced", "Healthy")
    assert by_cluster({"custom-name": labelled, "trino-b": bare, "other": foreign}, "trino-") == {
        "a": labelled, "b": bare}


def test_status_of_an_idle_and_a_rolling_record() -> None:
    """`trinogen status` says when nothing rolls, and since when a rolling wave is healthy."""
    from trinogen.rollout.view import status_lines, summary

    assert status_lines(summary(RolloutState(), ["a", "rest"])) == ["rollout: none under way"]
    rolling = summary(RolloutState({}, Rollout(T0, 1, {"x": 0, "y": 1}, {},
                                               T0 + timedelta(seconds=5))), ["a", "b", "rest"])
    assert rolling["wave"] == "b" and rolling["waves"] == [
        {"name": "a", "clusters": ["x"]}, {"name": "b", "clusters": ["y"]}]
    assert "Healthy since 2026-12-04T12:00:05+00:00" in status_lines(rolling)[-1]
