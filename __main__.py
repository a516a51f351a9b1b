"""kubeshift's Pulumi program: read the typed config, build the scenario's phase, export.

Run by hand per phase: ``pulumi config set kubeshift:phase <id> && pulumi up``.
"""

from components.program import main

main()
