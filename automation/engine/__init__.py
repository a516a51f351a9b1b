"""The Pulumi engine: the Automation API adapter, its locks, processes and torn files."""
