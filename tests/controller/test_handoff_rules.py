"""The hand-off's rules and the Koordinator-style scheduler args, without a server: how a
`--handoff` rule reads, which names are served before any check, and what the engine sees
of a gang when preemption or topology awareness is off."""

from __future__ import annotations

import pytest

from controller.errors import ConfigError
from controller.handoff import HandOff, HandOffConfig, PresenceRule, default_rules
from controller.runtime.scheduler import SchedulerConfig
from translations.constraints import TopologyConstraint
from translations.gangs import Gang, GangKey, SubGroup


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (
            "koord-scheduler=lease:kube-system/koord",
            PresenceRule("koord-scheduler", "lease", "kube-system", "koord"),
        ),
        ("volcano=deployment:vc/vc-scheduler", PresenceRule("volcano", "deployment", "vc", "vc-scheduler")),
    ],
    ids=["lease", "deployment"],
)
def test_rule_parses(text: str, rule: PresenceRule) -> None:
    assert PresenceRule.parse(text) == rule


@pytest.mark.parametrize(
    "text", ["koord-scheduler", "x=pod:ns/name", "x=lease:name-only", "=lease:ns/name", "x=lease:ns/"]
)
def test_bad_rule_names_the_flag_and_the_value(text: str) -> None:
    with pytest.raises(ConfigError, match=r"--handoff .*expected NAME=lease:NAMESPACE/LEASE"):
        PresenceRule.parse(text)


def test_a_later_rule_replaces_the_default() -> None:
    mine = PresenceRule("koord-scheduler", "lease", "my-ns", "koord-scheduler")
    config = HandOffConfig(scheduler_names=("koord-scheduler",), rules=(*default_rules(), mine))
    assert config.rule_of("koord-scheduler") == mine
    assert config.rule_of("topobridge") is None


def test_names_with_a_rule_wait_for_their_first_check() -> None:
    config = HandOffConfig(scheduler_names=("topobridge", "volcano", "koord-scheduler", "other"))
    handoff = HandOff(kube=None, config=config)  # type: ignore[arg-type]  # no check runs here
    assert sorted(handoff.probes) == ["koord-scheduler", "volcano"]
    assert handoff.served_names() == frozenset({"topobridge", "other"})
    handoff.probes["volcano"].present = False
    handoff.probes["koord-scheduler"].present = True
    assert handoff.served_names() == frozenset({"topobridge", "other", "volcano"})


GANG = Gang(
    key=GangKey("ns/job"),
    pods=(),
    min_member=2,
    priority=0,
    preemption_policy="PreemptLowerPriority",
    constraint=TopologyConstraint("hard", 2),
    subgroups=(SubGroup("sub-0", ("ns/job-0",), TopologyConstraint("hard", 1)),),
)


def test_default_args_leave_the_gang_as_written() -> None:
    assert SchedulerConfig().shape(GANG) is GANG


def test_preemption_off_makes_the_gang_never_preempt() -> None:
    shaped = SchedulerConfig(enable_preemption=False).shape(GANG)
    assert shaped.preemption_policy == "Never"
    assert (shaped.constraint, shaped.subgroups) == (GANG.constraint, GANG.subgroups)


def test_topology_off_drops_constraints_but_keeps_the_gang_whole() -> None:
    shaped = SchedulerConfig(topology_aware=False).shape(GANG)
    assert (shaped.constraint, shaped.subgroups) == (None, ())
    assert (shaped.min_member, shaped.preemption_policy) == (2, "PreemptLowerPriority")
