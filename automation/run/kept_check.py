"""Kept values for nothing: a kept name, description, boot script, tag set or input
whose key the program never looks up is refused before anything runs.

Adoption writes each kept value under the key the program derives for a live resource
(the name kubeshift gives it, or its logical name), and the program looks each key up
as it declares the resource (``components.contract.kept_use``). A key it never looks up keeps
nothing: a typo there means the next update drops the tags another tool set, or
renames a live group. The keys come from the baseline's render, which declares every
resource adoption took over; it is read through the render cache, so a stack file
checked once costs a file read after.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path

from automation.config.project import StackInfo
from automation.core.errors import ConfigError
from components.contract.cluster_models import ClusterConfig
from components.contract.kept_use import SECTIONS
from components.contract.keys import CLUSTER_KEY


def kept_for_nothing(cluster: ClusterConfig, looked_up: Mapping[str, Sequence[str]]) -> list[str]:
    """One clause per kept key the program never looked up, naming the nearest it did."""
    problems = []
    for section in SECTIONS:
        known = set(looked_up.get(section, ()))
        for key in sorted(getattr(cluster, section)):
            if key in known:
                continue
            nearest = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
            hint = f" (did you mean {nearest[0]!r}?)" if nearest else ""
            problems.append(
                f"{CLUSTER_KEY}.{section} {key!r} is for nothing the program declares{hint}"
            )
    return problems


def refuse_kept_for_nothing(info: StackInfo, cache_dir: Path) -> None:
    """Raise one sentence when the stack keeps a value for nothing (baseline's render)."""
    cluster = info.config.cluster
    if not any(getattr(cluster, section) for section in SECTIONS):
        return
    from automation.review.render_cache import cached_rendering, remember

    rendered = cached_rendering(info.values, info.config.phase_ids[0], cache_dir, store=False)
    problems = kept_for_nothing(cluster, rendered.kept_looked_up)
    if not problems:
        remember(rendered)  # a refused command writes nothing, not even its render
        return
    more = f" ({len(problems) - 1} more like it)" if len(problems) > 1 else ""
    raise ConfigError(
        f"{problems[0]}{more}: a kept value is keyed by the name kubeshift gives a "
        "resource, or its logical name (`kubeshift render --json` lists them); one for "
        "nothing keeps nothing, and the live resource it was meant for would change."
    )
