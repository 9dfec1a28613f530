"""ComponentResources of a tenant gateway and the pure helpers they use."""
