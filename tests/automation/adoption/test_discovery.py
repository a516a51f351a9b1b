"""What discovery refuses of its own mapping: one live resource under two names."""

from __future__ import annotations

from automation.adoption.discovery import claimed_twice
from automation.adoption.models import AdoptedResource

LT = "aws:ec2/launchTemplate:LaunchTemplate"
ATTACH = "aws:autoscaling/attachment:Attachment"


def _found(name: str, live_id: str, *, kind: str = LT, imported: bool = True) -> AdoptedResource:
    import_id = live_id if imported else None
    return AdoptedResource(type=kind, name=name, id=live_id, import_id=import_id)


def test_a_live_resource_two_declared_ones_would_import_is_one_sentence() -> None:
    """Pools that split what one kops instance group's template serves would each
    import that template: Pulumi would hold it twice, and deleting one deletes it."""
    found = [
        _found("shop-workers-a-on-demand-lt", "lt-1"),
        _found("shop-workers-b-on-demand-lt", "lt-1"),
        _found("shop-workers-c-on-demand-lt", "lt-1"),
        _found("shop-workers-a-spot-lt", "lt-2"),
        _found("attach-1", "asg-1-tg-1", kind=ATTACH, imported=False),
        _found("attach-2", "asg-1-tg-1", kind=ATTACH, imported=False),  # recorded, not imported
    ]
    assert claimed_twice(found) == [
        "Live LaunchTemplate lt-1 would be adopted by 3 of the program's resources "
        "(shop-workers-a-on-demand-lt, shop-workers-b-on-demand-lt, "
        "shop-workers-c-on-demand-lt); a live resource can be only one of them, so the "
        "stack file does not describe what runs there."
    ]


def test_one_declared_resource_for_each_live_one_is_no_problem() -> None:
    assert claimed_twice([_found("a-lt", "lt-1"), _found("b-lt", "lt-2")]) == []
