"""Raw sources: fetch, verify, read, and write miniature copies in the exact real format."""
