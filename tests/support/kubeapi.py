"""Small facts about the kubernetes Python client (v37) that every helper must respect.

Its generated ``patch_*`` methods default to ``application/json-patch+json`` (the first
JSON type in their list), which rejects a dict body. Pass
``_content_type=STRATEGIC_MERGE`` with dict patches.
"""

STRATEGIC_MERGE = "application/strategic-merge-patch+json"
