"""Validated DNS cutover: move a record to a new target only once the target serves.

Both scenarios move traffic by DNS (seed 001: records to the new VPC's load balancers,
the API record from CNAME to an A record and back; seed 000: each service to the
mirror cluster and back). For each record this package reads what the record is now,
checks the new target (target groups healthy, an optional HTTP(S) probe through the
new endpoint), changes the record in one atomic batch (UPSERT, or DELETE + CREATE when
the type changes, or a weighted shift in steps), waits until Route53 reports the
change INSYNC, checks again, and on any failure puts the previous record sets back.

Every state of a record is a set of record sets; each move is the batch turning one
set into the next, and the rollback is the batch turning it back. A record already
in its target state is left alone, so a resumed run changes nothing twice.

``requests`` holds what a caller asks for (a ``RecordCutover`` per record), ``reports``
what it gets back, ``records`` reads and compares record sets and computes the batch
between two states, ``plan`` lists the states a record goes through, and ``cutover``
acts: it checks, sends, waits and rolls back.
"""
