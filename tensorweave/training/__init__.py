"""Training utilities: optimizers, savers, session hooks and the summary writer."""
