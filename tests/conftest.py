"""Root test configuration: registers the fixture plugins that start real services.

Each plugin lives in ``tests/support/`` and owns one service (control plane, moto
server, Pulumi engine). Session-scoped fixtures are declared here once so that every
test directory shares a single instance of each service.
"""

import pytest

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
