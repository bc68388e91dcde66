"""Test-wide settings: hypothesis runs derandomised (the same examples on every run and machine, no example
database), so a property test fails on a fresh clone exactly when it fails here: a flaky test is a defect."""

from hypothesis import settings

settings.register_profile("derandomised", derandomize=True, database=None, deadline=None, print_blob=True)
settings.load_profile("derandomised")
