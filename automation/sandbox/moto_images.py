"""moto's EC2 images without the per-region catalogues nothing here reads.

Why this exists: moto fills every new EC2 backend (each region, and again after every
reset) with its 44 public images plus the region's latest Amazon Linux images and about
1,200 ECS-optimized ones, each with an EBS snapshot: half a CPU-second per backend, most
of what a test's first EC2 call costs after ``/moto-api/reset`` (0.50 against 0.05 CPU-s,
measured). kubeshift never looks an image up (the sandbox launches whatever image id a
stack names, as moto does), so the sandbox's moto and the tests' keep moto's 44 public
images only, through moto's own setting ``MOTO_AMIS_PATH`` (with it set, moto skips the
regional catalogues).
"""

from __future__ import annotations

import gzip
from importlib import resources
from pathlib import Path

AMIS_VARIABLE = "MOTO_AMIS_PATH"


def public_images(directory: Path) -> Path:
    """Write moto's public images to ``directory``: the file for ``MOTO_AMIS_PATH``, which
    must be set before moto's EC2 models are imported (moto reads it then)."""
    packaged = resources.files("moto") / "ec2" / "resources" / "amis.json.gz"
    path = directory / "moto-amis.json"
    path.write_text(gzip.decompress(packaged.read_bytes()).decode())
    return path
