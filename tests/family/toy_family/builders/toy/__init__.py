"""Toy: the smallest family, for the test that adding a family touches only its folder."""
