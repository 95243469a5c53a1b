"""Builders, payloads and served processes the tests share: plain functions and classes, never fixtures
(fixtures live in the conftest.py files) and never tests."""
