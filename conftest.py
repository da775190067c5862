"""Loaded by pytest first, from the repository root, which puts the root on the import path
(pytest's rule for a rootdir conftest): the tests import the tools as the package `tools`."""
