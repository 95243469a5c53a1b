"""The service's vocabulary, limits and pure input rules.

Schemas, models and services all read these; this package imports nothing of the project, so any
layer can use it without a loop (tests/test_architecture.py holds that).
"""
