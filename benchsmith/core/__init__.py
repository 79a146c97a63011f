"""Shared building blocks: errors, hashing, atomic writes, seeded RNG, params, provenance."""
