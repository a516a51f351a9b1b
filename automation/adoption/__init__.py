"""``kubeshift adopt``: take a cluster another tool built under the program, changing nothing.

:mod:`discovery` runs the program at its first phase under mocks that answer every
registration with the live resource it describes (``automation.aws.lookup``); what it
finds becomes an import file (``components.imports``); :mod:`adopt` previews the
imports with the real engine, lists every attribute where what runs and the stack file
disagree, and only when none do (or the user accepted them) imports through the engine
and checks that the first phase's preview then changes nothing.
"""
