"""Test utilities: gradient checking, GradientCase, and helpers for tests."""
