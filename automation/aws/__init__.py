"""AWS hooks and gates on boto3: node lookup, DNS cutover, target health, routes, grants.

Library functions with explicit parameters (clients, options, reporter, dry-run) that
return typed results; the scenarios wrap them as hooks and gates. Clients come from
``automation.aws.clients`` only.
"""
