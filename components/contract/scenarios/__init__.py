"""One module per scenario, each defining ``SPEC`` (see :mod:`components.contract.registry`).

A module here holds the scenario's contract between its infrastructure and its
automation: the phase ids, in order, as constants both sides use; the config rules
that apply only to it; the model of the stack outputs its program exports.
"""
