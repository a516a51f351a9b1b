// Pins the AWS cloud-controller-manager, whose route controller writes each node's pod
// CIDR route and reports RouteCreated (overlay-switch's routes). scripts/testbin builds
// it with `go install …@version` under its own go.mod. v1.37.0 is the newest release
// that can be: v1.37.1, v1.36.2 and v1.35.3 carry a replace directive (cel-go), which
// `go install` refuses.
module kubeshift.local/tools/cloud-provider-aws

go 1.26.0

require k8s.io/cloud-provider-aws v1.37.0
