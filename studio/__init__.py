"""The studio: the study admin's pages across every app (hub, material, pairs, raters)."""
