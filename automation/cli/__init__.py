"""The ``kubeshift`` command line."""
