"""The rehearsal sandbox: a local stand-in for one AWS account and its clusters.

Everything here runs on 127.0.0.1 and exists only to rehearse a migration before it
runs on production: moto as the AWS account, real control planes with kwok nodes, a
node bridge that plays the cloud controller and kubelet, seeded workloads, and the
stand-in ``aws`` resource provider (:mod:`automation.sandbox.provider`). Nothing on the
production path imports this package.
"""
