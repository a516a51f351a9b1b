"""User data: kubelet flags are deterministic; scripts are base64 for launch templates."""

from __future__ import annotations

import base64

from components.contract import userdata


def test_kubelet_flags_sorted() -> None:
    flags = userdata.kubelet_flags(
        {"b": "2", "a": "1"}, [("dedicated", "", "NoExecute"), ("x", "y", "NoSchedule")]
    )
    assert (
        flags == "--node-labels=a=1,b=2 --register-with-taints=dedicated:NoExecute,x=y:NoSchedule"
    )
    assert userdata.kubelet_flags({}, []) == ""


def test_script_quotes_values_and_encodes() -> None:
    script = userdata.node_script(
        cluster_name="prod", api_endpoint="https://api:6443", labels={"a": "1"}, taints=[]
    )
    assert "KUBELET_EXTRA_ARGS=--node-labels=a=1" in script
    assert script.startswith("#!/bin/bash")
    assert base64.b64decode(userdata.encode(script)).decode() == script
