"""A COGS-style English fragment mapped to neo-Davidsonian logical forms."""
