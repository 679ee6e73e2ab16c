"""Helpers shared by the test modules: paths, workflow runs, small decks and boards."""
