"""Root test configuration: registers the fixture plugins that start real services.

Each plugin lives in ``tests/support/`` and owns one service (control plane, moto
server, Pulumi engine). Session-scoped fixtures are declared here once so that every
test directory shares a single instance of each service.
"""

pytest_plugins: list[str] = [
    "tests.support.moto_fixtures",
    "tests.support.controlplane_fixtures",
    "tests.support.kube_fixtures",
    "tests.support.engine_fixtures",
    "tests.support.ec2_world",
    "tests.support.kops_world",
    "tests.support.testbin_wait",
]
