"""The official VL-ICL release (ys-zong/VL-ICL): its layout, a sample miniature, link and check."""
