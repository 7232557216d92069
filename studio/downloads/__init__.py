"""Downloads on the study pages and the release bundle: they read every app, so they compose
at the top (heart_site)."""
