"""Volcano HyperNode (`topology.volcano.sh`): members and the place in the tree.

These stand in for Volcano's CEL rules, which kube-apiserver < 1.25 ignores, plus the tree
rules Volcano only enforces at scheduling time:
* each member selects by exactly one of exactMatch, regexMatch, labelMatch; a regex is Go
  (RE2) syntax and compiles; labelMatch only on Node members; exactMatch names are DNS-1123
  subdomains (the model's pattern); tier >= 0;
* a HyperNode member sits at a lower tier than its parent, a HyperNode is not its own member,
  members are not listed twice (nor matched by a regexMatch as well as named by an exactMatch);
* with the cluster in view: no HyperNode gets a second parent, no cycle forms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from translations._base import LabelSelector
from translations.errors import render_value
from translations.goregex import (
    MAX_PATTERN_CHARS_PER_HYPERNODE,
    MAX_PATTERN_LENGTH,
    GoRegexError,
    compile_go_regex,
    regex_matches,
)
from translations.volcano import HyperNode, MemberSpec
from webhooks.rules import fielderrors as fe
from webhooks.rules._common import INT64_MAX, Findings, at_most, parse_strict
from webhooks.rules.cluster_state import ClusterState
from webhooks.rules.decision import Decision

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate(obj: Any, state: ClusterState) -> Decision:
    hn, errors = parse_strict(HyperNode, obj)
    if hn is None:
        return Decision.of(errors)
    out = Findings()
    out.errors += at_most("spec.tier", hn.spec.tier, INT64_MAX)
    if hn.spec.members is None:
        out.errors.append(fe.required("spec.members"))
    # What would be compiled (a pattern over MAX_PATTERN_LENGTH is refused on its own, unread):
    # past the bound nothing is, since compiling is the admission's CPU cost.
    lengths = [len(m.selector.regex_match.pattern) for m in hn.spec.member_list if m.selector.regex_match]
    patterns = sum(n for n in lengths if n <= MAX_PATTERN_LENGTH)
    compile_patterns = patterns <= MAX_PATTERN_CHARS_PER_HYPERNODE
    if not compile_patterns:
        out.errors.append(
            fe.forbidden(
                "spec.members",
                f"regexMatch patterns total {patterns} characters; "
                f"at most {MAX_PATTERN_CHARS_PER_HYPERNODE} are allowed per HyperNode",
            )
        )
    seen: set[tuple[str, str, str]] = set()  # (member type, selector, name or pattern)
    for i, member in enumerate(hn.spec.member_list):
        _check_member(hn, i, member, out, compile_pattern=compile_patterns)
        sel = member.selector
        if sel.exact_match is not None:
            selector, value = "exactMatch", sel.exact_match.name
            path = f"spec.members[{i}].selector.exactMatch.name"
        elif sel.regex_match is not None:
            selector, value = "regexMatch", sel.regex_match.pattern
            path = f"spec.members[{i}].selector.regexMatch.pattern"
        else:
            continue
        if (member.type, selector, value) in seen:
            out.errors.append(fe.duplicate(path, value))
        seen.add((member.type, selector, value))
    if not out.errors:
        _check_overlaps(hn, out)
    if state.known and not out.errors:
        _check_tree(hn, state, out)
    return Decision.of(out.errors, out.warnings)


def _check_overlaps(hn: HyperNode, out: Findings) -> None:
    """A regexMatch that matches a name another member of this HyperNode gives exactly selects
    that member twice (translate would report the node or HyperNode as selected twice)."""
    exact: dict[tuple[str, str], int] = {}
    for i, member in enumerate(hn.spec.member_list):
        if member.selector.exact_match is not None:
            exact.setdefault((member.type, member.selector.exact_match.name), i)
    for i, member in enumerate(hn.spec.member_list):
        regex = member.selector.regex_match
        if regex is None:
            continue
        names = sorted(name for kind, name in exact if kind == member.type)
        for name in regex_matches(regex.pattern, names):
            out.errors.append(
                fe.invalid(
                    f"spec.members[{i}].selector.regexMatch.pattern",
                    regex.pattern,
                    f"selects {member.type} {render_value(name)}, which spec.members[{exact[(member.type, name)]}] "
                    "already selects: a member is listed once",
                )
            )


def _check_member(hn: HyperNode, i: int, member: MemberSpec, out: Findings, *, compile_pattern: bool) -> None:
    """One member: exactly one selector, each well formed (`_check_regex`, `_check_label_match`),
    and a HyperNode member that can sit below this one (`_check_hypernode_member`)."""
    base = f"spec.members[{i}].selector"
    sel = member.selector
    chosen = [
        n
        for n, v in (
            ("exactMatch", sel.exact_match),
            ("regexMatch", sel.regex_match),
            ("labelMatch", sel.label_match),
        )
        if v is not None
    ]
    if not chosen:
        out.errors.append(fe.required(base, "exactly one of exactMatch, regexMatch or labelMatch"))
        return
    if len(chosen) > 1:
        out.errors.append(
            fe.forbidden(
                base,
                f"only one of exactMatch, regexMatch or labelMatch may be given, not {' and '.join(chosen)}",
            )
        )
        return
    if sel.regex_match is not None:
        _check_regex(
            f"{base}.regexMatch.pattern", sel.regex_match.pattern, out, compile_pattern=compile_pattern
        )
    if sel.label_match is not None:
        _check_label_match(f"{base}.labelMatch", member, sel.label_match, out)
    if member.type == "HyperNode":
        _check_hypernode_member(hn, i, member, out)


def _check_regex(path: str, pattern: str, out: Findings, *, compile_pattern: bool) -> None:
    """A pattern is given, bounded, and (when asked) compiles as Go's regexp would."""
    if not pattern:
        out.errors.append(fe.required(path))
    elif len(pattern) > MAX_PATTERN_LENGTH:  # bounds the memory its compiled form takes
        out.errors.append(fe.too_long(path, MAX_PATTERN_LENGTH))
    elif compile_pattern:
        try:
            compile_go_regex(pattern)
        except GoRegexError as exc:
            reason = (
                exc.args[0].decode(errors="replace")
                if exc.args and isinstance(exc.args[0], bytes)
                else str(exc)
            )
            out.errors.append(fe.invalid(path, pattern, f"must be a valid regular expression: {reason}"))


def _check_label_match(path: str, member: MemberSpec, match: LabelSelector, out: Findings) -> None:
    """Nodes only; each expression's operator and values as the API server checks them; a
    warning for an empty selector, which makes every node a member."""
    if member.type != "Node":
        out.errors.append(fe.forbidden(path, "selects Nodes only; this member's type is HyperNode"))
    for j, req in enumerate(match.match_expressions or []):
        here = f"{path}.matchExpressions[{j}]"
        if req.operator not in LABEL_OPERATORS:
            out.errors.append(fe.not_supported(f"{here}.operator", req.operator, LABEL_OPERATORS))
        elif req.operator in ("In", "NotIn") and not req.values:
            out.errors.append(
                fe.required(f"{here}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            )
        elif req.operator in ("Exists", "DoesNotExist") and req.values:
            out.errors.append(
                fe.forbidden(
                    f"{here}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
            )
    if member.type == "Node" and not match.match_labels and not match.match_expressions:
        out.warnings.append(f"{path}: an empty selector makes every node in the cluster a member")


def _check_hypernode_member(hn: HyperNode, i: int, member: MemberSpec, out: Findings) -> None:
    """Not the HyperNode itself, and not under a tier-0 HyperNode."""
    sel = member.selector
    if sel.exact_match is not None and sel.exact_match.name == hn.name:
        out.errors.append(
            fe.invalid(
                f"spec.members[{i}].selector.exactMatch.name", hn.name, "a HyperNode cannot be its own member"
            )
        )
    elif hn.spec.tier == 0:
        out.errors.append(
            fe.invalid(
                f"spec.members[{i}].type",
                member.type,
                "a tier-0 HyperNode cannot hold HyperNodes: members sit at a lower tier",
            )
        )


@dataclass(frozen=True)
class _Above:
    """The HyperNodes above the one under review, nearest first, and each one's position."""

    chain: list[str]
    rank: dict[str, int]


def _check_tree(hn: HyperNode, state: ClusterState, out: Findings) -> None:
    """Below every parent's tier; each HyperNode member (`_selected_hypernodes`) below this one's
    tier, not above it (a cycle), and in no other parent (`_check_child`)."""
    me, tier = hn.name, hn.spec.tier
    for parent in state.parents_of(me, excluding=me):
        facts = state.hypernodes[parent]
        if facts.tier <= tier:
            out.errors.append(
                fe.invalid(
                    "spec.tier",
                    tier,
                    f"must be lower than the tier of parent HyperNode {render_value(parent)} ({facts.tier})",
                )
            )
    # Every HyperNode above this one: a member among them would close a cycle.
    chain = state.ancestors(me)
    above = _Above(chain, {name: i for i, name in enumerate(chain)})  # one lookup per member, not a scan
    others = sorted(n for n in state.hypernodes if n != me)
    for i, member in enumerate(hn.spec.member_list):
        selected = _selected_hypernodes(i, member, others)
        if selected is None:
            continue
        path, value, kids = selected
        for kid in kids:
            _check_child(hn, state, above, kid, (path, value), out)


def _selected_hypernodes(
    i: int, member: MemberSpec, others: Sequence[str]
) -> tuple[str, str, list[str]] | None:
    """A HyperNode member's selector (its path and value) and the HyperNodes it selects."""
    if member.type != "HyperNode":
        return None
    sel = member.selector
    if sel.exact_match is not None:
        name = sel.exact_match.name
        return f"spec.members[{i}].selector.exactMatch.name", name, [name]
    if sel.regex_match is not None:
        pattern = sel.regex_match.pattern
        return f"spec.members[{i}].selector.regexMatch.pattern", pattern, regex_matches(pattern, others)
    return None


def _check_child(
    hn: HyperNode, state: ClusterState, above: _Above, kid: str, at: tuple[str, str], out: Findings
) -> None:
    """One HyperNode a member selects (`at`: the selector's path and value)."""
    path, value = at
    me, tier = hn.name, hn.spec.tier
    kid_facts = state.hypernodes.get(kid)
    if kid_facts is None:
        out.warnings.append(f"{path}: HyperNode {render_value(kid)} does not exist (yet)")
        return
    if kid in above.rank:
        cycle = " -> ".join([kid, *reversed(above.chain[: above.rank[kid]]), me, kid])
        out.errors.append(fe.invalid(path, value, f"would form a cycle: {cycle}"))
        return
    if kid_facts.tier >= tier:
        out.errors.append(
            fe.invalid(
                path,
                value,
                f"member HyperNode {render_value(kid)} has tier {kid_facts.tier}; "
                f"members must sit below tier {tier}",
            )
        )
    other_parents = state.parents_of(kid, excluding=me)
    if other_parents:
        out.errors.append(
            fe.invalid(
                path,
                value,
                f"HyperNode {render_value(kid)} already has parent {render_value(other_parents[0])}; "
                "a HyperNode has at most one parent",
            )
        )
