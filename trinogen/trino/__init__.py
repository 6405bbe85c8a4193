"""What trinogen knows about Trino itself (the property registry per Trino version)."""
