"""Label selectors as text, read as the API server reads them (the session's real one
is the referee), and when one selector is sure to select all another selects."""

from __future__ import annotations

import itertools

import pytest
from kubernetes.client import CoreV1Api, V1ConfigMap, V1ObjectMeta
from kubernetes.client.exceptions import ApiException

from automation.kube.clients import KubeClients
from automation.kube.selector_text import check, covers, parse

READABLE = [
    "",
    "app=web",
    "app==web",
    "app!=web",
    "app",
    "!app",
    "app in (web,db)",
    "app notin (web, db)",
    " app = web , tier ",
    "kubeshift.io/generation=cni",
    "node-role.kubernetes.io/control-plane",
    "app=",
    "rank>3",
    "rank<1",
    "app=web\n",
    "app in ()",
]
UNREADABLE = [
    "app=web,",
    ",app",
    "app=web,,tier",
    "rank<-1",
    "app in (web",
    "app=web tier",
    "rank>x",
    "-app=web",
    "Team.io/app=web",
    "app=" + "x" * 64,
    "app=we b",
    "app=-web",
]


@pytest.mark.controlplane
@pytest.mark.parametrize("text", READABLE)
def test_a_selector_the_api_server_reads_is_read(kube: KubeClients, text: str) -> None:
    CoreV1Api(kube.api_client).list_namespaced_config_map("default", label_selector=text)
    assert check(text) == text


@pytest.mark.controlplane
@pytest.mark.parametrize("text", UNREADABLE)
def test_a_selector_the_api_server_refuses_is_refused(kube: KubeClients, text: str) -> None:
    with pytest.raises(ApiException) as refused:
        CoreV1Api(kube.api_client).list_namespaced_config_map("default", label_selector=text)
    assert refused.value.status == 400
    with pytest.raises(ValueError, match="not a label selector"):
        check(text)


LABEL_SETS = [
    {},
    {"gen": "cni"},
    {"gen": "old"},
    {"gen": "cni", "role": "cp"},
    {"gen": "old", "group": "a"},
    {"gen": "", "group": "b"},
    {"group": "a"},
]
SELECTORS = [
    "",
    "gen=cni",
    "gen!=cni",
    "gen",
    "!gen",
    "gen in (cni,old)",
    "gen notin (old)",
    "gen notin (cni,old)",
    "gen=cni,!role",
    "group=a",
    "gen=old,group=a",
    "gen=",
    "gen in ()",
]


@pytest.mark.controlplane
def test_a_selector_said_to_cover_another_selects_all_it_selects(
    kube: KubeClients, namespace: str
) -> None:
    core = CoreV1Api(kube.api_client)
    created = {f"labels-{index}" for index in range(len(LABEL_SETS))}
    for index, labels in enumerate(LABEL_SETS):
        meta = V1ObjectMeta(name=f"labels-{index}", labels=labels)
        core.create_namespaced_config_map(namespace, V1ConfigMap(metadata=meta))
    # Only the test's own: the controller-manager publishes kube-root-ca.crt into a new
    # namespace whenever it gets to it, so one list may see it and the next not.
    selected = {
        text: created
        & {
            m.metadata.name
            for m in core.list_namespaced_config_map(namespace, label_selector=text).items
        }
        for text in SELECTORS
    }
    covering = 0
    for broad, narrow in itertools.permutations(SELECTORS, 2):
        if covers(parse(broad), parse(narrow)):
            covering += 1
            assert selected[narrow] <= selected[broad], (broad, narrow)
    assert covering >= 15  # the check is exercised, not vacuous


@pytest.mark.parametrize(
    ("broad", "narrow", "sure"),
    [
        ("gen=cni", "gen=cni", True),
        ("gen", "gen=cni", True),
        ("", "gen=cni", True),
        ("gen in (cni,old)", "gen=cni", True),
        ("gen notin (old)", "gen=cni", True),
        ("gen!=old", "!gen", True),
        ("gen!=cni", "gen=cni", False),
        ("!role", "gen=cni", False),  # a new node may carry the role: only nodes tell
        ("gen=cni,group=a", "gen=cni", False),
        ("gen notin (cni,old)", "gen notin (old)", False),
    ],
)
def test_what_is_sure_to_be_covered(broad: str, narrow: str, sure: bool) -> None:
    assert covers(parse(broad), parse(narrow)) is sure
