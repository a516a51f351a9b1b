"""The progress record: what an update of a phase needs, and the sentence when it lacks it."""

from __future__ import annotations

import pytest

from components.contract.progress import (
    Mark,
    Progress,
    ProgressError,
    Record,
    Undo,
    missing,
    parse_progress,
    parse_record,
    settle,
)

PHASES = ("baseline", "target-network", "drain-workers", "retire-old-workers")


def finished(*phases: str) -> Progress:
    marks = [
        Mark(phase=p, milestone=m, by="t") for p in phases for m in ("before", "update", "after")
    ]
    return Progress(marks=tuple(marks))


def test_a_phase_needs_every_earlier_phase_finished_and_its_own_before_steps() -> None:
    progress = finished("baseline")
    assert missing(progress, PHASES, "drain-workers") == [
        "after target-network",
        "before drain-workers",
    ]
    assert missing(finished(*PHASES[:3]), PHASES, "retire-old-workers") == [
        "before retire-old-workers"
    ]


def test_the_refusal_names_what_is_missing_and_the_next_command() -> None:
    progress = finished("baseline", "target-network").with_marks(
        [Mark(phase="drain-workers", milestone="before", by="t")]
    )
    with pytest.raises(ProgressError) as caught:
        settle(
            progress,
            PHASES,
            "retire-old-workers",
            stack="s",
            added=Record(),
            by="me",
            skip_for=None,
        )
    text = str(caught.value)
    assert "after drain-workers" in text and "before retire-old-workers" in text
    assert "`pulumi up` at kubeshift:phase drain-workers" in text  # its update is next
    assert "kubeshift:skipProgressCheck" in text and "\n" not in text


def test_marks_passed_with_the_update_count_and_the_update_is_recorded() -> None:
    mark = Mark(phase="target-network", milestone="before", by="run", at="2026-11-23T12:00:00Z")
    added = Record(marks=(mark,))
    settled, skipped = settle(
        finished("baseline"),
        PHASES,
        "target-network",
        stack="s",
        added=added,
        by="me",
        skip_for=None,
    )
    assert skipped == []
    assert settled.has("target-network", "before") and settled.has("target-network", "update")
    assert settled.marks[-1].key == ("target-network", "update")


def test_an_override_goes_ahead_and_is_recorded_only_for_its_phase() -> None:
    settled, skipped = settle(
        Progress(),
        PHASES,
        "target-network",
        stack="s",
        added=Record(),
        by="me",
        skip_for="target-network",
    )
    assert skipped == ["after baseline", "before target-network"]
    assert settled.overrides[0].phase == "target-network"
    assert settled.overrides[0].missing == ("after baseline", "before target-network")
    with pytest.raises(ProgressError):
        settle(
            Progress(),
            PHASES,
            "drain-workers",
            stack="s",
            added=Record(),
            by="me",
            skip_for="target-network",
        )


def test_a_newer_mark_replaces_the_older_one() -> None:
    first = Mark(phase="baseline", milestone="after", by="a")
    second = Mark(phase="baseline", milestone="after", by="b")
    assert Progress().with_marks([first]).with_marks([second]).marks == (second,)


def test_records_round_trip_and_damage_is_one_sentence() -> None:
    progress = finished("baseline")
    assert parse_progress(progress.as_output()) == progress
    assert parse_progress(None) == Progress()
    record = Record(marks=progress.marks, steps={"baseline": ("after",)})
    assert parse_record(record.to_json()) == record
    assert parse_record(None) == Record()
    with pytest.raises(ProgressError, match="not a progress record"):
        parse_progress({"marks": [{"phase": "x"}]})
    with pytest.raises(ProgressError, match="KUBESHIFT_RECORD"):
        parse_record("{not json")


def test_once_the_layout_is_known_only_sides_with_steps_are_needed() -> None:
    layout = {"baseline": (), "target-network": ("after",), "drain-workers": ("before", "after")}
    progress = Progress(
        marks=(
            Mark(phase="baseline", milestone="update", by="hand"),
            Mark(phase="target-network", milestone="update", by="hand"),
        ),
        steps=layout,
    )
    # baseline is finished by its update alone; target-network still needs its after-steps.
    assert missing(progress, PHASES, "target-network") == []
    assert missing(progress, PHASES, "drain-workers") == [
        "after target-network",
        "before drain-workers",
    ]
    done = progress.with_marks([Mark(phase="drain-workers", milestone="update", by="hand")])
    # retire-old-workers has no before-steps: drain-workers' after-steps are all it waits for.
    assert missing(done, PHASES, "retire-old-workers") == [
        "after target-network",
        "after drain-workers",
    ]


def test_phases_taken_back_lose_their_marks_and_a_later_update_is_refused_again() -> None:
    """``kubeshift back`` records the undone phases with the update that takes the stack
    back: their marks go (the history keeps who undid them), the earlier phase stays
    finished, and a hand-run update of a phase after it is refused until it is redone."""
    undo = Undo(phase="drain-workers", by="kubeshift back 1a2b", at="2026-12-02T08:00:00Z")
    whole = finished(*PHASES)
    settled, skipped = settle(
        whole, PHASES, "target-network", stack="s", added=Record(undone=(undo,)),
        by="kubeshift back 1a2b", skip_for=None,
    )  # fmt: skip
    assert skipped == []
    assert settled.finished("target-network") is not None
    assert settled.finished("drain-workers") is None
    assert settled.finished("retire-old-workers") is not None  # only what was undone goes
    assert settled.undone == (undo,)
    assert parse_progress(settled.as_output()) == settled  # the output reads back
    with pytest.raises(ProgressError, match="after drain-workers"):
        settle(
            settled, PHASES, "retire-old-workers", stack="s", added=Record(), by="by hand",
            skip_for=None,
        )  # fmt: skip


def test_an_undo_retried_after_a_crash_is_kept_once_and_a_later_one_again() -> None:
    """The update that takes a phase back, run again after its process died, finds the
    phase already taken back and adds nothing to the history; taken back again once it
    was redone, it is a second entry."""
    undo = Undo(phase="drain-workers", by="kubeshift back 1a2b", at="2026-12-02T08:00:00Z")
    once = finished(*PHASES).with_record(Record(undone=(undo,)))
    retried = once.with_record(Record(undone=(undo.model_copy(update={"at": "later"}),)))
    assert retried.undone == (undo,)
    redone = retried.with_marks([Mark(phase="drain-workers", milestone="update", by="run")])
    again = undo.model_copy(update={"by": "kubeshift back 3c4d"})
    assert redone.with_record(Record(undone=(again,))).undone == (undo, again)
