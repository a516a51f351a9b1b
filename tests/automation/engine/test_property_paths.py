"""Reading a value at an engine property path, and showing it on one line."""

from __future__ import annotations

import base64

from pulumi.runtime import rpc

from automation.engine.property_paths import (
    MISSING,
    added_keys,
    segments,
    shown,
    shown_change,
    value_at,
)


def test_a_path_reads_through_maps_lists_and_quoted_keys() -> None:
    document = {"tags": {"kubernetes.io/role": "node"}, "ingress": [{"cidrBlocks": ["10/8"]}]}
    assert segments('ingress[0].cidrBlocks["a.b"]') == ["ingress", 0, "cidrBlocks", "a.b"]
    assert value_at(document, 'tags["kubernetes.io/role"]') == "node"
    assert value_at(document, "ingress[0].cidrBlocks") == ["10/8"]
    assert value_at(document, "ingress[1]") is MISSING


def test_a_value_a_preview_cannot_know_is_said_so_not_shown_as_the_engines_sentinel() -> None:
    assert shown(rpc.UNKNOWN) == "(known only after the update)"
    assert shown(["sg-1", rpc.UNKNOWN]) == '["sg-1", "(known only after the update)"]'
    assert rpc.UNKNOWN not in shown({"version": rpc.UNKNOWN})


def test_long_values_are_cut_on_one_line_and_absent_ones_are_none() -> None:
    assert shown("a\n  b") == "a b"
    assert shown(None) == shown(MISSING) == "(none)"
    assert len(shown("x" * 200)) == 80 and shown("x" * 200).endswith("…")


def test_two_boot_scripts_are_shown_where_they_part() -> None:
    def encoded(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    kops = encoded("#!/bin/bash\nset -o errexit\nnodeup\n")
    kubeshift = encoded("#!/bin/bash\nset -euo pipefail\n")
    assert shown_change("userData", kops, kubeshift) == (
        "script line 2 of 3: set -o errexit",
        "script line 2 of 2: set -euo pipefail",
    )
    # one script the other's start: the shorter one ends there
    longer = encoded("#!/bin/bash\nset -euo pipefail\nexit 0\n")
    assert shown_change("userData", longer, kubeshift) == (
        "script line 3 of 3: exit 0",
        "script line 3 of 2: (end of script)",
    )
    # anything else, or a value that is not a script, is shown as it is
    assert shown_change("description", kops, kubeshift) == (shown(kops), shown(kubeshift))
    assert shown_change("userData", kops, None) == (shown(kops), "(none)")


def test_a_credential_on_the_line_where_two_scripts_part_is_not_shown() -> None:
    token = "abcdef.0123456789abcdef"
    joins = base64.b64encode(f"#!/bin/bash\nkubeadm join 10.0.0.1:6443 --token {token}\n".encode())
    kubeshift = base64.b64encode(b"#!/bin/bash\nset -euo pipefail\n")
    live, declared = shown_change("userData", joins.decode(), kubeshift.decode())
    assert token not in live and live.startswith("script line 2 of 2: kubeadm join 10.0.0.1:6443")
    assert declared == "script line 2 of 2: set -euo pipefail"


def test_two_maps_are_shown_by_the_keys_where_they_differ() -> None:
    common = {f"k8s.io/cluster-autoscaler/node-template/label/team-{i}": "x" for i in range(9)}
    live = {**common, "Name": "nodes.shop.k8s.local"}
    declared = {**common, "Name": "nodes.shop.k8s.local", "managed-by": "kubeshift"}
    assert shown_change("tags", live, declared) == (
        '1 of 11 keys differ: {"managed-by": "(none)"}',
        '1 of 11 keys differ: {"managed-by": "kubeshift"}',
    )
    # an Auto Scaling group's tags: blocks keyed by their key; one not propagated says so
    blocks = [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in live.items()]
    moved = [*blocks[:-1], {"key": "Name", "value": "nodes.shop.k8s.local",
                            "propagateAtLaunch": False}]  # fmt: skip
    assert shown_change("tags", blocks, moved) == (
        '1 of 10 keys differ: {"Name": "nodes.shop.k8s.local"}',
        '1 of 10 keys differ: {"Name": "nodes.shop.k8s.local (not propagated)"}',
    )
    # a nested map by the dotted path of each leaf that differs
    policy = {"launchTemplate": {"spec": {"id": "lt-1", "version": "1"}}, "weight": 1}
    bumped = {"launchTemplate": {"spec": {"id": "lt-1", "version": "2"}}, "weight": 1}
    assert shown_change("mixedInstancesPolicy", policy, bumped) == (
        '1 of 3 keys differ: {"launchTemplate.spec.version": "1"}',
        '1 of 3 keys differ: {"launchTemplate.spec.version": "2"}',
    )
    # equal maps, or anything that is not one, are shown as they are
    assert shown_change("tags", live, live) == (shown(live), shown(live))
    assert shown_change("securityGroups", ["sg-1"], ["sg-2"]) == ('["sg-1"]', '["sg-2"]')


def test_added_keys_are_what_a_change_only_adds_to_a_map() -> None:
    live = {"Name": "nodes.shop.k8s.local", "team": "payments"}
    assert added_keys("tags", live, {**live, "managed-by": "kubeshift"}) == ("managed-by",)
    assert added_keys('tags["managed-by"]', MISSING, "kubeshift") == ("managed-by",)
    assert added_keys("tags", None, {"managed-by": "kubeshift"}) == ("managed-by",)
    # a changed or removed key is not an addition, nor is an equal map
    assert added_keys("tags", live, {**live, "team": "platform", "managed-by": "x"}) == ()
    assert added_keys("tags", live, {"Name": "nodes.shop.k8s.local"}) == ()
    assert added_keys('tags["team"]', "payments", "platform") == ()
    assert added_keys("tags", live, live) == ()
    # a group's tag blocks, and a template's tags by what it launches
    blocks = [{"key": "Name", "value": "n", "propagateAtLaunch": True}]
    mark = {"key": "kubeshift.io/pool", "value": "web", "propagateAtLaunch": True}
    assert added_keys("tags", blocks, [*blocks, mark]) == ("kubeshift.io/pool",)
    specs = [{"resourceType": "instance", "tags": {"Name": "n"}}]
    marked = [{"resourceType": "instance", "tags": {"Name": "n", "managed-by": "kubeshift"}}]
    assert added_keys("tagSpecifications", specs, marked) == ("managed-by",)
    assert added_keys("cidrBlock", "10.0.0.0/16", "10.1.0.0/16") == ()
