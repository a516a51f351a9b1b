"""The two sides of a migration: the VPC a cluster starts in and the one it moves to.

A single-VPC cluster (cni-swap, overlay-switch) lives on the source side only.
"""

from __future__ import annotations

from typing import Final, Literal

Side = Literal["source", "target"]
"""Value of the ``kubeshift.io/network`` tag of a side's instances."""

SOURCE: Final = "source"
TARGET: Final = "target"
