"""The one publisher (any family's publication -> HF layout + build_info + card) and the one audit."""
