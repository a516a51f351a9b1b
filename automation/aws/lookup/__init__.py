"""Find the live AWS resource behind each resource the program declares.

Adoption (``automation.adoption``) runs the program under mocks; for every custom
resource it asks :func:`find` for the live resource that the declared inputs describe
— by the names, CIDRs and tags the inputs carry and by the live ids of the resources
found before it (a subnet is looked for in the VPC already found). Each finder says
which id Pulumi's ``import`` option takes for it and what dependents read (ARNs, DNS
names, allocation ids), and fails with one sentence when nothing or more than one
thing matches. The rules are real AWS's (filters, uniqueness, id formats of
pulumi-aws's importers); moto serves them in tests.
"""

from automation.aws.lookup import compute, dns, iam, load_balancers, network, security
from automation.aws.lookup.model import (
    FINDERS,
    Ambiguous,
    Found,
    Lookup,
    LookupProblem,
    Missing,
    OwnAddition,
    find,
)

__all__ = [
    "FINDERS",
    "Ambiguous",
    "Found",
    "Lookup",
    "LookupProblem",
    "Missing",
    "OwnAddition",
    "compute",
    "dns",
    "find",
    "iam",
    "load_balancers",
    "network",
    "security",
]
