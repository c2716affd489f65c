"""Graph framework: dtypes, shapes, devices, graphs, registries and resources."""
