"""The studio's quality-checks page: each check with its pass rate, the admin's edits, and
the bot table that the study's gates are held to (annotation/bots.py)."""
