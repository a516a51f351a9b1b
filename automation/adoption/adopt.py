"""Plan and apply one adoption: discover, preview the imports, import, check.

:meth:`Adoption.plan` changes nothing: it finds what runs, previews the imports with
the real engine and says what differs or would change. :meth:`Adoption.apply` imports
(journalled as the first phase's ``adopt`` step) and then previews the first phase
without imports, which must change nothing but what the user accepted. Running it
again finds everything adopted and changes nothing: resources already in the state
ignore the import option.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from automation.adoption.assessment import Assessment, assess
from automation.adoption.discovery import discover
from automation.adoption.kept_inputs import KeptInputs, can_keep, count, keepable, write
from automation.adoption.models import AdoptReport, Difference, Discovery
from automation.adoption.state_only import STATE_ONLY, is_state_only
from automation.adoption.unmatched import unmatched
from automation.config.project import StackInfo
from automation.core.errors import StepFailedError, UserError
from automation.engine.adapter import Engine, PreviewOutcome, urn_name, urn_type
from automation.engine.property_paths import top_level
from automation.model.context import ClientSet
from automation.run.journal import Journal
from automation.run.steps import step_layout
from automation.scenarios import build_scenario
from components.contract.engine_vars import IMPORTS_VAR
from components.contract.progress import Mark, Record
from components.contract.tags import is_own_tag
from components.imports import ImportFile, key

STEP = "adopt"
ADOPTER = "kubeshift adopt (the cluster was built by another tool; no hook ran before it)"
EngineFactory = Callable[[Path, str, str, dict[str, str]], Engine]
"""(project, stack, run id, extra environment) -> engine."""


@dataclass
class Adoption:
    project: Path
    info: StackInfo
    clients: ClientSet
    engine_factory: EngineFactory
    status: Callable[[str], AbstractContextManager[Any]]
    imports: ImportFile | None = None
    accepted: dict[str, list[str]] = field(default_factory=dict)
    kept: KeptInputs = field(default_factory=dict)
    """Live values ``--keep-live`` keeps; written by :meth:`apply`."""
    kept_in: Path | None = None
    """Where :meth:`apply` wrote them: the stack file, or the kept file it names."""

    @property
    def first_phase(self) -> str:
        return self.info.config.phase_ids[0]

    def secret_config(self) -> dict[str, str]:
        return self.engine_factory(self.project, self.info.name, "", {}).secret_config()

    def plan(
        self, *, accept_updates: bool = False, accept_own_tags: bool = False,
        keep_live: bool = False,
    ) -> AdoptReport:  # fmt: skip
        """What adoption would import and what stands in its way; changes nothing."""
        first = self.first_phase
        if self.info.phase != first:
            raise UserError(
                f"Adoption maps the live cluster to the first phase, {first!r}, but stack "
                f"'{self.info.name}' is at {self.info.phase!r}; set kubeshift:phase to {first} "
                "in its stack file first."
            )
        with self.status(f"finding the live resources of {self.info.config.cluster.name}"):
            discovery = discover(self.info.values, self.clients.aws(), self.info.name)
            unused = unmatched(self.info.values, first)
        if unused:
            discovery = discovery.model_copy(update={"problems": [*unused, *discovery.problems]})
        if discovery.problems:
            return self._report(discovery, Assessment(), "refused")
        quiet = {
            key(r.type, r.name): list(STATE_ONLY[r.type])
            for r in discovery.resources
            if r.type in STATE_ONLY and r.import_id is not None
        }
        # A resource the state holds keeps its id: importing it again by another form
        # of id (a route table association's <subnet>/<table>) would replace it.
        held = self.engine_factory(self.project, self.info.name, "", {}).resource_urns()
        taken = {key(urn_type(urn), urn_name(urn)) for urn in held}
        wanted = {k: v for k, v in discovery.imports.items() if k not in taken}
        imports = ImportFile(phase=first, imports=wanted, ignore_changes=quiet)
        with self.status("previewing the imports with the engine"):
            assessment = assess(self._preview(imports).changes, discovery)
        kept = keepable(assessment.differences) if keep_live else {}
        if kept:
            self.kept = kept
            imports = imports.model_copy(update={"kept_inputs": kept})
            with self.status(f"previewing the imports with {count(kept)} live value(s) kept"):
                assessment = assess(self._preview(imports).changes, discovery)
        elif not (keep_live or accept_updates) and any(map(can_keep, assessment.differences)):
            assessment = dataclasses.replace(
                assessment, refusals=(*assessment.refusals, _KEEP_LIVE_HINT)
            )
        tags_only = own_tags_only(assessment.differences)
        chosen = (set(tags_only) if accept_own_tags else set()) | (
            _every_update(assessment.differences) if accept_updates else set()
        )
        if chosen:
            accepted = {k: set(v) for k, v in quiet.items()}
            for name, attribute in chosen:
                accepted.setdefault(name, set()).add(attribute)
            self.accepted = {k: sorted(v) for k, v in accepted.items()}
            imports = imports.model_copy(update={"ignore_changes": self.accepted})
            with self.status("previewing the imports with the accepted updates"):
                assessment = assess(self._preview(imports).changes, discovery)
        elif tags_only and not assessment.clean:
            hint = (
                f"{sum(tags_only.values())} difference(s) only add kubeshift's own tags "
                f"(managed-by, kubeshift.io/*) to {len(tags_only)} resource attribute(s); "
                "`--accept-own-tags` imports around them alone, and the next phase's update "
                "adds them."
            )
            assessment = dataclasses.replace(assessment, refusals=(*assessment.refusals, hint))
        self.imports = imports
        if not assessment.clean:
            outcome = "refused"
        elif not (assessment.imports or assessment.recorded or assessment.added):
            outcome = "unchanged"
        else:
            outcome = "planned"
        return self._report(discovery, assessment, outcome)

    def apply(self, plan: AdoptReport, journal: Journal, run_id: str) -> AdoptReport:
        """Import what :meth:`plan` found (journalled), then check the first phase."""
        assert self.imports is not None and plan.outcome == "planned", "plan() first"
        first = self.first_phase
        journal.start(first, STEP)
        try:
            if self.kept:  # before the import: every phase from now on declares them
                self.kept_in = write(self.info.path, self.kept)
            with self._imports_file(self.imports) as path:
                engine = self.engine_factory(
                    self.project, self.info.name, run_id, {IMPORTS_VAR: str(path)}
                )
                engine.carry(self._adopted_record())
                adding = f" and adding {len(plan.added)}" if plan.added else ""
                with self.status(f"importing {len(plan.imported)} resources{adding}"):
                    engine.up()
            plain = self.engine_factory(self.project, self.info.name, run_id, {})
            with self.status(f"previewing {first} without imports"):
                after = assess(plain.preview().changes, plan.discovery)
            if after.differences and all(is_state_only(d) for d in after.differences):
                # provider-side flags only (STATE_ONLY): the update calls no AWS API for them
                with self.status(f"writing {len(after.differences)} state-only values"):
                    plain.up()
                    after = assess(plain.preview().changes, plan.discovery)
        except BaseException as exc:
            journal.fail(first, STEP, str(exc))
            raise
        left = [*after.refusals, *(d.line() for d in after.differences if not self._accepted(d))]
        if after.imports or after.recorded or after.added or left:
            message = f"After the import, {first} still plans changes: " + "; ".join(
                left or [*after.imports, *after.recorded, *after.added]
            )
            journal.fail(first, STEP, message)
            raise StepFailedError(message)
        details: dict[str, Any] = {
            "imported": len(plan.imported),
            "recorded": len(plan.recorded),
            "added": len(plan.added),
            "unmodelled": len(plan.discovery.unmodelled),
        }
        summary = f"adopted {len(plan.imported)} resources" + (
            f", added {len(plan.added)}" if plan.added else ""
        )
        journal.finish(first, STEP, summary, changed=True,
                       details=details)  # fmt: skip
        made_later = [d for d in after.differences if self._accepted(d)]
        message = (
            f"{first} now previews only the {len(made_later)} accepted difference(s); the "
            "next phase's update makes them"
            if made_later
            else f"{first} now previews no change"
        )
        if self.kept and self.kept_in is not None:
            where = "kubeshift:cluster." if self.kept_in == self.info.path else ""
            message += (
                f"; {self.kept_in.name} keeps {count(self.kept)} live value(s) under "
                f"{where}kept_inputs"
            )
        return plan.model_copy(update={"outcome": "adopted", "message": message})

    def _adopted_record(self) -> Record:
        """The stack's progress after adoption: the first phase's before-steps are the
        other tool's history (as ``sandbox up --built-by kubeshift`` records for its world)."""
        layout = step_layout(build_scenario(self.info.config).phases)
        return Record(marks=(Mark(phase=self.first_phase, milestone="before", by=ADOPTER),),
                      steps=layout)  # fmt: skip

    def _accepted(self, difference: Difference) -> bool:
        accepted = self.accepted.get(key(difference.type, difference.name), [])
        return top_level(difference.attribute) in accepted

    def _preview(self, imports: ImportFile) -> PreviewOutcome:
        with self._imports_file(imports) as path:
            engine = self.engine_factory(self.project, self.info.name, "", {IMPORTS_VAR: str(path)})
            engine.carry(self._adopted_record())
            return engine.preview()

    @contextlib.contextmanager
    def _imports_file(self, imports: ImportFile) -> Iterator[Path]:
        with tempfile.TemporaryDirectory(prefix="kubeshift-adopt-") as directory:
            path = Path(directory) / f"{self.info.name}.imports.json"
            path.write_text(imports.model_dump_json(indent=2))
            yield path

    def _report(self, discovery: Discovery, assessment: Assessment, outcome: str) -> AdoptReport:
        # a refusal imports nothing (the discovery still lists what was found)
        left = [r for r in discovery.resources if r.name not in assessment.adopted]
        if outcome == "refused":
            left = []
        return AdoptReport(
            stack=self.info.name,
            phase=self.first_phase,
            outcome=outcome,
            discovery=discovery,
            differences=list(assessment.differences),
            refusals=[*discovery.problems, *assessment.refusals],
            imported=[r.name for r in left if r.import_id is not None],
            recorded=[r.name for r in left if r.import_id is None],
            added=[] if outcome == "refused" else list(assessment.added),
            already=list(assessment.adopted),
            kept=self.kept,
        )


_KEEP_LIVE_HINT = (
    "Some differences are attributes AWS changes in place: `--keep-live` keeps their live "
    "values (written to the stack file, kubeshift:cluster.kept_inputs, and declared in every "
    "phase); `--accept-updates` imports them as they run and lets the next phase change them."
)

OWN_TAG_ATTRIBUTES = ("tags", "tagSpecifications")
"""Where kubeshift's own tags go: a resource's tags, a template's tags for what it
launches."""


def own_tags_only(differences: Sequence[Difference]) -> dict[tuple[str, str], int]:
    """(resource key, attribute) -> its number of differences, for each attribute whose
    every difference only adds kubeshift's own tags (``components.contract.tags.is_own_tag``)."""
    grouped: dict[tuple[str, str], list[Difference]] = {}
    for difference in differences:
        attribute = top_level(difference.attribute)
        grouped.setdefault((key(difference.type, difference.name), attribute), []).append(
            difference
        )
    return {
        where: len(found)
        for where, found in grouped.items()
        if where[1] in OWN_TAG_ATTRIBUTES and all(_adds_own_tags(d) for d in found)
    }


def _adds_own_tags(difference: Difference) -> bool:
    added = difference.added
    return bool(added) and not difference.replaces and all(is_own_tag(k) for k in added)


def _every_update(differences: Sequence[Difference]) -> set[tuple[str, str]]:
    """Every differing attribute, when none of them would replace its resource."""
    if any(d.replaces for d in differences):
        return set()
    return {(key(d.type, d.name), top_level(d.attribute)) for d in differences}
