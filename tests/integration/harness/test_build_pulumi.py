"""scripts/build-pulumi: the other clouds' drivers taken out, and when a cached build counts."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import load_script

GO_SOURCE = """package diy

import (
\t"context"

\t"gocloud.dev/blob"
\t"gocloud.dev/blob/azureblob"  // driver for azblob://
\t_ "gocloud.dev/blob/s3blob"   // driver for s3://
\tgcs "gocloud.dev/blob/gcsblob"
)

func open(ctx context.Context, scheme string) error {
\tmux := blob.DefaultURLMux()
\tif scheme == gcs.Scheme {
\t\tif err := gcsOnly(ctx); err != nil {

\t\t\treturn err
\t\t}
\t}
\tswitch scheme {
\tcase azureblob.Scheme:
\t\tmux = nil

\t\treturn nil
\tdefault:
\t\treturn use(mux)
\t}
}
"""

TRIM_TO = """package diy

import (
\t"context"

\t"gocloud.dev/blob"
\t_ "gocloud.dev/blob/s3blob"   // driver for s3://
)

func open(ctx context.Context, scheme string) error {
\tmux := blob.DefaultURLMux()
\tswitch scheme {
\tdefault:
\t\treturn use(mux)
\t}
}
"""


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("build-pulumi")


def _trim(script: ModuleType, imports: tuple[str, ...], blocks: tuple[str, ...]) -> object:
    return script.Trim(script.CLI_MODULE, "backend/diy/backend.go", imports=imports, blocks=blocks)


def test_a_trim_takes_out_its_imports_an_if_and_a_case_and_nothing_else(
    script: ModuleType,
) -> None:
    trim = _trim(
        script,
        ("gocloud.dev/blob/azureblob", "gocloud.dev/blob/gcsblob"),
        ("if scheme == gcs.Scheme {", "case azureblob.Scheme:"),
    )

    assert script.trimmed(GO_SOURCE, trim) == TRIM_TO


@pytest.mark.parametrize(
    ("imports", "blocks"),
    [
        (("gocloud.dev/blob/hashivault",), ()),
        ((), ("if scheme == other.Scheme {",)),
        (("gocloud.dev/blob",), ()),  # imported twice: which line goes is not clear
    ],
)
def test_a_trim_that_does_not_match_the_source_exactly_stops_the_build(
    script: ModuleType, imports: tuple[str, ...], blocks: tuple[str, ...]
) -> None:
    with pytest.raises(SystemExit, match="not once"):
        script.trimmed(GO_SOURCE + 'import "gocloud.dev/blob"\n', _trim(script, imports, blocks))


def test_a_line_is_replaced_where_it_stands_and_text_is_appended(script: ModuleType) -> None:
    trim = script.Trim(
        "example.com/m",
        "f.go",
        lines=(("func init() {", "func load() {"),),
        appended="\nfunc Load() { load() }\n",
    )

    out = script.trimmed("package f\n\nfunc init() {\n}\n", trim)

    assert out == "package f\n\nfunc load() {\n}\n\nfunc Load() { load() }\n"
    with pytest.raises(SystemExit, match="not once"):
        script.trimmed("package f\n", trim)


def test_every_word_list_loads_when_first_needed_not_at_start(script: ModuleType) -> None:
    """Both copies of zxcvbn-go lose their init; their matcher loads the lists itself."""
    lazy = {(t.module, t.path) for t in script.LAZY_WORD_LISTS if "func init() {" in t.blocks}
    renamed = {(t.module, t.path) for t in script.LAZY_WORD_LISTS if t.appended}

    assert {module for module, _ in lazy} == {m for m, _ in renamed} and len(lazy) == 2


def test_the_other_clouds_trims_edit_the_cli_module_and_keep_aws(script: ModuleType) -> None:
    """The S3 backend and AWS KMS secrets stay: a team backend (S3) depends on them."""
    dropped = {path for trim in script.OTHER_CLOUDS for path in trim.imports}

    assert all(trim.module == script.CLI_MODULE for trim in script.OTHER_CLOUDS)
    assert all(not trim.path.startswith("/") and trim.path.endswith(".go") for trim in script.TRIMS)
    assert not any("s3blob" in path or "awskms" in path for path in dropped)
    assert {"gocloud.dev/blob/gcsblob", "gocloud.dev/secrets/gcpkms"} <= dropped


def _stamp(bin_dir: Path, inputs: str) -> Path:
    bin_dir.mkdir(parents=True)
    stamp = bin_dir.parent / ".build-pulumi.json"
    stamp.write_text(json.dumps({"version": "v0", "inputs": inputs}))
    return stamp


def test_a_cached_build_from_other_inputs_loses_its_stamp_before_anything_builds(
    script: ModuleType, tmp_path: Path
) -> None:
    """Tests wait for the stamp: a stale one must not let them start on the old CLI."""
    stale = _stamp(tmp_path / "old" / "bin", "0123456789abcdef")
    current = _stamp(tmp_path / "new" / "bin", script.inputs_digest())
    for name in ("pulumi", *script.SDK_SCRIPTS.values(), "pulumi-language-python"):
        path = current.parent / "bin" / name
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)

    script.invalidate_stale(stale.parent / "bin")
    script.invalidate_stale(current.parent / "bin")

    assert not stale.exists()
    assert current.exists()
    assert script.is_complete(current.parent / "bin")


def test_the_inputs_digest_follows_the_trims(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = script.inputs_digest()
    monkeypatch.setattr(script, "TRIMS", script.OTHER_CLOUDS)

    assert script.inputs_digest() != before
