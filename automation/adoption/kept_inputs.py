"""``adopt --keep-live``: keep the live value of each attribute AWS could change in place.

The engine's preview of the imports names every attribute where the live resource and
the program disagree, with both whole values. Those that would not replace the
resource can be kept: written into the stack file's ``kubeshift:cluster.kept_inputs``,
or the kept file's when the stack names one (``components/kept_inputs.py`` declares
them), so adoption, and every phase after it, leave them as they run. Not kept:
replacements (refused whatever happens), tags (kept key by key, ``kept_tags``), boot
scripts (kept as text, ``user_data``, where a credential in one is noted), attributes
only the provider stores, and values the preview could not show (a secret, or an id
not known before the update).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from pulumi.runtime import rpc
from ruamel.yaml import YAML, YAMLError
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.util import load_yaml_guess_indent

from automation.adoption.models import Difference
from automation.adoption.state_only import is_state_only
from automation.core.errors import UserError
from automation.engine.property_paths import UNKNOWN_SHOWN, top_level
from components.contract.cluster_models import KeptInput
from components.contract.kept_file import KEPT_KEY as KEPT_FILE_KEY
from components.contract.kept_file import SECTIONS, SPLIT_AT, config_env_bytes, kept_file_name
from components.contract.keys import CLUSTER_KEY

KEPT_KEY = "kept_inputs"
_KEPT_OTHERWISE = frozenset({"tags", "tagsAll", "userData"})
"""Tags key by key (``kept_tags``), boot scripts as text (``user_data``): both proposed
by ``--write-config``."""
_GRANTS = frozenset({"policy", "assumeRolePolicy", "inlinePolicies"})
_HIDDEN = ("[secret]", UNKNOWN_SHOWN, rpc.UNKNOWN)
"""How a preview shows a value it cannot give (also inside a whole value, as the
engine's unknown sentinel): never written to a stack file."""

KeptInputs = dict[str, dict[str, KeptInput]]
"""Logical name -> Pulumi attribute name -> the live and the declared value."""


def _shown(difference: Difference) -> bool:
    text = json.dumps([difference.live_input, difference.declared_input, difference.declared])
    return not any(hidden in text for hidden in _HIDDEN)


def can_keep(difference: Difference) -> bool:
    attribute = top_level(difference.attribute)
    grant = difference.type.startswith("aws:iam/") and attribute in _GRANTS
    return (
        not difference.replaces
        and not is_state_only(difference)
        and attribute not in _KEPT_OTHERWISE
        and not grant
        and _shown(difference)
    )


def keepable(differences: Sequence[Difference]) -> KeptInputs:
    """The live value of each attribute every difference of which :func:`can_keep`."""
    kept: KeptInputs = {}
    refused: set[tuple[str, str]] = set()
    for difference in differences:
        where = (difference.name, top_level(difference.attribute))
        if not can_keep(difference):
            refused.add(where)
            continue
        kept.setdefault(where[0], {})[where[1]] = KeptInput(
            live=difference.live_input, declared=difference.declared_input
        )
    for name, attribute in refused:
        kept.get(name, {}).pop(attribute, None)
    return {name: dict(sorted(found.items())) for name, found in sorted(kept.items()) if found}


def count(kept: Mapping[str, Mapping[str, KeptInput]]) -> int:
    return sum(len(found) for found in kept.values())


def write(path: Path, kept: Mapping[str, Mapping[str, KeptInput]]) -> Path:
    """Add ``kept`` under ``kept_inputs`` and return the file written: the kept file the
    stack file at ``path`` names (``kubeshift:kept``: there the values leave the stack's
    config, which Pulumi hands the program in one bounded environment string), else the
    stack file's ``kubeshift:cluster``; where that would take the config past what a
    proposal keeps in the stack file, the kept sections move to a new kept file beside
    it, named there (:func:`_set_aside`). The rest of the file stays as it is, comments
    included."""
    yaml, document = _load(path)
    config = document.get("config") if isinstance(document, CommentedMap) else None
    cluster = config.get(CLUSTER_KEY) if isinstance(config, CommentedMap) else None
    if not isinstance(config, CommentedMap) or not isinstance(cluster, CommentedMap):
        raise UserError(f"{path} has no {CLUSTER_KEY} block to keep the live values in.")
    kept_file = config.get(KEPT_FILE_KEY)
    target, home = path, cluster
    if isinstance(kept_file, str) and kept_file and KEPT_KEY not in cluster:
        target = path.parent / kept_file
        yaml, document = _load(target)
        if not isinstance(document, CommentedMap):
            raise UserError(f"{target} is not a mapping to keep the live values in.")
        home = document
    block = home.setdefault(KEPT_KEY, CommentedMap())
    for name, found in kept.items():
        entry = block.setdefault(name, CommentedMap())
        for attribute, value in found.items():
            entry[attribute] = value.model_dump(mode="json")
    if target == path and config_env_bytes(config) > SPLIT_AT:
        aside = _set_aside(path, config, cluster)
        _dump(yaml, document, path)
        return aside
    _dump(yaml, document, target)
    return target


def _set_aside(path: Path, config: CommentedMap, cluster: CommentedMap) -> Path:
    """Move the cluster block's kept sections to a new kept file beside the stack file
    at ``path`` and name it in ``kubeshift:kept``, as ``--write-config`` does for a large
    cluster's proposal: Pulumi hands the program the whole config in one environment
    string, which Linux bounds (``components/contract/kept_file.py``)."""
    stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    aside = path.with_name(kept_file_name(stack))
    if aside.exists():
        raise UserError(
            f"The kept values would take {path.name} past what Pulumi can hand its program, "
            f"and {aside.name} already exists beside it; name it in {KEPT_FILE_KEY} or move it."
        )
    sections = CommentedMap()
    for name in SECTIONS:
        if name in cluster:
            sections[name] = cluster.pop(name)
    config[KEPT_FILE_KEY] = aside.name
    writer = YAML()
    writer.width = 100
    _dump(writer, sections, aside)
    return aside


def _dump(yaml: YAML, document: object, target: Path) -> None:
    """Write ``document`` to ``target`` through a temporary file beside it."""
    temporary = target.with_name(f".{target.name}.kept")
    try:
        with temporary.open("w") as stream:
            yaml.dump(document, stream)
        temporary.replace(target)
    except OSError as exc:
        raise UserError(f"Cannot write {target} ({exc.strerror}).") from None


def _load(path: Path) -> tuple[YAML, object]:
    """``path``'s YAML, round-trip (the user's layout, quotes and comments survive),
    and the dumper that writes it back in the same indents."""
    yaml = YAML()
    yaml.width = 100
    yaml.preserve_quotes = True
    try:
        text = path.read_text()
        _, sequence, offset = load_yaml_guess_indent(text)  # a list's indent, its dash's
        sequence, offset = sequence or 2, offset or 0
        yaml.indent(mapping=sequence - offset, sequence=sequence, offset=offset)
        return yaml, yaml.load(text)
    except (OSError, YAMLError) as exc:
        raise UserError(f"Cannot update {path} with the kept values ({exc}).") from None
