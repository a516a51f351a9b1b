"""Draining nodes, kubectl-style but concurrent: plan (pure filters), then act (evictions).

``filters`` decides per pod, ``evict`` talks to the Eviction API, ``budgets`` follows
PodDisruptionBudgets so evictions are only tried when a budget allows them,
``evictor`` evicts a set of pods with all of that (the drain and the ingress move both
use it), ``run`` drives many nodes at once under a global disruption budget and
returns a ``summary``.
"""

from automation.kube.drain.filters import DrainOptions, PodVerdict, Verdict, plan_pods
from automation.kube.drain.run import DrainLimits, DrainSummary, drain_nodes, plan_drain

__all__ = [
    "DrainLimits",
    "DrainOptions",
    "DrainSummary",
    "PodVerdict",
    "Verdict",
    "drain_nodes",
    "plan_drain",
    "plan_pods",
]
