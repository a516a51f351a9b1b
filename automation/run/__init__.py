"""One run of a scenario: the runner, its journal, the guard, the stack's recorded progress."""
