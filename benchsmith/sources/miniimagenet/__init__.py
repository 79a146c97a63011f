"""MiniImageNet (Ravi-Larochelle split): reader, parquet converter, miniature sample writer."""
