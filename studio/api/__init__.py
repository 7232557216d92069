"""The REST API under /api/ for study admins: it reads every app, so it lives at the top."""
