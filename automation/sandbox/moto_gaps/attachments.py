"""EC2's attachment gaps between the sandbox's moto and AWS: a volume or an interface
belongs to one instance at a time, and a terminated instance lets go of what it held
(applied by ``moto_gaps.close_every_gap``; each has a line in
``docs/sandbox-fidelity.md``).

- **A volume is attached to one instance at a time.** AWS refuses ``AttachVolume`` for
  a volume attached anywhere (``VolumeInUse``), in another zone than the instance's
  (``InvalidVolume.ZoneMismatch``) or at a device the instance already uses
  (``InvalidParameterValue``), and ``DetachVolume`` naming an instance the volume is
  not attached to (``InvalidAttachment.NotFound``; EC2 API reference, "Error codes").
  moto takes every one of them: the earlier holder keeps the volume in its
  block-device map, and when that instance is terminated moto detaches the volume from
  whoever holds it by then. ``DetachVolume`` of a volume attached nowhere is refused
  (``IncorrectState``), and without an instance it detaches the volume from its holder,
  as on AWS (moto failed).
- **An interface is attached to one instance at a time.** AWS refuses
  ``AttachNetworkInterface`` for an interface in use (``InvalidNetworkInterface.InUse``)
  or at a device index the instance already uses; moto moves it and leaves it in the
  earlier instance's list.
- **A terminated instance lets go of its kept interfaces.** AWS deletes, on
  termination, the interfaces whose attachment says ``DeleteOnTermination`` and
  detaches the others, which become ``available`` for the next instance (EC2 API
  reference, ``NetworkInterfaceAttachmentChanges``); moto left them attached to the
  terminated instance.
"""

from __future__ import annotations

import functools
from typing import Any


def volumes_attached_once() -> None:
    """Refuse to attach a volume in use, in another zone or at a used device, and to
    detach it from an instance that does not hold it, as AWS does. Idempotent."""
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.responses.elastic_block_store import ElasticBlockStore

    attach, detach = ElasticBlockStore.attach_volume, ElasticBlockStore.detach_volume
    if getattr(attach, "_kubeshift", False):
        return

    @functools.wraps(attach)
    def attach_volume(self: Any) -> Any:
        volume = self.ec2_backend.get_volume(self._get_param("VolumeId"))
        instance = self.ec2_backend.get_instance(self._get_param("InstanceId"))
        device = self._get_param("Device")
        if volume.attachment is not None:
            raise EC2ClientError("VolumeInUse", f"{volume.id} is already attached to an instance")
        if volume.zone.name != instance._placement.zone:
            raise EC2ClientError(
                "InvalidVolume.ZoneMismatch",
                f"The volume '{volume.id}' is not in the same availability zone as instance "
                f"'{instance.id}'",
            )
        if device in instance.block_device_mapping:
            raise EC2ClientError(
                "InvalidParameterValue",
                f"Invalid value '{device}' for unixDevice. Attachment point {device} is "
                "already in use",
            )
        return attach(self)

    @functools.wraps(detach)
    def detach_volume(self: Any) -> Any:
        volume = self.ec2_backend.get_volume(self._get_param("VolumeId"))
        named = self._get_param("InstanceId")
        holder = volume.attachment.instance.id if volume.attachment is not None else None
        if holder is None:
            raise EC2ClientError(
                "IncorrectState", f"Volume '{volume.id}' is in the 'available' state."
            )
        if named and named != holder:
            raise EC2ClientError(
                "InvalidAttachment.NotFound",
                f"Volume '{volume.id}' is not 'attached' to instance '{named}'",
            )
        if not named:  # this request's own reader: the instance is the holder
            read = self._get_param
            self._get_param = lambda key, *a, **k: (
                holder if key == "InstanceId" else read(key, *a, **k)
            )
        return detach(self)

    attach_volume._kubeshift = True  # type: ignore[attr-defined]
    ElasticBlockStore.attach_volume = attach_volume  # type: ignore[method-assign]
    ElasticBlockStore.detach_volume = detach_volume  # type: ignore[method-assign]


def interfaces_attached_once() -> None:
    """Refuse to attach an interface in use or at a used device index, and detach the
    kept interfaces of an instance being terminated, as AWS does. Idempotent."""
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.models.instances import Instance
    from moto.ec2.responses.elastic_network_interfaces import ElasticNetworkInterfaces

    attach, terminate = ElasticNetworkInterfaces.attach_network_interface, Instance.terminate
    if getattr(attach, "_kubeshift", False):
        return

    @functools.wraps(attach)
    def attach_network_interface(self: Any) -> Any:
        interface = self.ec2_backend.get_network_interface(self._get_param("NetworkInterfaceId"))
        instance = self.ec2_backend.get_instance(self._get_param("InstanceId"))
        index = int(self._get_param("DeviceIndex"))
        if interface.instance is not None:
            raise EC2ClientError(
                "InvalidNetworkInterface.InUse",
                f"Interface: [{interface.id}] in use.",
            )
        if index in instance.nics:
            raise EC2ClientError(
                "InvalidParameterValue",
                f"Instance '{instance.id}' already has an interface attached at device "
                f"index '{index}'.",
            )
        return attach(self)

    @functools.wraps(terminate)
    def terminate_letting_go(self: Any) -> Any:
        state = terminate(self)
        for index, nic in list(self.nics.items()):
            kept = nic.id in self.ec2_backend.enis and nic.instance is self
            if int(index) != 0 and kept:  # the primary goes with it (`groups_in_use_stay`)
                self.detach_eni(nic)
        return state

    attach_network_interface._kubeshift = True  # type: ignore[attr-defined]
    ElasticNetworkInterfaces.attach_network_interface = attach_network_interface  # type: ignore[method-assign]
    Instance.terminate = terminate_letting_go  # type: ignore[method-assign]
