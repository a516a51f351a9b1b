"""What a shown line of a boot script keeps, and which credentials it loses."""

from __future__ import annotations

import pytest

from automation.core.masking import MASK, mask_credentials


@pytest.mark.parametrize(
    ("line", "secret", "kept"),
    [
        (
            "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef",
            "abcdef.0123456789abcdef",
            "kubeadm join 10.0.0.1:6443 --token ",
        ),
        ("kubeadm join api:6443 --token=s3cr3t-value", "s3cr3t-value", "--token="),
        (
            "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
            "wJalrXUtnFEMI/K7MDENG",
            "export AWS_SECRET_ACCESS_KEY=",
        ),
        ("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "export "),
        ('DB_PASSWORD="hunter2 with spaces" ./start', "hunter2", "./start"),
        ("bootstrapToken: q1w2e3.r4t5y6u7i8o9p0a1", "q1w2e3", "bootstrapToken: "),
        ("echo AKIAIOSFODNN7EXAMPLE > /tmp/id", "AKIAIOSFODNN7EXAMPLE", "> /tmp/id"),
        ("-----BEGIN RSA PRIVATE KEY-----", "PRIVATE KEY", ""),
    ],
)
def test_a_credential_is_masked_and_the_rest_of_its_line_kept(
    line: str, secret: str, kept: str
) -> None:
    masked = mask_credentials(line)
    assert secret not in masked and MASK in masked
    assert kept in masked


@pytest.mark.parametrize(
    "line",
    [
        "set -o errexit",
        "/opt/kops/bin/nodeup --conf=/opt/kops/conf/kube_env.yaml --v=8",
        "cat > /etc/kubeshift/node.env <<'EOF'",
        "KUBESHIFT_API_ENDPOINT=https://api.local-demo.example.internal",
    ],
)
def test_a_line_without_a_credential_is_unchanged(line: str) -> None:
    assert mask_credentials(line) == line
