"""STAND-IN for pulumi-aws, private to the sandbox: an ``aws`` resource provider over moto.

pulumi-aws's plugin cannot be installed on the machines kubeshift is rehearsed on, so
the sandbox installs this package as a plugin named ``aws`` into its own
``PULUMI_HOME``. It serves every ``aws:*`` type kubeshift's program declares by
calling boto3 against the sandbox's moto server. Replacement is decided as pulumi-aws
decides it: each type carries the properties the Terraform AWS provider's schema marks
``ForceNew``, with the source file each entry comes from. It is never used against
AWS and never on the production path.
"""
