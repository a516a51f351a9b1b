"""Offline review: the program rendered under mocks, diffs between phases, Markdown."""
