"""The environment variables kubeshift sets for the program, besides its config.

In a module of their own, free of the Pulumi SDK, so that what only needs their names
(the render cache deciding whether a render may be reused) does not import it.
"""

from __future__ import annotations

IMPORTS_VAR = "KUBESHIFT_IMPORTS"
"""Path of adoption's import file: ids for the first phase's resources."""
RUN_VAR = "KUBESHIFT_RUN_ID"
"""The ``kubeshift run`` driving this update (by-hand updates have none)."""
RECORD_VAR = "KUBESHIFT_RECORD"
"""JSON list of progress marks kubeshift adds with this update."""
RECORD_ONLY_VAR = "KUBESHIFT_RECORD_ONLY"
""""1": this update only records marks."""

PROGRAM_VARS = (IMPORTS_VAR, RUN_VAR, RECORD_VAR, RECORD_ONLY_VAR)
