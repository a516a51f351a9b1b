"""Hooks and gates as the scenarios use them: thin adapters from a ``HookContext``.

The libraries in ``automation.kube`` and ``automation.aws`` take explicit clients and
options; the functions here read what they need from the context (stack config,
runtime settings, stack outputs), call them, and turn their results into
``HookResult``/``Pending``. Scenario modules only compose these.
"""
