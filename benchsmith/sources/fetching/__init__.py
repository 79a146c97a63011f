"""Getting raw sources onto disk safely: resumable downloads, lock files, checked extraction."""
