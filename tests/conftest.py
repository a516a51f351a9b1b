"""Root test configuration: registers the fixture plugins that start real services.

Each plugin lives in ``tests/support/`` and owns one service (control plane, moto
server, Pulumi engine). Session-scoped fixtures are declared here once so that every
test directory shares a single instance of each service.
"""

import pytest
from hypothesis import settings

settings.register_profile("kubeshift", derandomize=True, database=None, deadline=None)
settings.load_profile("kubeshift")
"""Property tests draw the same examples on every run (CI must be deterministic) and
write no example database into the checkout; no per-example deadline, as a loaded CI
machine is slower, and each test's own work is bounded by its example count."""

pytest_plugins: list[str] = [
    "tests.support.moto_fixtures",
    "tests.support.controlplane_fixtures",
    "tests.support.kube_fixtures",
    "tests.support.engine_fixtures",
    "tests.support.ec2_world",
    "tests.support.kops_world",
    "tests.support.testbin_wait",
]


@pytest.fixture(autouse=True)
def _no_backend_of_the_developer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test never reaches the developer's own Pulumi backend: where kubeshift keeps a
    journal follows the backend (``automation.config.state_place``), and a test that
    wants one sets it."""
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
