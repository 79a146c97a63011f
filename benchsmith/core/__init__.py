"""The ground floor: errors, hashing, atomic writes, seeded RNG, params, progress, JSON input,
records (provenance), explicit registries and the one LLM client. Imports nothing above it."""
