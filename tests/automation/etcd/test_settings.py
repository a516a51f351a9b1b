"""``kubeshift:runtime.etcd``: optional, strict, and every mistake one sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from automation.config.settings import load_runtime_settings
from automation.core.errors import ConfigError


def load(etcd: Any) -> Any:
    return load_runtime_settings({"kubeshift:runtime": {"etcd": etcd}}).etcd


def test_etcd_is_optional_with_documented_defaults() -> None:
    assert load_runtime_settings({}).etcd is None
    settings = load({"endpoints": ["https://10.0.1.10:2379/"], "ca_file": "/pki/ca.crt"})
    assert settings.endpoints == ["https://10.0.1.10:2379"]
    assert settings.ca_file == Path("/pki/ca.crt")
    assert (settings.max_raft_lag, settings.timeout, settings.connect_timeout) == (1000, 10.0, 3.0)


def test_members_are_reached_at_their_vpc_address_unless_a_range_is_mapped() -> None:
    plain = load({})
    assert plain.endpoints == []
    assert plain.client_url("10.0.1.10") == "https://10.0.1.10:2379"
    assert plain.peer_url("10.0.1.10") == "https://10.0.1.10:2380"
    mapped = load(
        {
            "scheme": "http",
            "client_port": 32379,
            "peer_port": 32380,
            "address_map": {"10.20.0.0/16": "127.21.0.0/16"},
        }
    )
    assert mapped.client_url("10.20.3.12") == "http://127.21.3.12:32379"
    assert mapped.peer_url("10.0.3.12") == "http://10.0.3.12:32380"  # outside every range


@pytest.mark.parametrize(
    ("etcd", "message"),
    [
        (
            {"address_map": {"10.0.0.0/16": "127.10.0.0/24"}},
            "kubeshift:runtime.etcd.address_map is invalid: 10.0.0.0/16 and 127.10.0.0/24 "
            "differ in size; map equal ranges",
        ),
        ({"scheme": "grpc"}, "kubeshift:runtime.etcd.scheme"),
        ({"peer_port": 0}, "kubeshift:runtime.etcd.peer_port"),
        (
            {"endpoints": ["10.0.1.10:2379"]},
            "kubeshift:runtime.etcd.endpoints is invalid: '10.0.1.10:2379': use "
            'http(s)://host[:port] (got ["10.0.1.10:2379"]).',
        ),
        (
            {"endpoints": ["https://a:2379"], "key_file": "/k"},
            "kubeshift:runtime.etcd is invalid: cert_file and key_file go together; give both "
            'or neither (got {"endpoints": ["https://a:2379"], "key_file": "/k"}).',
        ),
        (
            {"endpoints": ["https://a:2379"], "max_raft_lg": 5},
            "kubeshift:runtime.etcd.max_raft_lg is not a known setting; did you mean "
            "'max_raft_lag'?",
        ),
        ({"endpoints": ["https://a:2379"], "timeout": 0}, "kubeshift:runtime.etcd.timeout"),
    ],
)
def test_mistakes_are_one_sentence(etcd: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(etcd)
    assert str(caught.value).startswith(message)
