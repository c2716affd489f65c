"""Distributed runtime: cluster specs, servers, master and worker services."""
