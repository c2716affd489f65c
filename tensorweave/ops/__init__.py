"""Graph-construction functions: validate inputs, infer shapes, add nodes (never compute)."""
