"""Command-line entry points: `tensorweave server | launch | demo | k8s`."""
