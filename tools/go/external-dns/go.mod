// Pins external-dns, the DNS controller whose fight with a moved record the
// DNS-writers tests show. scripts/testbin builds it in a copy of the module, under
// external-dns' own go.mod as upstream does (as a dependency of this module its graph
// would have to be resolved whole, and an old module deep in it answers 403 from the
// proxy), with aws_only_provider_factory.go.txt in place of its provider registry.
// v0.21.0 is the newest release Go 1.26 builds (v0.23 needs Go 1.27; a v0.22
// dependency answers 403 too).
module kubeshift.local/tools/external-dns

go 1.26.1

require sigs.k8s.io/external-dns v0.21.0
