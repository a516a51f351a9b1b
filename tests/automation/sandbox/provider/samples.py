"""One or more resources of every type the stand-in serves, made on moto and read back.

Each sample is a type's declared inputs in the program's shapes (what each type's own
test declares), over a world of prerequisites made with boto3. A type whose read reports
some attributes only in some cases (a route's target, a record's routing policy) has one
sample per case, so that together its samples show every attribute its read can report.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from automation.sandbox.provider.model import REGISTRY, Aws, Props, Request
from tests.automation.sandbox.provider.test_iam import ASSUME_EC2, DESCRIBE
from tests.support.moto_fixtures import MotoServer

AZ = "eu-west-1a"


@dataclass(frozen=True)
class Sample:
    """Declared inputs, and what is done to the made resource out of band before it is
    read (an address associated elsewhere)."""

    declared: Props
    afterwards: Callable[[str], object] | None = None


@dataclass
class World:
    """Prerequisites made with boto3 on first use, shared by one test's samples."""

    moto: MotoServer

    @property
    def ec2(self) -> Any:
        return self.moto.client("ec2")

    @cached_property
    def vpc(self) -> str:
        return self.make_vpc("10.0.0.0/16")

    def make_vpc(self, cidr: str) -> str:
        return str(self.ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"])

    @cached_property
    def subnets(self) -> list[str]:
        return [
            self.ec2.create_subnet(
                VpcId=self.vpc, CidrBlock=f"10.0.{i}.0/24", AvailabilityZone=f"eu-west-1{az}"
            )["Subnet"]["SubnetId"]
            for i, az in enumerate("ab", start=1)
        ]

    @cached_property
    def group(self) -> str:
        made = self.ec2.create_security_group(GroupName="world", Description="w", VpcId=self.vpc)
        return str(made["GroupId"])

    @cached_property
    def prefix_list(self) -> str:
        made = self.ec2.create_managed_prefix_list(
            PrefixListName="world", MaxEntries=2, AddressFamily="IPv4"
        )
        return str(made["PrefixList"]["PrefixListId"])

    @cached_property
    def internet_gateway(self) -> str:
        igw = self.ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
        self.ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=self.vpc)
        return str(igw)

    @cached_property
    def route_table(self) -> str:
        return str(self.ec2.create_route_table(VpcId=self.vpc)["RouteTable"]["RouteTableId"])

    def peering(self, accept: bool) -> str:
        pcx = self.ec2.create_vpc_peering_connection(
            VpcId=self.make_vpc("10.1.0.0/16"), PeerVpcId=self.make_vpc("10.2.0.0/16")
        )["VpcPeeringConnection"]["VpcPeeringConnectionId"]
        if accept:
            self.ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=pcx)
        return str(pcx)

    @cached_property
    def launch_template(self) -> str:
        data = {"ImageId": "ami-12c6146b", "UserData": "IyEvYmluL3NoCg=="}
        made = self.ec2.create_launch_template(LaunchTemplateName="world", LaunchTemplateData=data)
        return str(made["LaunchTemplate"]["LaunchTemplateId"])

    @cached_property
    def zone(self) -> str:
        made = self.moto.client("route53").create_hosted_zone(
            Name="example.com", CallerReference="world"
        )
        return str(made["HostedZone"]["Id"]).rsplit("/", 1)[-1]

    @cached_property
    def health_check(self) -> str:
        made = self.moto.client("route53").create_health_check(
            CallerReference="world",
            HealthCheckConfig={"Type": "TCP", "IPAddress": "10.0.1.11", "Port": 443},
        )
        return str(made["HealthCheck"]["Id"])

    @cached_property
    def delegation_set(self) -> str:
        made = self.moto.client("route53").create_reusable_delegation_set(CallerReference="w")
        return str(made["DelegationSet"]["Id"]).rsplit("/", 1)[-1]

    @cached_property
    def role(self) -> str:
        self.moto.client("iam").create_role(RoleName="world", AssumeRolePolicyDocument=ASSUME_EC2)
        return "world"

    @cached_property
    def policy(self) -> str:
        made = self.moto.client("iam").create_policy(PolicyName="world", PolicyDocument=DESCRIBE)
        return str(made["Policy"]["Arn"])

    @cached_property
    def certificate(self) -> str:
        made = self.moto.client("acm").request_certificate(DomainName="api.example.com")
        return str(made["CertificateArn"])

    @cached_property
    def load_balancer(self) -> str:
        made = self.moto.client("elbv2").create_load_balancer(
            Name="world", Type="network", Scheme="internal", Subnets=self.subnets
        )
        return str(made["LoadBalancers"][0]["LoadBalancerArn"])

    @cached_property
    def target_group(self) -> str:
        made = self.moto.client("elbv2").create_target_group(
            Name="world", Protocol="TCP", Port=443, VpcId=self.vpc, TargetType="instance"
        )
        return str(made["TargetGroups"][0]["TargetGroupArn"])

    @cached_property
    def auto_scaling_group(self) -> str:
        self.moto.client("autoscaling").create_auto_scaling_group(
            AutoScalingGroupName="world",
            LaunchTemplate={"LaunchTemplateId": self.launch_template, "Version": "$Latest"},
            MinSize=0,
            MaxSize=1,
            VPCZoneIdentifier=self.subnets[0],
        )
        return "world"


def _tags(name: str) -> dict[str, str]:
    return {"Name": name, "kubeshift.io/cluster": "shop"}


def _vpc(world: World) -> list[Props]:
    return [{"cidrBlock": "10.9.0.0/16", "enableDnsHostnames": True, "tags": _tags("net")}]


def _subnet(world: World) -> list[Props]:
    declared = {"vpcId": world.vpc, "cidrBlock": "10.0.9.0/24", "availabilityZone": AZ}
    return [{**declared, "mapPublicIpOnLaunch": True, "tags": _tags("subnet")}]


def _reservation(world: World) -> list[Props]:
    return [
        {
            "subnetId": world.subnets[0],
            "cidrBlock": "10.0.1.10/32",
            "reservationType": "explicit",
            "description": "etcd member 1",
        }
    ]


def _internet_gateway(world: World) -> list[Props]:
    return [{"vpcId": world.make_vpc("10.3.0.0/16"), "tags": _tags("igw")}]


def _eip(world: World) -> list[Props | Sample]:
    ec2 = world.ec2
    eni = ec2.create_network_interface(SubnetId=world.subnets[0])["NetworkInterface"]
    instance = ec2.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1)
    return [
        {"domain": "vpc", "tags": _tags("eip")},
        Sample(
            {"domain": "vpc"},
            lambda id_: ec2.associate_address(
                AllocationId=id_, NetworkInterfaceId=eni["NetworkInterfaceId"]
            ),
        ),
        Sample(
            {"domain": "vpc"},
            lambda id_: ec2.associate_address(
                AllocationId=id_, InstanceId=instance["Instances"][0]["InstanceId"]
            ),
        ),
    ]


def _nat_gateway(world: World) -> list[Props]:
    world.internet_gateway  # noqa: B018  (a public NAT gateway's VPC has one)
    allocation = world.ec2.allocate_address(Domain="vpc")["AllocationId"]
    return [{"allocationId": allocation, "subnetId": world.subnets[0], "tags": _tags("nat")}]


def _route_table(world: World) -> list[Props]:
    return [{"vpcId": world.vpc, "tags": _tags("private")}]


def _route(world: World) -> list[Props]:
    ec2, table = world.ec2, world.route_table
    nat = ec2.create_nat_gateway(
        SubnetId=world.subnets[0], AllocationId=ec2.allocate_address(Domain="vpc")["AllocationId"]
    )["NatGateway"]["NatGatewayId"]
    eni = ec2.create_network_interface(SubnetId=world.subnets[0])["NetworkInterface"]
    igw = world.internet_gateway
    return [
        {"routeTableId": table, "destinationCidrBlock": "0.0.0.0/0", "gatewayId": igw},
        {"routeTableId": table, "destinationCidrBlock": "10.8.0.0/16", "natGatewayId": nat},
        {
            "routeTableId": table,
            "destinationCidrBlock": "10.7.0.0/16",
            "networkInterfaceId": eni["NetworkInterfaceId"],
        },
        {
            "routeTableId": table,
            "destinationCidrBlock": "10.6.0.0/16",
            "vpcPeeringConnectionId": world.peering(accept=True),
        },
    ]  # fmt: skip


def _association(world: World) -> list[Props]:
    return [{"routeTableId": world.route_table, "subnetId": world.subnets[0]}]


def _peering(world: World) -> list[Props]:
    return [
        {
            "vpcId": world.make_vpc("10.4.0.0/16"),
            "peerVpcId": world.make_vpc("10.5.0.0/16"),
            "autoAccept": True,
            "tags": _tags("peering"),
        }
    ]


def _accepter(world: World) -> list[Props]:
    pcx = world.peering(accept=False)
    return [{"vpcPeeringConnectionId": pcx, "autoAccept": True, "tags": _tags("accepter")}]


def _peering_options(world: World) -> list[Props]:
    dns_on = {"allowRemoteVpcDnsResolution": True}
    pcx = world.peering(accept=True)
    return [{"vpcPeeringConnectionId": pcx, "accepter": dns_on, "requester": dns_on}]


def _security_group(world: World) -> list[Props]:
    declared = {"name": "shop-nodes", "description": "nodes", "vpcId": world.vpc}
    return [
        {**declared, "revokeRulesOnDelete": True, "tags": _tags("nodes")},
        {"namePrefix": "shop-masters-", "vpcId": world.vpc},
    ]


def _rules(world: World) -> list[Props]:
    rule = {"securityGroupId": world.group, "ipProtocol": "tcp", "fromPort": 443, "toPort": 443}
    return [
        {**rule, "cidrIpv4": "10.0.0.0/16", "description": "api", "tags": _tags("api")},
        {**rule, "referencedSecurityGroupId": world.group},
        {**rule, "cidrIpv6": "2001:db8::/64"},
        {**rule, "prefixListId": world.prefix_list},
    ]


def _launch_template(world: World) -> list[Props]:
    user_data = base64.b64encode(b"#!/bin/sh\necho join\n").decode()
    return [
        {
            "name": "shop-workers",
            "description": "workers",
            "imageId": "ami-12c6146b",
            "instanceType": "m6i.large",
            "keyName": "shop",
            "ebsOptimized": "true",
            "userData": user_data,
            "iamInstanceProfile": {"name": "shop-node"},
            "vpcSecurityGroupIds": [world.group],
            "metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required"},
            "blockDeviceMappings": [
                {"deviceName": "/dev/xvda", "ebs": {"volumeSize": 50, "volumeType": "gp3"}}
            ],
            "networkInterfaces": [{"deviceIndex": 0, "subnetId": world.subnets[0]}],
            "tagSpecifications": [{"resourceType": "instance", "tags": _tags("worker")}],
            "updateDefaultVersion": True,
            "tags": _tags("workers"),
            **_launch_settings(),
        },
        {"namePrefix": "shop-masters-", "imageId": "ami-12c6146b"},
    ]


def _launch_settings() -> Props:
    """Launch data the program does not declare but a kops-made template may hold."""
    return {
        "monitoring": {"enabled": True},
        "creditSpecification": {"cpuCredits": "unlimited"},
        "cpuOptions": {"coreCount": 2, "threadsPerCore": 1},
        "capacityReservationSpecification": {"capacityReservationPreference": "open"},
        "instanceMarketOptions": {"marketType": "spot", "spotOptions": {"maxPrice": "0.05"}},
        "disableApiStop": True,
        "disableApiTermination": True,
        "enclaveOptions": {"enabled": False},
        "hibernationOptions": {"configured": False},
        "instanceInitiatedShutdownBehavior": "terminate",
        "kernelId": "aki-12345678",
        "ramDiskId": "ari-12345678",
        "maintenanceOptions": {"autoRecovery": "default"},
        "placement": {"tenancy": "default", "groupName": "shop-spread"},
    }


def _interface(world: World) -> list[Props]:
    return [
        {
            "subnetId": world.subnets[0],
            "description": "etcd member 0",
            "privateIps": ["10.0.1.20"],
            "securityGroups": [world.group],
            "sourceDestCheck": False,
            "tags": _tags("member-0"),
        }
    ]


def _volume(world: World) -> list[Props]:
    source = world.ec2.create_volume(AvailabilityZone=AZ, Size=8)["VolumeId"]
    snapshot = world.ec2.create_snapshot(VolumeId=source)["SnapshotId"]
    return [
        {"availabilityZone": AZ, "snapshotId": snapshot},
        {
            "availabilityZone": AZ,
            "size": 20,
            "type": "gp3",
            "iops": 3000,
            "throughput": 125,
            "encrypted": True,
            "finalSnapshot": False,
            "tags": _tags("etcd"),
        },
    ]


def _group(world: World) -> list[Props]:
    tags = [{"key": "Name", "value": "workers", "propagateAtLaunch": True}]
    common = {"minSize": 1, "maxSize": 2, "vpcZoneIdentifiers": world.subnets, "tags": tags}
    template = world.launch_template
    return [
        {
            **common,
            "name": "shop-control-plane-1",
            "healthCheckType": "EC2",
            "suspendedProcesses": ["AZRebalance"],
            "enabledMetrics": ["GroupDesiredCapacity"],
            "terminationPolicies": ["OldestLaunchTemplate", "OldestInstance"],
            "protectFromScaleIn": True,
            "placementGroup": "shop-spread",
            "launchTemplate": {"id": template, "version": "1"},
        },
        {
            **common,
            "name": "shop-workers",
            "capacityRebalance": True,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 0},
                "launchTemplate": {
                    "launchTemplateSpecification": {"launchTemplateId": template},
                    "overrides": [{"instanceType": "m6i.large"}],
                },
            },
        },
    ]


def _attachment(world: World) -> list[Props]:
    group, arn = world.auto_scaling_group, world.target_group
    return [{"autoscalingGroupName": group, "lbTargetGroupArn": arn}]


def _certificate(world: World) -> list[Props]:
    return [
        {
            "domainName": "*.apps.example.com",
            "subjectAlternativeNames": ["apps.example.com"],
            "validationMethod": "DNS",
            "tags": _tags("apps"),
        },
        {
            "domainName": "mirror.example.com",
            "validationMethod": "EMAIL",
            "validationOptions": [
                {"domainName": "mirror.example.com", "validationDomain": "example.com"}
            ],
        },
        {
            "domainName": "etcd.shop.internal",
            "certificateAuthorityArn": "arn:aws:acm-pca:eu-west-1:123456789012:"
            "certificate-authority/12345678-1234-1234-1234-123456789012",
        },
    ]


def _zone(world: World) -> list[Props]:
    return [
        {"name": "shop.example.com", "comment": "shop", "forceDestroy": True, "tags": _tags("z")},
        {"name": "shop.internal", "vpcs": [{"vpcId": world.vpc}]},
        {"name": "shop.example.net", "delegationSetId": world.delegation_set},
    ]


def _record(world: World) -> list[Props]:
    zone = world.zone
    alias = {"name": "lb-1.elb.amazonaws.com", "zoneId": "Z32O12XQLNTSW2"}
    return [
        {
            "zoneId": zone, "name": "api.example.com", "type": "A", "ttl": 60,
            "records": ["10.0.1.10"], "allowOverwrite": False,
        },
        {
            "zoneId": zone, "name": "ingress.example.com", "type": "A",
            "aliases": [{**alias, "evaluateTargetHealth": False}],
        },
        *_routed_records(zone, world.health_check),
    ]  # fmt: skip


def _routed_records(zone: str, health_check: str) -> list[Props]:
    """One record per routing policy the type reads."""
    routed = {"zoneId": zone, "type": "A", "ttl": 60, "records": ["10.0.1.11"]}
    return [
        {**routed, "name": "weighted.example.com", "setIdentifier": "a",
         "weightedRoutingPolicies": [{"weight": 10}]},
        {**routed, "name": "failover.example.com", "setIdentifier": "b",
         "failoverRoutingPolicies": [{"type": "PRIMARY"}], "healthCheckId": health_check},
        {**routed, "name": "latency.example.com", "setIdentifier": "c",
         "latencyRoutingPolicies": [{"region": "eu-west-1"}]},
        {**routed, "name": "geo.example.com", "setIdentifier": "d",
         "geolocationRoutingPolicies": [{"continent": "EU"}]},
        {**routed, "name": "multi.example.com", "setIdentifier": "e",
         "multivalueAnswerRoutingPolicy": True},
    ]  # fmt: skip


def _role(world: World) -> list[Props]:
    return [
        {
            "name": "shop-nodes",
            "assumeRolePolicy": ASSUME_EC2,
            "description": "nodes",
            "path": "/",
            "maxSessionDuration": 3600,
            "forceDetachPolicies": True,
            "tags": _tags("nodes"),
        },
        {
            "namePrefix": "shop-masters-",
            "assumeRolePolicy": ASSUME_EC2,
            "permissionsBoundary": world.policy,
        },
    ]


def _instance_profile(world: World) -> list[Props]:
    return [
        {"name": "shop-nodes", "role": world.role, "path": "/", "tags": _tags("nodes")},
        {"namePrefix": "shop-masters-", "role": world.role},
    ]


def _role_policy(world: World) -> list[Props]:
    return [
        {"name": "describe", "role": world.role, "policy": DESCRIBE},
        {"namePrefix": "describe-", "role": world.role, "policy": DESCRIBE},
    ]


def _role_policy_attachment(world: World) -> list[Props]:
    return [{"role": world.role, "policyArn": world.policy}]


def _load_balancer(world: World) -> list[Props]:
    return [
        {
            "name": "shop-api",
            "loadBalancerType": "network",
            "internal": True,
            "subnets": world.subnets,
            "securityGroups": [world.group],
            "enableCrossZoneLoadBalancing": True,
            "enableDeletionProtection": False,
            "tags": _tags("api"),
        },
        {
            "name": "shop-web",
            "loadBalancerType": "application",
            "subnets": world.subnets,
            "idleTimeout": 120,
            "enableHttp2": False,
        },
    ]


def _target_group(world: World) -> list[Props]:
    health = {"protocol": "TCP", "port": "traffic-port", "interval": 10,
              "healthyThreshold": 2, "unhealthyThreshold": 2}  # fmt: skip
    return [
        {
            "name": "shop-api-443",
            "port": 443,
            "protocol": "TCP",
            "targetType": "instance",
            "vpcId": world.vpc,
            "deregistrationDelay": 30,
            "proxyProtocolV2": True,
            "connectionTermination": True,
            "healthCheck": health,
            "tags": _tags("api"),
        },
        {
            "name": "shop-web",
            "port": 80,
            "protocol": "HTTP",
            "protocolVersion": "HTTP1",
            "vpcId": world.vpc,
            "ipAddressType": "ipv4",
        },
    ]


def _listener(world: World) -> list[Props]:
    forward = [{"type": "forward", "targetGroupArn": world.target_group}]
    return [
        {
            "loadBalancerArn": world.load_balancer,
            "port": 443,
            "protocol": "TCP",
            "defaultActions": forward,
            "tags": _tags("api-443"),
        },
        {
            "loadBalancerArn": world.load_balancer,
            "port": 8443,
            "protocol": "TLS",
            "certificateArn": world.certificate,
            "sslPolicy": "ELBSecurityPolicy-TLS13-1-2-2021-06",
            "defaultActions": forward,
        },
    ]


SAMPLES: dict[str, Callable[[World], list[Props | Sample]]] = {
    "aws:acm/certificate:Certificate": _certificate,
    "aws:autoscaling/attachment:Attachment": _attachment,
    "aws:autoscaling/group:Group": _group,
    "aws:ebs/volume:Volume": _volume,
    "aws:ec2/eip:Eip": _eip,
    "aws:ec2/internetGateway:InternetGateway": _internet_gateway,
    "aws:ec2/launchTemplate:LaunchTemplate": _launch_template,
    "aws:ec2/natGateway:NatGateway": _nat_gateway,
    "aws:ec2/networkInterface:NetworkInterface": _interface,
    "aws:ec2/peeringConnectionOptions:PeeringConnectionOptions": _peering_options,
    "aws:ec2/route:Route": _route,
    "aws:ec2/routeTable:RouteTable": _route_table,
    "aws:ec2/routeTableAssociation:RouteTableAssociation": _association,
    "aws:ec2/securityGroup:SecurityGroup": _security_group,
    "aws:ec2/subnet:Subnet": _subnet,
    "aws:ec2/subnetCidrReservation:SubnetCidrReservation": _reservation,
    "aws:ec2/vpc:Vpc": _vpc,
    "aws:ec2/vpcPeeringConnection:VpcPeeringConnection": _peering,
    "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter": _accepter,
    "aws:iam/instanceProfile:InstanceProfile": _instance_profile,
    "aws:iam/role:Role": _role,
    "aws:iam/rolePolicy:RolePolicy": _role_policy,
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": _role_policy_attachment,
    "aws:lb/listener:Listener": _listener,
    "aws:lb/loadBalancer:LoadBalancer": _load_balancer,
    "aws:lb/targetGroup:TargetGroup": _target_group,
    "aws:route53/record:Record": _record,
    "aws:route53/zone:Zone": _zone,
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": _rules,
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": _rules,
}


def read_attributes(aws: Aws, world: World, token: str) -> set[str]:
    """The attributes the type's read reported for any of its samples, each made through
    the registered type (check, create) and read back from its outputs."""
    kind = REGISTRY[token]
    req = Request(name="sample", token=token)
    seen: set[str] = set()
    for sample in SAMPLES[token](world):
        if isinstance(sample, dict):
            sample = Sample(sample)
        inputs = kind.check(req, sample.declared)
        id_, outputs = kind.create(aws, req, inputs)
        if sample.afterwards is None:
            assert kind.read(aws, req, id_, outputs) == outputs, f"{token}: read != create"
        else:
            sample.afterwards(id_)
        seen |= set(kind.read(aws, req, id_, outputs))
    return seen
