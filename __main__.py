"""kubeshift's Pulumi program: read the typed config, build the scenario's phase, export.

Run by hand per phase: ``kubeshift hooks <id> --before``, ``pulumi config set
kubeshift:phase <id> && pulumi up``, ``kubeshift hooks <id> --after`` (README, "By hand").
"""

from components.program import main

main()
