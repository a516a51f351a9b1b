"""etcd side of kubeshift: members, their health and quorum, and member moves.

Talks to etcd itself through its v3 gRPC-gateway JSON endpoints (``POST /v3/...``)
over HTTP(S) with client TLS, independent of the Kubernetes and AWS adapters. Gates
are pure functions of an observed ``ClusterView`` returning ``Pending``; actions take
explicit parameters and a dry-run flag, like the rest of the adapters.
"""
