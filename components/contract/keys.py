"""The stack file's top-level keys: what kubeshift reads under ``kubeshift:`` and ``aws:``."""

from __future__ import annotations

from components.contract import kept_file

PREFIX = "kubeshift:"
SCENARIO_KEY = "kubeshift:scenario"
PHASE_KEY = "kubeshift:phase"
CLUSTER_KEY = "kubeshift:cluster"
MIGRATION_KEY = "kubeshift:migration"
RUNTIME_KEY = "kubeshift:runtime"
SKIP_PROGRESS_KEY = "kubeshift:skipProgressCheck"
KNOWN_KEYS = (
    SCENARIO_KEY,
    PHASE_KEY,
    CLUSTER_KEY,
    MIGRATION_KEY,
    RUNTIME_KEY,
    SKIP_PROGRESS_KEY,
    kept_file.KEPT_KEY,
)
REGION_KEY = "aws:region"
