"""Kubernetes side of kubeshift: clients, node hooks, the drain, ingress moves, gates, probe.

Everything here is a library function with explicit parameters (clients, options,
reporter, dry-run) returning typed results; phases wire them in as hooks and gates.
"""
