"""The contract both sides read: the stack file's models, keys and checks, the scenario
registry and specs, names, tags, policy, the progress record and the run marker.

Nothing here imports Pulumi: the program (``components/``) and kubeshift's automation
(``automation/``) read the same vocabulary, and offline review needs no engine.
"""
