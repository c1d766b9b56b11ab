"""ragkit."""
