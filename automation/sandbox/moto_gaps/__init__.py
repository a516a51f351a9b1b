"""Where the sandbox's moto (run in the supervisor's process) differs from AWS and a
migration would notice, closed by patching its in-process model: one function per gap,
each with a line in the fidelity ledger (``docs/sandbox-fidelity.md``), grouped by AWS
service (:mod:`.ec2` and :mod:`.attachments`, :mod:`.elb`, :mod:`.autoscaling`; Route53's are
``moto_route53``'s) and applied, in order, by :func:`close_every_gap`.
"""

from __future__ import annotations

from automation.sandbox.moto_gaps.attachments import (
    interfaces_attached_once,
    volumes_attached_once,
)
from automation.sandbox.moto_gaps.autoscaling import (
    grace_period_as_given,
    groups_spread_over_zones_and_types,
    metrics_collection_adds_and_disables,
    spot_templates_refused_under_mixed_policies,
)
from automation.sandbox.moto_gaps.ec2 import (
    addresses_taken_once,
    groups_in_use_stay,
    indexed_tag_lookups,
    instance_interfaces_go_with_it,
    interface_descriptions_cleared,
    interface_groups_reach_instances,
    launch_groups_in_one_place,
    nat_interfaces_go_with_them,
    peering_filters_applied,
    peering_status_in_place,
    portless_protocols,
    referenced_groups_stay,
    reservation_descriptions_kept,
    reserve_interface_addresses,
    rules_equal_whatever_their_descriptions,
    volume_modifications_as_aws,
)
from automation.sandbox.moto_gaps.elb import (
    default_health_checks,
    local_traffic_health_checks,
)


def close_every_gap() -> None:
    """Apply every patch imported above and Route53's (``moto_route53``), as the sandbox's moto
    runs. Idempotent."""
    from automation.sandbox.moto_route53 import close_route53_gaps

    close_route53_gaps()
    reserve_interface_addresses()
    referenced_groups_stay()
    portless_protocols()
    default_health_checks()
    indexed_tag_lookups()
    groups_spread_over_zones_and_types()
    rules_equal_whatever_their_descriptions()
    metrics_collection_adds_and_disables()
    grace_period_as_given()
    spot_templates_refused_under_mixed_policies()
    interface_groups_reach_instances()
    launch_groups_in_one_place()  # after: it reads the launch as it was asked
    peering_status_in_place()
    peering_filters_applied()
    groups_in_use_stay()
    instance_interfaces_go_with_it()
    interfaces_attached_once()  # after: it detaches what termination keeps
    volumes_attached_once()
    nat_interfaces_go_with_them()
    addresses_taken_once()
    volume_modifications_as_aws()
    reservation_descriptions_kept()
    interface_descriptions_cleared()
    local_traffic_health_checks()
