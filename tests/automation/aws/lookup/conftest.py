"""A lookup for one cluster over kubeshift's clients on moto."""

from __future__ import annotations

import pytest

from automation.aws.clients import AwsClients
from automation.aws.lookup import Lookup

CLUSTER = "shop"


@pytest.fixture
def lookup(aws: AwsClients) -> Lookup:
    return Lookup(clients=aws, cluster=CLUSTER)
