"""The ``aws:*`` types the stand-in provider serves, one module per resource family.

Importing this package registers every type in :data:`..model.REGISTRY`: it imports each
module that defines a type (a test holds it so). What the types of one AWS service share
(waits, "gone" errors, tags) lives in that service's ``*_calls`` module, which the type
modules import.
"""

from automation.sandbox.provider.types import (  # noqa: F401
    autoscaling_attachments,
    autoscaling_groups,
    certificates,
    gateways,
    iam,
    launch_templates,
    listeners,
    load_balancers,
    network_interfaces,
    peering,
    route53_records,
    route53_zones,
    routes,
    security_group_rules,
    security_groups,
    target_groups,
    volumes,
    vpc,
)
