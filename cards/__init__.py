"""Dataset card templates, one per published family (installed as ``benchsmith.cards``)."""
