"""Builders compose sources and stages into the configs and splits of one benchmark family."""
