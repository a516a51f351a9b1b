"""pytest plugin: tests that start a Go-built binary wait for its build, the others don't.

Why this exists: a cold CI run spends about half its time compiling kube-apiserver,
etcd, kwok, the pulumi CLI and two controllers. ``scripts/test`` starts that build in
the background and runs the tests at once; a test that needs a binary waits here for
its component, and the tests needing none (most of them) run meanwhile. Which
components a test needs is read from its markers (``controlplane``, ``etcd``,
``engine``, ``externaldns``, ``cloudcontroller``, ``rehearsal``). Items are ordered so
that the tests needing nothing come first and the rest in the order the build
finishes their components.

Waiting is on only while ``KUBESHIFT_TESTBIN_BUILD`` names the directory of a build in
progress (``scripts/test`` sets it): the build writes its log there as ``build.log``
and its exit status as ``exit`` when it ends. A component still missing once the build
has ended, or after the deadline, fails the test with the build log's tail. Without the
variable nothing waits: a missing binary fails the test as it always did.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Generator, Iterable
from pathlib import Path

import pytest

from automation.sandbox.binaries import cache_bin_dir, component_dir

BUILD_DIR_VARIABLE = "KUBESHIFT_TESTBIN_BUILD"
DEADLINE_SECONDS = 75 * 60.0
PROGRESS_EVERY_SECONDS = 60.0
POLL_SECONDS = 2.0

# In the order scripts/testbin builds them: the tests are ordered the same way.
BUILD_ORDER = ("etcd", "kubernetes", "kwok", "pulumi", "cloud-provider-aws", "external-dns")
CONTROL_PLANE = frozenset({"etcd", "kubernetes", "kwok"})  # the `testbin` fixture finds all
NEEDS = {
    "etcd": CONTROL_PLANE,
    "controlplane": CONTROL_PLANE,
    "engine": frozenset({"pulumi"}),
    "externaldns": frozenset({"external-dns"}),
    "cloudcontroller": frozenset({"cloud-provider-aws"}),
    # a sandbox; its cni-swap and overlay-switch stacks also run the cloud controller
    "rehearsal": CONTROL_PLANE | {"pulumi"},
}
# The fixtures that find the binaries, and the marker a test using them must carry.
FIXTURES = {"testbin": "controlplane", "pulumi_engine": "engine", "rehearsal": "rehearsal"}
_FAILED = pytest.StashKey[str]()


def needs(item: pytest.Item) -> set[str]:
    """The components ``item`` starts a binary of, by its markers."""
    found: set[str] = set()
    for marker in item.iter_markers():
        found |= NEEDS.get(marker.name, frozenset())
    return found


def unmarked(item: pytest.Item) -> list[str]:
    """The binary-finding fixtures ``item`` uses (directly or not) whose components its
    markers do not name: such a test would run before its binaries in the shard of the
    tests that need none."""
    have = needs(item)
    return [
        f"{fixture} (mark it {marker})"
        for fixture, marker in FIXTURES.items()
        if fixture in getattr(item, "fixturenames", ()) and not NEEDS[marker] <= have
    ]


def _stage(item: pytest.Item) -> int:
    """0 for a test needing no binary, else 1 + the last of its components built; the
    rehearsals last, in the order their conftest gave them (one sandbox at a time)."""
    if item.get_closest_marker("rehearsal"):
        return 1 + len(BUILD_ORDER)
    wanted = needs(item)
    return 1 + max(BUILD_ORDER.index(c) for c in wanted) if wanted else 0


def built(component: str) -> bool:
    """Whether ``component``'s build finished (its cache directory is renamed into place
    only when complete, stamp included)."""
    if component == "pulumi":
        return (cache_bin_dir().parent / ".build-pulumi.json").is_file()
    return (component_dir(component) / ".testbin.json").is_file()


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no build log at {log})"


def wait_for(components: Iterable[str], build: Path) -> str | None:
    """Wait until every component is built; return why not when the build ended
    without it or the deadline passed (None when all are there)."""
    wanted = sorted(components, key=BUILD_ORDER.index)
    began = time.monotonic()
    told = began
    while True:
        missing = [c for c in wanted if not built(c)]
        if not missing:
            return None
        waited = time.monotonic() - began
        if (build / "exit").is_file():
            status = (build / "exit").read_text().strip()
            return (
                f"the background build ended (exit {status}) without "
                f"{', '.join(missing)}; its log ends:\n{_tail(build / 'build.log')}"
            )
        if waited > DEADLINE_SECONDS:
            return (
                f"{', '.join(missing)} not built after {waited / 60:.0f} min; "
                f"the build log ends:\n{_tail(build / 'build.log')}"
            )
        if time.monotonic() - told >= PROGRESS_EVERY_SECONDS:
            told = time.monotonic()
            stderr = sys.__stderr__ or sys.stderr  # past pytest's capture when there is one
            stderr.write(
                f"\n[testbin] waiting {waited:.0f}s for {', '.join(missing)} "
                f"(deadline {DEADLINE_SECONDS / 60:.0f} min)\n"
            )
            stderr.flush()
        time.sleep(POLL_SECONDS)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test that finds binaries without saying so in its markers; then order
    the tests needing no binary first, the rest by the build order (stable: the order
    each group had is kept, the rehearsal modules' included)."""
    wrong = [f"{i.nodeid} uses {', '.join(found)}" for i in items if (found := unmarked(i))]
    if wrong:
        raise pytest.UsageError(
            "tests start Go-built binaries without the marker that says so (scripts/test "
            "would run them before the binaries are built): " + "; ".join(wrong)
        )
    items.sort(key=_stage)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    """Wait outside the test's own timeout (pytest-timeout starts inside this)."""
    build = os.environ.get(BUILD_DIR_VARIABLE)
    wanted = needs(item)
    if build and wanted:
        why = wait_for(wanted, Path(build))
        if why is not None:
            item.stash[_FAILED] = why
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    why = item.stash.get(_FAILED, None)
    if why is not None:
        pytest.fail(f"waited for the test binaries in vain: {why}", pytrace=False)
