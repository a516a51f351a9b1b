"""The sandbox's second world: a cluster as seed 001's Terraform modules built it.

A ``vpc`` module, a ``common`` one (the load balancers' security groups, the API and
ingress load balancers, the records), a ``control-plane`` one (a security group, a
launch template, an Auto Scaling group, an etcd volume and a fixed interface per
member, the members' identity) and a ``worker-common`` one (the workers' security group
and identity), then a ``workers`` module per instance type x AZ x capacity type, each a
launch template and a group. Names are the modules' (``<cluster>-<part>``), tags are the
cluster tag and ``Name`` beside the stack's own: nothing of kops's or kubeshift's to lean
on. Built with boto3 alone, no engine, no Pulumi state; what Terraform would record is
written as its v4 state file (:mod:`.state`), which ``runtime.terraform_state`` names.
"""
