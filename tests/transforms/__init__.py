"""Tests of the function transformations (poot/transforms)."""
