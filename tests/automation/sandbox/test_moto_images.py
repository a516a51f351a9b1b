"""automation/sandbox/moto_images.py: moto keeps its public images, not the regional catalogues."""

from __future__ import annotations

import pytest

from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto


def test_the_public_images_are_there_and_the_ecs_catalogue_is_not(moto: MotoServer) -> None:
    ec2 = moto.client("ec2")

    amazon = ec2.describe_images(Owners=["amazon"])["Images"]
    ecs = ec2.describe_images(Filters=[{"Name": "name", "Values": ["*ecs-optimized*"]}])["Images"]

    assert amazon, "moto's public images stay: a stack may name one"
    assert len(ec2.describe_images()["Images"]) < 100
    assert ecs == []
